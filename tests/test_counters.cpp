// Host-side counter logic: the metric table, derived quantities against closed forms, combining
// per-kernel ranges, and the profiler's "unavailable" path (no GPU here, or no permission).
#include <cmath>
#include <map>
#include <string>
#include <variant>

#include <cupti_result.h>
#include <gtest/gtest.h>

#include "harness/counters/cupti_status.hpp"
#include "harness/counters/derived_metrics.hpp"
#include "harness/counters/metric_table.hpp"
#include "harness/counters/range_profiler.hpp"
#include "harness/device_query.hpp"

namespace {

using decode_bench::counters::combine_kernel_ranges;
using decode_bench::counters::default_metric_table;
using decode_bench::counters::derive_counters;
using decode_bench::counters::find_metric_trait;
using decode_bench::counters::metric_names_with_extras;
using nlohmann::json;

TEST(MetricTable, HoldsEveryMetricTheDerivationNeedsOnce) {
  const char* needed[] = {"dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum", "l1tex__t_bytes.sum",
                          "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
                          "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
                          "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                          "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
                          "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
                          "sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "gpu__time_duration.sum",
                          "sm__cycles_elapsed.avg.per_second"};
  for (const char* m : needed) EXPECT_TRUE(find_metric_trait(m).has_value()) << m;
  std::map<std::string, int> seen_metric, seen_short;
  for (const auto& t : default_metric_table()) {
    EXPECT_EQ(++seen_metric[std::string(t.metric)], 1) << t.metric;
    EXPECT_EQ(++seen_short[std::string(t.short_name)], 1) << t.short_name;
    EXPECT_FALSE(t.unit.empty()) << t.metric;
    EXPECT_FALSE(t.description.empty()) << t.metric;
  }
  EXPECT_FALSE(find_metric_trait("dram__no_such_metric.sum").has_value());
}

TEST(MetricTable, ExtrasAreAppendedInOrderWithoutDuplicates) {
  const auto base = metric_names_with_extras("");
  EXPECT_EQ(base.size(), default_metric_table().size());
  const auto more = metric_names_with_extras(" sm__throughput.avg.pct_of_peak_sustained_elapsed , dram__bytes_read.sum,"
                                             "lts__t_sectors.sum");
  ASSERT_EQ(more.size(), base.size() + 2);
  EXPECT_EQ(more[base.size()], "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(more[base.size() + 1], "lts__t_sectors.sum");
}

TEST(MetricTable, BadExtraNamesAreRejectedByName) {
  try {
    metric_names_with_extras("dram__bytes_read.sum,Bad Name");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'Bad Name'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(metric_names_with_extras("a__b.sum,,c__d.sum"), std::invalid_argument);
  EXPECT_THROW(metric_names_with_extras("nounderscores"), std::invalid_argument);
}

// A kernel of 1 ms that reads 3e9 bytes, writes 1e9, with 1e9 FADD, 2e9 FMUL, 3e9 FFMA,
// 1e8 HADD, 0 HMUL, 2e8 HFMA: every derived value has a closed form.
std::map<std::string, double> synthetic_raw() {
  return {{"dram__bytes_read.sum", 3e9},
          {"dram__bytes_write.sum", 1e9},
          {"lts__t_bytes.sum", 8e9},
          {"l1tex__t_bytes.sum", 16e9},
          {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 1e9},
          {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 2e9},
          {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 3e9},
          {"sm__sass_thread_inst_executed_op_hadd_pred_on.sum", 1e8},
          {"sm__sass_thread_inst_executed_op_hmul_pred_on.sum", 0},
          {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", 2e8},
          {"gpu__time_duration.sum", 1e6},
          {"sm__cycles_elapsed.avg.per_second", 1.755e9}};
}

TEST(DeriveCounters, ClosedForms) {
  const json model = {{"bytes", 2e9}, {"flops", 5e9}};
  const json c = derive_counters(synthetic_raw(), model);
  const double fp32 = 1e9 + 2e9 + 2 * 3e9;            // 9e9
  const double fp16 = 2 * (1e8 + 0 + 2 * 2e8);        // 1e9: half2, 2 lanes per instruction
  const double flops = fp32 + fp16;                   // 1e10
  EXPECT_DOUBLE_EQ(c.at("fp32_flops").get<double>(), fp32);
  EXPECT_DOUBLE_EQ(c.at("fp16_flops").get<double>(), fp16);
  EXPECT_DOUBLE_EQ(c.at("fp16_flops_one_lane").get<double>(), fp16 / 2);
  EXPECT_DOUBLE_EQ(c.at("flops").get<double>(), flops);
  EXPECT_DOUBLE_EQ(c.at("achieved_tflops").get<double>(), 10.0);  // 1e10 FLOP in 1 ms
  EXPECT_DOUBLE_EQ(c.at("duration_ns").get<double>(), 1e6);
  EXPECT_DOUBLE_EQ(c.at("sm_clock_hz").get<double>(), 1.755e9);
  EXPECT_DOUBLE_EQ(c.at("flops_measured_over_model").get<double>(), 2.0);

  const json& dram = c.at("levels").at("dram");
  EXPECT_DOUBLE_EQ(dram.at("bytes").get<double>(), 4e9);
  EXPECT_DOUBLE_EQ(dram.at("read_bytes").get<double>(), 3e9);
  EXPECT_DOUBLE_EQ(dram.at("write_bytes").get<double>(), 1e9);
  EXPECT_DOUBLE_EQ(dram.at("gbps").get<double>(), 4000.0);  // 4e9 B / 1e-3 s
  EXPECT_DOUBLE_EQ(dram.at("arithmetic_intensity").get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(dram.at("measured_over_model").get<double>(), 2.0);
  const json& l2 = c.at("levels").at("l2");
  EXPECT_DOUBLE_EQ(l2.at("gbps").get<double>(), 8000.0);
  EXPECT_DOUBLE_EQ(l2.at("arithmetic_intensity").get<double>(), 1.25);
  EXPECT_DOUBLE_EQ(l2.at("measured_over_model").get<double>(), 4.0);
  const json& l1 = c.at("levels").at("l1");
  EXPECT_DOUBLE_EQ(l1.at("gbps").get<double>(), 16000.0);
  EXPECT_DOUBLE_EQ(l1.at("arithmetic_intensity").get<double>(), 0.625);
  EXPECT_DOUBLE_EQ(c.at("raw").at("lts__t_bytes.sum").get<double>(), 8e9);
  EXPECT_TRUE(c.at("available").get<bool>());
  const json off = decode_bench::counters::counters_unavailable("no permission");
  EXPECT_FALSE(off.at("available").get<bool>());
  EXPECT_EQ(off.at("reason"), "no permission");
}

TEST(DeriveCounters, MissingInputsLeaveQuantitiesOutNotGuessed) {
  auto raw = synthetic_raw();
  raw.erase("lts__t_bytes.sum");
  raw.erase("sm__sass_thread_inst_executed_op_hfma_pred_on.sum");
  const json c = derive_counters(raw, json());  // no model
  EXPECT_FALSE(c.at("levels").contains("l2"));
  EXPECT_FALSE(c.contains("fp16_flops"));
  EXPECT_DOUBLE_EQ(c.at("flops").get<double>(), 9e9);  // FP32 only
  EXPECT_FALSE(c.at("levels").at("dram").contains("measured_over_model"));
  EXPECT_FALSE(c.contains("flops_measured_over_model"));
}

TEST(DeriveCounters, ZeroBytesGiveNullIntensity) {
  auto raw = synthetic_raw();
  raw["l1tex__t_bytes.sum"] = 0;
  const json c = derive_counters(raw, {{"bytes", 1.0}, {"flops", 1.0}});
  EXPECT_TRUE(c.at("levels").at("l1").at("arithmetic_intensity").is_null());
  EXPECT_DOUBLE_EQ(c.at("levels").at("l1").at("gbps").get<double>(), 0.0);
}

TEST(DeriveCounters, BadRawValuesAreRejectedByName) {
  auto raw = synthetic_raw();
  raw.erase("gpu__time_duration.sum");
  try {
    derive_counters(raw, json());
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("gpu__time_duration.sum"), std::string::npos) << e.what();
  }
  raw = synthetic_raw();
  raw["gpu__time_duration.sum"] = 0;
  EXPECT_THROW(derive_counters(raw, json()), std::invalid_argument);
  raw = synthetic_raw();
  raw["dram__bytes_read.sum"] = -1;
  EXPECT_THROW(derive_counters(raw, json()), std::invalid_argument);
  raw = synthetic_raw();
  raw["lts__t_bytes.sum"] = std::nan("");
  EXPECT_THROW(derive_counters(raw, json()), std::invalid_argument);
}

TEST(CombineKernelRanges, SumsCountersAndWeightsRatesByDuration) {
  // A split kernel of 3 us at 1.5 GHz and a merge kernel of 1 us at 1.9 GHz.
  const auto combined = combine_kernel_ranges({
      {{"gpu__time_duration.sum", 3000}, {"dram__bytes_read.sum", 1e6}, {"sm__cycles_elapsed.avg.per_second", 1.5e9}},
      {{"gpu__time_duration.sum", 1000}, {"dram__bytes_read.sum", 2e5}, {"sm__cycles_elapsed.avg.per_second", 1.9e9}},
  });
  EXPECT_DOUBLE_EQ(combined.at("gpu__time_duration.sum"), 4000);
  EXPECT_DOUBLE_EQ(combined.at("dram__bytes_read.sum"), 1.2e6);
  EXPECT_DOUBLE_EQ(combined.at("sm__cycles_elapsed.avg.per_second"), (3 * 1.5e9 + 1 * 1.9e9) / 4);
  const auto single = combine_kernel_ranges({{{"lts__t_bytes.sum", 7}, {"x__y.avg.pct_of_peak_sustained_elapsed", 42}}});
  EXPECT_DOUBLE_EQ(single.at("lts__t_bytes.sum"), 7);
  EXPECT_DOUBLE_EQ(single.at("x__y.avg.pct_of_peak_sustained_elapsed"), 42);
}

TEST(CuptiStatus, PermissionFailureNamesTheFix) {
  const std::string hint = decode_bench::counters::hint_for_cupti_result(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
  EXPECT_NE(hint.find("root"), std::string::npos) << hint;
  EXPECT_NE(hint.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos) << hint;
  const std::string text =
      decode_bench::counters::describe_cupti_result(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "cuptiRangeProfilerEnable");
  EXPECT_NE(text.find("cuptiRangeProfilerEnable failed"), std::string::npos) << text;
  EXPECT_NE(text.find("another profiler"), std::string::npos) << text;
  EXPECT_NE(decode_bench::counters::hint_for_cupti_result(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED).find("MIG"),
            std::string::npos);
  EXPECT_THROW(decode_bench::counters::throw_if_cupti_failed(CUPTI_ERROR_UNKNOWN, "x"),
               decode_bench::counters::CounterError);
  EXPECT_NO_THROW(decode_bench::counters::throw_if_cupti_failed(CUPTI_SUCCESS, "x"));
}

TEST(RangeProfiler, UnavailableDeviceGivesTheReasonInsteadOfThrowing) {
  // Device 1000 never exists; on a machine without a GPU every device is unavailable.
  auto made = decode_bench::counters::RangeProfiler::create(1000, metric_names_with_extras(""));
  ASSERT_TRUE(std::holds_alternative<std::string>(made));
  const std::string& reason = std::get<std::string>(made);
  EXPECT_NE(reason.find("hardware counters unavailable"), std::string::npos) << reason;
  if (const auto no_gpu = decode_bench::device_unavailable_reason(0)) {
    made = decode_bench::counters::RangeProfiler::create(0, metric_names_with_extras(""));
    ASSERT_TRUE(std::holds_alternative<std::string>(made));
    EXPECT_NE(std::get<std::string>(made).find(*no_gpu), std::string::npos) << std::get<std::string>(made);
  }
}

}  // namespace
