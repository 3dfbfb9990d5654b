// Sample statistics against closed forms, and the noise flag at its threshold.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "harness/statistics.hpp"

namespace decode_bench {
namespace {

TEST(Statistics, OddCountClosedForms) {
  const std::vector<double> x = {5, 1, 4, 2, 3};
  const SampleStats s = summarize(x);
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(2.5));  // sum of squares 10 over n - 1 = 4
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(2.5) / 3);
}

TEST(Statistics, EvenCountMedianIsTheMeanOfTheMiddleTwo) {
  const std::vector<double> x = {10, 1, 4, 2};
  const SampleStats s = summarize(x);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mean, 4.25);
}

TEST(Statistics, OneSampleHasNoSpread) {
  const std::vector<double> x = {7.5};
  const SampleStats s = summarize(x, 0.0);
  EXPECT_DOUBLE_EQ(s.median, 7.5);
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.cv, 0);
  EXPECT_FALSE(s.noisy);  // 0 > 0 is false: a single sample is not noise
}

TEST(Statistics, NoiseFlagComparesCvToTheThreshold) {
  // mean 100.6, sum of squares 1.44 + 5.76 = 7.2, variance 1.8, cv = sqrt(1.8) / 100.6 ~ 0.0133
  const std::vector<double> x = {100, 100, 100, 100, 103};
  const double cv = std::sqrt(1.8) / 100.6;
  EXPECT_NEAR(summarize(x, 0.03).cv, cv, 1e-12);
  EXPECT_FALSE(summarize(x, 0.03).noisy);
  EXPECT_TRUE(summarize(x, 0.01).noisy);
  EXPECT_FALSE(summarize(x, cv + 1e-12).noisy);
  EXPECT_TRUE(summarize(x, cv - 1e-12).noisy);
  EXPECT_EQ(kDefaultNoiseCv, 0.03);
}

TEST(Statistics, OrderDoesNotMatterAndLargeOffsetsKeepPrecision) {
  std::vector<double> x;
  for (int i = 1; i <= 9; ++i) x.push_back(1e9 + i);  // stddev of 1..9 is sqrt(7.5)
  const SampleStats a = summarize(x);
  std::shuffle(x.begin(), x.end(), std::mt19937(42));
  const SampleStats b = summarize(x);
  EXPECT_DOUBLE_EQ(a.median, b.median);
  EXPECT_DOUBLE_EQ(a.median, 1e9 + 5);
  EXPECT_NEAR(a.stddev, std::sqrt(7.5), 1e-6);
  EXPECT_DOUBLE_EQ(a.stddev, b.stddev);
}

