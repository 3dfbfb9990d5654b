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
  const nlohmann::json b = shared_prefix_bound(bytes, rows, 32, 128, DType::fp16, ceilings(true), TimingMode::cold);
  EXPECT_DOUBLE_EQ(b["prefix_flops"].get<double>(), 4.0 * rows * 32 * 128);
  EXPECT_DOUBLE_EQ(b["memory_us"].get<double>(), 100.0);  // 300 MB at 3000 GB/s
  EXPECT_DOUBLE_EQ(b["compute_us"].get<double>(), 4.0 * rows * 32 * 128 / 600e6);
  EXPECT_EQ(b["tensor_roof"], "fp16_tensor");  // the only tensor roof measured
  EXPECT_DOUBLE_EQ(b["tensor_tflops"].get<double>(), 600.0);
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
  const nlohmann::json b = shared_prefix_bound(10e6, rows, 32, 128, DType::fp16, ceilings(true), TimingMode::cold);
  const double compute = 4.0 * rows * 32 * 128 / 600e6;
  EXPECT_DOUBLE_EQ(b["bound_us"].get<double>(), compute);
  EXPECT_DOUBLE_EQ(b["floor_bound_us"].get<double>(), compute);
  EXPECT_LT(b["memory_floor_us"].get<double>(), compute);
}

TEST(SharedPrefixBound, NoFloorBoundHotOrWithoutAFloorAndNoBoundWithoutBothCeilings) {
  const nlohmann::json hot = shared_prefix_bound(300e6, 1024, 32, 128, DType::fp16, ceilings(true), TimingMode::hot);
  EXPECT_TRUE(hot.contains("bound_us"));
  EXPECT_FALSE(hot.contains("floor_bound_us"));  // the floor is a cold measurement
  const nlohmann::json bare = shared_prefix_bound(300e6, 1024, 32, 128, DType::fp16, ceilings(false), TimingMode::cold);
  EXPECT_TRUE(bare.contains("bound_us"));
  EXPECT_FALSE(bare.contains("memory_floor_us"));
  const nlohmann::json no_tensor =
      shared_prefix_bound(300e6, 1024, 32, 128, DType::fp16, {{"dram_read", ceilings(true)["dram_read"]}}, TimingMode::cold);
  EXPECT_TRUE(no_tensor.contains("memory_us"));
  EXPECT_FALSE(no_tensor.contains("bound_us"));
  EXPECT_FALSE(no_tensor.contains("floor_bound_us"));
  nlohmann::json untimed = bare;
  add_bound_ratios(untimed, 10.0);
  EXPECT_FALSE(untimed.contains("median_over_floor_bound"));
  EXPECT_DOUBLE_EQ(untimed["median_over_bound"].get<double>(), 10.0 / 100.0);
}

// With warpgroup-MMA roofs measured the compute time is over the highest roof of the K/V type's
// MMA operands, and the JSON names it: FP16 (and FP8, widened to FP16) take fp16_tensor_wgmma,
// BF16 takes bf16_tensor_wgmma, never the other 16-bit type's wgmma roof.
TEST(SharedPrefixBound, ComputeTimeIsOverTheHighestMatchingTensorRoof) {
  nlohmann::json c = ceilings(false);
  c["fp16_tensor_wgmma"] = {{"value", 750.0}, {"unit", "TFLOP/s"}};
  c["bf16_tensor_wgmma"] = {{"value", 800.0}, {"unit", "TFLOP/s"}};
  const double rows = 32768.0 * 1024, flops = 4.0 * rows * 32 * 128;
  for (const DType kv : {DType::fp16, DType::fp8_e4m3, DType::fp8_e5m2}) {
    const nlohmann::json b = shared_prefix_bound(10e6, rows, 32, 128, kv, c, TimingMode::hot);
    EXPECT_EQ(b["tensor_roof"], "fp16_tensor_wgmma") << dtype_name(kv);
    EXPECT_DOUBLE_EQ(b["compute_us"].get<double>(), flops / 750e6) << dtype_name(kv);
  }
  const nlohmann::json bf16 = shared_prefix_bound(10e6, rows, 32, 128, DType::bf16, c, TimingMode::hot);
  EXPECT_EQ(bf16["tensor_roof"], "bf16_tensor_wgmma");
  EXPECT_DOUBLE_EQ(bf16["bound_us"].get<double>(), flops / 800e6);
  // A wgmma roof below mma.sync's (a slow run) loses to it.
  c["fp16_tensor_wgmma"]["value"] = 500.0;
  EXPECT_EQ(shared_prefix_bound(10e6, rows, 32, 128, DType::fp16, c, TimingMode::hot)["tensor_roof"], "fp16_tensor");
}

}  // namespace
}  // namespace decode_bench::sweeps
