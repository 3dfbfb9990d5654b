// The read floor's arithmetic, host-side: the sizes it is measured at, interpolation against an
// affine floor (launch + bytes over a rate, exact for a line), the JSON it is read back from, and
// the `achieved` block the runners write.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/read_floor.hpp"
#include "kernels/tuning/read_floor_args.hpp"

namespace decode_bench {
namespace {

constexpr double kMiB = 1048576.0;

// A floor of 3 us plus bytes at 3000 GB/s.
double affine_us(double bytes) { return 3.0 + bytes / 3000e3; }

std::vector<ReadFloorSample> affine_samples(std::vector<double> mib) {
  std::vector<ReadFloorSample> s;
  for (double m : mib) s.push_back({m * kMiB, affine_us(m * kMiB)});
  return s;
}

nlohmann::json ceilings_with_floor(const std::vector<ReadFloorSample>& samples) {
  nlohmann::json floor_samples = nlohmann::json::array();
  for (const auto& s : samples) floor_samples.push_back({{"bytes", s.bytes}, {"median_us", s.median_us}, {"kernel", "read_kernel"}});
  return {{"dram_read",
           {{"value", 3000.0}, {"unit", "GB/s"}, {"floor", {{"mode", "cold"}, {"statistic", "median_us"}, {"samples", floor_samples}}}}}};
}

TEST(ReadFloor, SizesArePowersOfTwoFromOneMiBCappedAtOneGiB) {
  EXPECT_TRUE(read_floor_sizes(1048575).empty());
  EXPECT_EQ(read_floor_sizes(1 << 20), (std::vector<std::uint64_t>{1 << 20}));
  const auto three = read_floor_sizes(3u << 20);  // 1, 2 MiB, then the buffer's own size
  EXPECT_EQ(three, (std::vector<std::uint64_t>{1u << 20, 2u << 20, 3u << 20}));
  const auto big = read_floor_sizes(std::uint64_t{2} << 30);
  ASSERT_EQ(big.size(), 11u);  // 1 MiB .. 1 GiB
  EXPECT_EQ(big.front(), 1u << 20);
  EXPECT_EQ(big.back(), std::uint64_t{1} << 30);
}

TEST(ReadFloor, InterpolationIsExactOnAnAffineFloorInsideAndOutsideTheSamples) {
  const auto samples = affine_samples({32, 1, 8, 256, 2});  // any order
  for (double mib : {1.0, 1.5, 5.0, 33.5, 128.0, 256.0, 0.25, 1024.0}) {
    const auto got = read_floor_us(samples, mib * kMiB);
    ASSERT_TRUE(got.has_value()) << mib;
    EXPECT_NEAR(*got, affine_us(mib * kMiB), 1e-9) << mib << " MiB";
  }
}

TEST(ReadFloor, BetweenMeasuredSizesTheFloorLiesBetweenTheirTimes) {
  // Measured floors are not lines below a few MiB; interpolation still stays between neighbours.
  const std::vector<ReadFloorSample> s = {{1 * kMiB, 5.0}, {2 * kMiB, 5.2}, {4 * kMiB, 6.1}, {8 * kMiB, 7.9}};
  for (double mib = 1.0; mib <= 8.0; mib += 0.25) {
    const double t = *read_floor_us(s, mib * kMiB);
    EXPECT_GE(t, 5.0 - 1e-12) << mib;
    EXPECT_LE(t, 7.9 + 1e-12) << mib;
  }
  EXPECT_DOUBLE_EQ(*read_floor_us(s, 3 * kMiB), 5.65);
  EXPECT_GE(*read_floor_us({{{1 * kMiB, 5.0}, {2 * kMiB, 20.0}}}, 1.0), 0.0);  // never below zero
}

TEST(ReadFloor, TooFewSamplesOrNoBytesGiveNoFloor) {
  EXPECT_FALSE(read_floor_us({}, kMiB).has_value());
  EXPECT_FALSE(read_floor_us(affine_samples({4}), kMiB).has_value());
  EXPECT_FALSE(read_floor_us(affine_samples({4, 4}), kMiB).has_value());  // one distinct size
  EXPECT_FALSE(read_floor_us(affine_samples({1, 4}), 0).has_value());
  EXPECT_FALSE(read_floor_us(affine_samples({1, 4}), -5).has_value());
}

TEST(ReadFloor, SamplesComeBackFromTheCeilingsBlockAndBadEntriesAreNamed) {
  const auto samples = affine_samples({1, 2, 4});
  const auto back = read_floor_samples(ceilings_with_floor(samples));
  ASSERT_EQ(back.size(), 3u);
  EXPECT_DOUBLE_EQ(back[2].bytes, 4 * kMiB);
  EXPECT_DOUBLE_EQ(back[2].median_us, samples[2].median_us);
  EXPECT_TRUE(read_floor_samples(nlohmann::json::object()).empty());
  EXPECT_TRUE(read_floor_samples({{"dram_read", {{"value", 1.0}}}}).empty());

  nlohmann::json bad = ceilings_with_floor(samples);
  bad["dram_read"]["floor"]["samples"][1]["median_us"] = -1.0;
  try {
    read_floor_samples(bad);
    FAIL() << "a negative median was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("ceilings.dram_read.floor.samples[1].median_us"), std::string::npos) << e.what();
  }
  bad["dram_read"]["floor"] = {{"samples", "none"}};
  EXPECT_THROW(read_floor_samples(bad), std::invalid_argument);
}

TEST(ReadFloor, AchievedRatesAddTheFloorToColdPointsOnly) {
  const nlohmann::json ceilings = ceilings_with_floor(affine_samples({1, 64, 512}));
  const double bytes = 128 * kMiB, median = 60.0;
  const nlohmann::json cold = achieved_rates(bytes, 2e9, median, ceilings, TimingMode::cold);
  EXPECT_DOUBLE_EQ(cold["gbps"].get<double>(), bytes / (median * 1e3));
  EXPECT_DOUBLE_EQ(cold["tflops"].get<double>(), 2e9 / (median * 1e6));
  EXPECT_DOUBLE_EQ(cold["fraction_of_dram_read"].get<double>(), bytes / (median * 1e3) / 3000.0);
  EXPECT_NEAR(cold["read_floor_us"].get<double>(), affine_us(bytes), 1e-9);
  EXPECT_NEAR(cold["fraction_of_read_floor"].get<double>(), affine_us(bytes) / median, 1e-12);

  const nlohmann::json hot = achieved_rates(bytes, 2e9, median, ceilings, TimingMode::hot);
  EXPECT_FALSE(hot.contains("read_floor_us"));  // the floor is a cold measurement
  EXPECT_TRUE(hot.contains("fraction_of_dram_read"));
  const nlohmann::json none = achieved_rates(bytes, 2e9, median, nlohmann::json::object(), TimingMode::cold);
  EXPECT_FALSE(none.contains("fraction_of_dram_read"));
  EXPECT_FALSE(none.contains("read_floor_us"));
}

// decode-read-floor's sizes: MiB in [1/16, 2048], rounded down to 64 KiB; the first bad one named.
TEST(ReadFloor, ProbeSizesParseRoundAndNameTheFirstBadOne) {
  std::vector<std::uint64_t> sizes;
  char prog[] = "decode-read-floor";
  {
    char* argv[] = {prog};
    EXPECT_EQ(parse_read_floor_sizes(1, argv, &sizes), nullptr);
    EXPECT_EQ(sizes, (std::vector<std::uint64_t>{32u << 20, 128u << 20, 256u << 20}));
  }
  {
    char a[] = "34.05", b[] = "0.0625", c[] = "2048";
    char* argv[] = {prog, a, b, c};
    EXPECT_EQ(parse_read_floor_sizes(4, argv, &sizes), nullptr);
    // 34.05 MiB = 35704012.8 bytes, down to 544 x 64 KiB.
    EXPECT_EQ(sizes, (std::vector<std::uint64_t>{544u * 65536, 65536, std::uint64_t{2048} << 20}));
  }
  for (const char* bad : {"abc", "0", "-1", "2049", "0.01", "32x", "", "nan"}) {
    std::string text = bad;
    char ok[] = "32";
    char* argv[] = {prog, ok, text.data()};
    const char* got = parse_read_floor_sizes(3, argv, &sizes);
    ASSERT_NE(got, nullptr) << "accepted '" << bad << "'";
    EXPECT_STREQ(got, bad);
  }
}

}  // namespace
}  // namespace decode_bench
