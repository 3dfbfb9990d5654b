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

}  // namespace
}  // namespace decode_bench
