// The shared-prefix bound, host-side: closed forms for a memory-bound and a compute-bound point,
// the floor bound only for cold points with a floor, and the ratios to the median.
#include <gtest/gtest.h>

#include "sweeps/shared_prefix_bound.hpp"

namespace decode_bench::sweeps {
namespace {

constexpr double kMiB = 1048576.0;

// dram_read 3000 GB/s, fp16_tensor 600 TFLOP/s, a floor of 4 us + bytes at 2500 GB/s (1 and 1024 MiB).
nlohmann::json ceilings(bool with_floor) {
  nlohmann::json c = {{"dram_read", {{"value", 3000.0}, {"unit", "GB/s"}}}, {"fp16_tensor", {{"value", 600.0}, {"unit", "TFLOP/s"}}}};
  if (with_floor)
    c["dram_read"]["floor"] = {{"mode", "cold"},
                               {"statistic", "median_us"},
                               {"samples", {{{"bytes", kMiB}, {"median_us", 4.0 + kMiB / 2500e3}},
                                            {{"bytes", 1024 * kMiB}, {"median_us", 4.0 + 1024 * kMiB / 2500e3}}}}};
  return c;
}

TEST(SharedPrefixBound, MemoryBoundPointIsBytesOverTheCeilingAndTheFloorAtTheBytes) {
  // 300 MB unique K/V; prefix 1024 tokens x 64 sequences, 32 heads x d 128: 1.07 GFLOP, 1.8 us.
  const double bytes = 300e6, rows = 1024.0 * 64;
  const nlohmann::json b = shared_prefix_bound(bytes, rows, 32, 128, ceilings(true), TimingMode::cold);
  EXPECT_DOUBLE_EQ(b["prefix_flops"].get<double>(), 4.0 * rows * 32 * 128);
  EXPECT_DOUBLE_EQ(b["memory_us"].get<double>(), 100.0);  // 300 MB at 3000 GB/s
  EXPECT_DOUBLE_EQ(b["compute_us"].get<double>(), 4.0 * rows * 32 * 128 / 600e6);
  EXPECT_DOUBLE_EQ(b["bound_us"].get<double>(), 100.0);
  EXPECT_NEAR(b["memory_floor_us"].get<double>(), 4.0 + bytes / 2500e3, 1e-9);  // 124 us: on the floor's line
  EXPECT_NEAR(b["floor_bound_us"].get<double>(), 124.0, 1e-9);

  nlohmann::json timed = b;
  add_bound_ratios(timed, 155.0);
  EXPECT_DOUBLE_EQ(timed["median_over_bound"].get<double>(), 1.55);
  EXPECT_NEAR(timed["median_over_floor_bound"].get<double>(), 155.0 / 124.0, 1e-12);
}

TEST(SharedPrefixBound, ComputeBoundPointKeepsTheFlopsTimeUnderEitherBound) {
  // 10 MB unique; 32K-token prefix shared by 1024 sequences at 32 x 128: 550 GFLOP, 916 us.
  const double rows = 32768.0 * 1024;
  const nlohmann::json b = shared_prefix_bound(10e6, rows, 32, 128, ceilings(true), TimingMode::cold);
  const double compute = 4.0 * rows * 32 * 128 / 600e6;
  EXPECT_DOUBLE_EQ(b["bound_us"].get<double>(), compute);
  EXPECT_DOUBLE_EQ(b["floor_bound_us"].get<double>(), compute);
  EXPECT_LT(b["memory_floor_us"].get<double>(), compute);
}

TEST(SharedPrefixBound, NoFloorBoundHotOrWithoutAFloorAndNoBoundWithoutBothCeilings) {
  const nlohmann::json hot = shared_prefix_bound(300e6, 1024, 32, 128, ceilings(true), TimingMode::hot);
  EXPECT_TRUE(hot.contains("bound_us"));
  EXPECT_FALSE(hot.contains("floor_bound_us"));  // the floor is a cold measurement
  const nlohmann::json bare = shared_prefix_bound(300e6, 1024, 32, 128, ceilings(false), TimingMode::cold);
  EXPECT_TRUE(bare.contains("bound_us"));
  EXPECT_FALSE(bare.contains("memory_floor_us"));
  const nlohmann::json no_tensor =
      shared_prefix_bound(300e6, 1024, 32, 128, {{"dram_read", ceilings(true)["dram_read"]}}, TimingMode::cold);
  EXPECT_TRUE(no_tensor.contains("memory_us"));
  EXPECT_FALSE(no_tensor.contains("bound_us"));
  EXPECT_FALSE(no_tensor.contains("floor_bound_us"));
  nlohmann::json untimed = bare;
  add_bound_ratios(untimed, 10.0);
  EXPECT_FALSE(untimed.contains("median_over_floor_bound"));
  EXPECT_DOUBLE_EQ(untimed["median_over_bound"].get<double>(), 10.0 / 100.0);
}

}  // namespace
}  // namespace decode_bench::sweeps
