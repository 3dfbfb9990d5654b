// Combining the per-kernel ranges of one launch (auto range mode) into one value per metric.
#include <string_view>

#include "harness/counters/range_profiler.hpp"

namespace decode_bench::counters {
namespace {

// "dram__bytes_read.sum" adds across kernels; "sm__cycles_elapsed.avg.per_second" or
// "...sum.pct_of_peak_sustained_elapsed" do not: only a bare ".sum" rollup is additive.
bool additive(std::string_view metric) {
  const auto dot = metric.find('.');
  return dot != std::string_view::npos && metric.substr(dot + 1) == "sum";
}

}  // namespace

std::map<std::string, double> combine_kernel_ranges(const std::vector<std::map<std::string, double>>& ranges) {
  constexpr const char* kDuration = "gpu__time_duration.sum";
  std::map<std::string, double> sums, weights;
  for (const auto& range : ranges) {
    const auto d = range.find(kDuration);
    const double w = d != range.end() && d->second > 0 ? d->second : 1.0;
    for (const auto& [metric, value] : range) {
      if (additive(metric)) {
        sums[metric] += value;
      } else {
        sums[metric] += w * value;
        weights[metric] += w;
      }
    }
  }
  for (auto& [metric, weight] : weights)
    if (weight > 0) sums[metric] /= weight;
  return sums;
}

std::map<std::string, double> raw_map(const nlohmann::json& profiled) {
  std::map<std::string, double> out;
  for (const auto& [name, value] : profiled.at("raw").items()) out[name] = value.get<double>();
  return out;
}

}  // namespace decode_bench::counters
