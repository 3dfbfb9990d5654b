#include "harness/counters/metric_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace decode_bench::counters {
namespace {

// Keep in sync with docs/counters.md (the table there is this one, in words).
constexpr MetricTrait kDefaultMetrics[] = {
    {"dram__bytes_read.sum", "dram_read_bytes", "byte", "bytes read from device memory (HBM)"},
    {"dram__bytes_write.sum", "dram_write_bytes", "byte", "bytes written to device memory (HBM)"},
    {"lts__t_bytes.sum", "l2_bytes", "byte", "bytes requested from L2 by all clients (hits and misses)"},
    {"l1tex__t_bytes.sum", "l1_bytes", "byte", "bytes requested from L1/TEX by the SMs (global, local)"},
    {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", "fadd", "inst", "FP32 add, per thread, predicated on"},
    {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", "fmul", "inst", "FP32 multiply, per thread, predicated on"},
    {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "ffma", "inst", "FP32 fused multiply-add, per thread, predicated on"},
    {"sm__sass_thread_inst_executed_op_hadd_pred_on.sum", "hadd", "inst", "FP16 add (HADD or HADD2), per thread, predicated on"},
    {"sm__sass_thread_inst_executed_op_hmul_pred_on.sum", "hmul", "inst", "FP16 multiply (HMUL or HMUL2), per thread, predicated on"},
    {"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", "hfma", "inst", "FP16 fused multiply-add (HFMA or HFMA2), per thread, predicated on"},
    {"gpu__time_duration.sum", "duration_ns", "ns", "GPU time from kernel start to end"},
    {"sm__cycles_elapsed.avg.per_second", "sm_clock_hz", "cycle/s", "SM clock during the kernel (elapsed cycles / time)"},
};

bool plausible_metric_name(std::string_view name) {
  if (name.find("__") == std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::span<const MetricTrait> default_metric_table() { return kDefaultMetrics; }

std::optional<MetricTrait> find_metric_trait(std::string_view metric) {
  for (const MetricTrait& t : kDefaultMetrics)
    if (t.metric == metric) return t;
  return std::nullopt;
}

std::vector<std::string> metric_names_with_extras(std::string_view extra_csv) {
  std::vector<std::string> names;
  for (const MetricTrait& t : kDefaultMetrics) names.emplace_back(t.metric);
  if (trim(extra_csv).empty()) return names;
  std::string_view rest = extra_csv;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view entry = trim(rest.substr(0, comma));
    if (entry.empty())
      throw std::invalid_argument("metrics: empty entry in '" + std::string(extra_csv) + "'");
    if (!plausible_metric_name(entry))
      throw std::invalid_argument("metrics: '" + std::string(entry) +
                                  "' is not a Perfworks metric name (expected e.g. dram__bytes_read.sum)");
    if (std::find(names.begin(), names.end(), entry) == names.end()) names.emplace_back(entry);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return names;
}

}  // namespace decode_bench::counters
