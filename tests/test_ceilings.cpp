// Ceiling bookkeeping, host-side: units, rates, best-of selection, the table.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/ceilings.hpp"

namespace decode_bench {
namespace {

CeilingMeasurement measured(std::string ceiling, double work, double min_us, double median_us, long long unroll) {
  CeilingMeasurement m;
  m.ceiling = std::move(ceiling);
  m.kernel = "read_kernel";
  m.config = {{"unroll", unroll}};
  m.work_per_launch = work;
  m.min_us = min_us;
  m.median_us = median_us;
  return m;
}

TEST(Ceilings, UnitsAndRates) {
  EXPECT_EQ(ceiling_unit("dram_read"), "GB/s");
  EXPECT_EQ(ceiling_unit("l1_shared"), "GB/s");
  EXPECT_EQ(ceiling_unit("fp16_tensor"), "TFLOP/s");
  EXPECT_THROW(ceiling_unit("dram_write"), std::invalid_argument);
  EXPECT_DOUBLE_EQ(ceiling_rate("dram_read", 1e9, 1e3), 1000);   // 1 GB in 1 ms = 1000 GB/s
  EXPECT_DOUBLE_EQ(ceiling_rate("fp32_fma", 6e10, 1e3), 60);     // 60 GFLOP in 1 ms = 60 TFLOP/s
  EXPECT_THROW(ceiling_rate("fp32_fma", 1, 0), std::invalid_argument);
  EXPECT_EQ(ceiling_unit("bf16_tensor_wgmma"), "TFLOP/s");
  EXPECT_EQ(ceiling_unit("fp8_e4m3_tensor_wgmma"), "TFLOP/s");
  for (auto name : kCeilingNames) EXPECT_NO_THROW(ceiling_unit(name)) << name;
  EXPECT_EQ(std::size(kCeilingNames), 10u);
}

TEST(Ceilings, BestVariantAtItsBestRepetitionWins) {
  std::vector<CeilingMeasurement> m = {measured("dram_read", 2e9, 1000, 1010, 1),   // 2000 GB/s
                                       measured("dram_read", 2e9, 800, 850, 4),     // 2500 GB/s: best
                                       measured("dram_read", 2e9, 900, 900, 2)};
  CeilingMeasurement failed = measured("dram_read", 2e9, 1, 1, 8);  // would win if it counted
  failed.error = "cudaErrorInvalidValue";
  m.push_back(failed);
  m.push_back(measured("fp32_fma", 6e10, 1000, 1000, 1));
  CeilingMeasurement only_failure = measured("l2_read", 1e9, 1, 1, 1);
  only_failure.error = "cudaErrorLaunchOutOfResources";
  m.push_back(only_failure);

  const nlohmann::json c = best_ceilings(m);
  ASSERT_TRUE(c.contains("dram_read"));
  EXPECT_DOUBLE_EQ(c["dram_read"]["value"].get<double>(), 2500);
  EXPECT_NEAR(c["dram_read"]["value_at_median"].get<double>(), 2e9 / 850 / 1e3, 1e-9);
  EXPECT_EQ(c["dram_read"]["unit"], "GB/s");
  EXPECT_EQ(c["dram_read"]["kernel"], "read_kernel");
  EXPECT_EQ(c["dram_read"]["config"]["unroll"], 4);
  EXPECT_EQ(c["dram_read"]["variants"].size(), 4u);
  EXPECT_EQ(c["dram_read"]["variants"][3]["error"], "cudaErrorInvalidValue");
  EXPECT_DOUBLE_EQ(c["fp32_fma"]["value"].get<double>(), 60);
  EXPECT_EQ(c["fp32_fma"]["unit"], "TFLOP/s");
  EXPECT_FALSE(c.contains("l2_read"));  // no successful variant: no ceiling, never a made-up one
  EXPECT_FALSE(c.contains("fp16_fma"));
}

// A refused variant (wgmma off sm_90a) is recorded like a failed one: listed with its reason, never
// a ceiling.
TEST(Ceilings, RefusedVariantsAreListedWithTheirReasonAndMakeNoCeiling) {
  CeilingMeasurement refused = measured("bf16_tensor_wgmma", 1e12, 0, 0, 1);
  refused.error = "refused: warpgroup MMA needs sm_90a code";
  const nlohmann::json c = best_ceilings({refused, measured("fp16_tensor", 6e11, 1000, 1000, 1)});
  EXPECT_FALSE(c.contains("bf16_tensor_wgmma"));
  EXPECT_DOUBLE_EQ(c["fp16_tensor"]["value"].get<double>(), 600);
}

TEST(Ceilings, TableShowsEveryCeilingAndDramEfficiency) {
  const nlohmann::json c = best_ceilings({measured("dram_read", 3e9, 1000, 1000, 4)});  // 3000 GB/s
  const std::string table = format_ceilings_table(c, {{"theoretical_dram_gbps", 4000.0}});
  EXPECT_NE(table.find("3000.0"), std::string::npos) << table;
  EXPECT_NE(table.find("75.0% of theoretical 4000 GB/s"), std::string::npos) << table;
  EXPECT_NE(table.find("unroll=4"), std::string::npos) << table;
  for (auto name : kCeilingNames) EXPECT_NE(table.find(name), std::string::npos) << name;
  EXPECT_NE(table.find("not measured"), std::string::npos) << table;
  EXPECT_EQ(table.find("read floor"), std::string::npos) << "no floor measured, none printed:\n" << table;
}

TEST(Ceilings, TablePrintsTheReadFloorALinePerSize) {
  nlohmann::json c = best_ceilings({measured("dram_read", 3e9, 1000, 1000, 4)});  // 3000 GB/s
  // 32 MiB in 14 us: 2396.7 GB/s, 0.799 of the ceiling.
  c["dram_read"]["floor"] = {{"mode", "cold"},
                             {"statistic", "median_us"},
                             {"samples", {{{"bytes", 1048576}, {"median_us", 4.0}}, {{"bytes", 33554432}, {"median_us", 14.0}}}}};
  const std::string table = format_ceilings_table(c, nlohmann::json::object());
  EXPECT_NE(table.find("read floor      32.0 MiB     14.00 us cold median   2396.7 GB/s  0.799 of the ceiling"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("read floor       1.0 MiB      4.00 us"), std::string::npos) << table;
}

}  // namespace
}  // namespace decode_bench