TEST(Statistics, ImpossibleSamplesAreRejectedWithTheIndex) {
  EXPECT_THROW(summarize(std::vector<double>{}), std::invalid_argument);
  try {
    summarize(std::vector<double>{1, std::numeric_limits<double>::quiet_NaN()});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("sample 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(summarize(std::vector<double>{-1}), std::invalid_argument);
  EXPECT_THROW(summarize(std::vector<double>{1}, -0.1), std::invalid_argument);
}

TEST(Statistics, MedianOfClosedForms) {
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median_of(std::vector<double>{7}), 7);
  EXPECT_THROW(median_of(std::vector<double>{}), std::invalid_argument);
}

TEST(Bootstrap, ConstantSamplesGiveAPointInterval) {
  const std::vector<double> a(8, 10.0), b(5, 25.0);
  const RatioInterval r = bootstrap_median_ratio(a, b);
  EXPECT_DOUBLE_EQ(r.ratio, 2.5);
  EXPECT_DOUBLE_EQ(r.lo, 2.5);
  EXPECT_DOUBLE_EQ(r.hi, 2.5);
}

TEST(Bootstrap, ScaledSamplesHaveTheScaleAsRatioInsideTheInterval) {
  const std::vector<double> a = {10.1, 9.8, 10.4, 10.0, 9.9, 10.2, 10.3};
  std::vector<double> b;
  for (double x : a) b.push_back(1.1 * x);
  const RatioInterval r = bootstrap_median_ratio(a, b);
  EXPECT_NEAR(r.ratio, 1.1, 1e-12);
  EXPECT_LE(r.lo, r.ratio);
  EXPECT_GE(r.hi, r.ratio);
  // The interval is bounded by the extreme ratios of resampled medians.
  EXPECT_GE(r.lo, 1.1 * 9.8 / 10.4 - 1e-12);
  EXPECT_LE(r.hi, 1.1 * 10.4 / 9.8 + 1e-12);
}

TEST(Bootstrap, SameSeedSameIntervalOtherSeedOtherDraws) {
  const std::vector<double> a = {1.0, 1.3, 0.9, 1.1, 1.2, 0.95}, b = {1.05, 1.2, 1.0, 0.9, 1.4, 1.1};
  const RatioInterval r1 = bootstrap_median_ratio(a, b, 0.95, 500, 7);
  const RatioInterval r2 = bootstrap_median_ratio(a, b, 0.95, 500, 7);
  EXPECT_EQ(r1.lo, r2.lo);
  EXPECT_EQ(r1.hi, r2.hi);
  const RatioInterval wide = bootstrap_median_ratio(a, b, 0.99, 500, 7);
  const RatioInterval narrow = bootstrap_median_ratio(a, b, 0.5, 500, 7);
  EXPECT_LE(wide.lo, narrow.lo);  // same draws: a higher confidence only widens the quantiles
  EXPECT_GE(wide.hi, narrow.hi);
}

// Statistical properties over many simulated run pairs (fixed std::mt19937 seeds; the margins
// are wide enough for any standard library's normal distribution).
TEST(Bootstrap, CoversNoChangeAndSeparatesATenPercentShift) {
  std::mt19937 gen(123);
  std::normal_distribution<double> noise(1.0, 0.01);  // 1% run-to-run noise
  const auto draw = [&](double scale) {
    std::vector<double> v(10);
    for (auto& x : v) x = scale * noise(gen);
    return v;
  };
  int covers_one = 0, excludes_one = 0;
  const int trials = 200;
  for (int i = 0; i < trials; ++i) {
    const auto a = draw(1.0), same = draw(1.0), slower = draw(1.1);
    const RatioInterval n = bootstrap_median_ratio(a, same, 0.95, 500, static_cast<std::uint64_t>(i));
    covers_one += n.lo <= 1 && 1 <= n.hi;
    const RatioInterval s = bootstrap_median_ratio(a, slower, 0.95, 500, static_cast<std::uint64_t>(i));
    excludes_one += s.lo > 1;
  }
  EXPECT_GE(covers_one, trials * 85 / 100);  // nominal 95%; the percentile bootstrap of a median of 10 is approximate
  EXPECT_EQ(excludes_one, trials);
}

TEST(Bootstrap, RejectsBadArguments) {
  const std::vector<double> a = {1, 2}, empty, zero = {0, 0};
  EXPECT_THROW(bootstrap_median_ratio(empty, a), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(a, empty), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(zero, a), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(a, a, 1.0), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio(a, a, 0.95, 10), std::invalid_argument);
}

// --- several runs a side ---

TEST(BootstrapOfRuns, ConstantRunsGiveTheRatioOfThePooledMedians) {
  const std::vector<std::vector<double>> a = {{10, 10}, {10, 10, 10}}, b = {{20}, {20, 20}};
  const RatioInterval r = bootstrap_median_ratio_of_runs(a, b);
  EXPECT_DOUBLE_EQ(r.ratio, 2.0);
  EXPECT_DOUBLE_EQ(r.lo, 2.0);
  EXPECT_DOUBLE_EQ(r.hi, 2.0);
  // Two runs of A apart: the pooled median lies between them, and so does every resample's.
  const std::vector<std::vector<double>> apart = {{10, 10, 10}, {12, 12, 12}}, c = {{11, 11, 11}};
  const RatioInterval q = bootstrap_median_ratio_of_runs(apart, c, 0.95, 500, 3);
  EXPECT_DOUBLE_EQ(q.ratio, 1.0);
  EXPECT_GE(q.lo, 11.0 / 12 - 1e-12);
  EXPECT_LE(q.hi, 11.0 / 10 + 1e-12);
  EXPECT_LT(q.lo, 1.0);  // the runs' offset shows in the interval
  EXPECT_GT(q.hi, 1.0);
}

// Runs of one build whose buffers land elsewhere each time: every run is offset by its own
// factor (3% spread) and its samples carry 1% noise around it. One run a side cannot see the
// offsets, so its interval misses "no change" most of the time; four runs a side cover it, and
// still separate a 10% shift.
TEST(BootstrapOfRuns, CoversTheOffsetsBetweenRunsThatOneRunsSamplesCannot) {
  std::mt19937 gen(321);
  std::normal_distribution<double> offset(1.0, 0.03), noise(1.0, 0.01);
  const auto run = [&](double scale) {
    const double o = scale * offset(gen);
    std::vector<double> v(5);
    for (auto& x : v) x = o * noise(gen);
    return v;
  };
  const auto runs = [&](double scale) {
    std::vector<std::vector<double>> r;
    for (int i = 0; i < 4; ++i) r.push_back(run(scale));
    return r;
  };
  int runs_cover = 0, single_covers = 0, shift_found = 0;
  const int trials = 200;
  for (int i = 0; i < trials; ++i) {
    const auto a = runs(1.0), same = runs(1.0), slower = runs(1.1);
    const auto seed = static_cast<std::uint64_t>(i);
    const RatioInterval n = bootstrap_median_ratio_of_runs(a, same, 0.95, 500, seed);
    runs_cover += n.lo <= 1 && 1 <= n.hi;
    const RatioInterval one = bootstrap_median_ratio(a[0], same[0], 0.95, 500, seed);
    single_covers += one.lo <= 1 && 1 <= one.hi;
    shift_found += bootstrap_median_ratio_of_runs(a, slower, 0.95, 500, seed).lo > 1;
  }
  EXPECT_GE(runs_cover, trials * 80 / 100);
  EXPECT_LE(single_covers, trials * 50 / 100);
  EXPECT_GE(shift_found, trials * 90 / 100);
}

TEST(BootstrapOfRuns, RejectsBadArguments) {
  const std::vector<std::vector<double>> a = {{1, 2}}, none, empty_run = {{1, 2}, {}}, zero = {{0, 0}};
  EXPECT_THROW(bootstrap_median_ratio_of_runs(none, a), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio_of_runs(a, none), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio_of_runs(empty_run, a), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio_of_runs(a, empty_run), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio_of_runs(zero, a), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio_of_runs(a, a, 0.0), std::invalid_argument);
  EXPECT_THROW(bootstrap_median_ratio_of_runs(a, a, 0.95, 99), std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench
