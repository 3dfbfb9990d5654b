#include "harness/timing_options.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace decode_bench {

std::string_view to_string(TimingMode mode) {
  switch (mode) {
    case TimingMode::cold: return "cold";
    case TimingMode::hot: return "hot";
    case TimingMode::cold_write: return "cold_write";
  }
  return "?";
}

TimingMode parse_timing_mode(std::string_view text) {
  for (const TimingMode m : {TimingMode::cold, TimingMode::hot, TimingMode::cold_write})
    if (text == to_string(m)) return m;
  throw std::invalid_argument("timing mode '" + std::string(text) + "' is not one of: cold, hot, cold_write");
}

std::string_view to_string(TimingMethod method) { return method == TimingMethod::events ? "events" : "graph"; }

namespace {

void require(bool ok, const char* field, double value, const char* rule) {
  if (!ok)
    throw std::invalid_argument(std::string("timing option ") + field + " = " + std::to_string(value) + ": " + rule);
}

}  // namespace

void validate(const TimingOptions& o) {
  require(o.repetitions >= 1, "repetitions", o.repetitions, "must be >= 1");
  require(o.warmup >= 1, "warmup", o.warmup, "must be >= 1 (the warm-up also measures the single-launch time)");
  require(std::isfinite(o.min_rep_time_ms) && o.min_rep_time_ms >= 0, "min_rep_time_ms", o.min_rep_time_ms,
          "must be finite and >= 0");
  require(std::isfinite(o.noise_cv) && o.noise_cv >= 0, "noise_cv", o.noise_cv, "must be finite and >= 0");
  require(std::isfinite(o.graph_threshold_us) && o.graph_threshold_us >= 0, "graph_threshold_us",
          o.graph_threshold_us, "must be finite and >= 0");
  require(std::isfinite(o.graph_target_us) && o.graph_target_us > 0, "graph_target_us", o.graph_target_us,
          "must be finite and > 0");
  require(o.max_graph_launches >= 2, "max_graph_launches", o.max_graph_launches, "must be >= 2");
  require(o.max_repetitions == 0 || o.max_repetitions >= o.repetitions, "max_repetitions", o.max_repetitions,
          "must be 0 (no cv target) or >= repetitions");
  require(std::isfinite(o.point_time_limit_s) && o.point_time_limit_s >= 0, "point_time_limit_s",
          o.point_time_limit_s, "must be finite and >= 0 (0: no limit)");
}

TimingPlan choose_timing_plan(double single_launch_us, const TimingOptions& o) {
  if (flushes_l2(o.mode) || o.graph_threshold_us == 0) return {TimingMethod::events, 1};
  const bool valid = std::isfinite(single_launch_us) && single_launch_us > 0;
  if (valid && single_launch_us >= o.graph_threshold_us) return {TimingMethod::events, 1};
  if (!valid) return {TimingMethod::graph, o.max_graph_launches};
  const double wanted = std::ceil(o.graph_target_us / single_launch_us);
  const int launches = static_cast<int>(std::clamp(wanted, 2.0, static_cast<double>(o.max_graph_launches)));
  return {TimingMethod::graph, launches};
}

std::string_view to_string(TimingStop stop) {
  switch (stop) {
    case TimingStop::more: return "more";
    case TimingStop::repetitions: return "repetitions";
    case TimingStop::cv_target: return "cv_target";
    case TimingStop::max_repetitions: return "max_repetitions";
    case TimingStop::time_limit: return "time_limit";
  }
  return "?";
}

TimingStop next_timing_step(std::span<const double> samples_us, double elapsed_s, const TimingOptions& o) {
  const auto n = static_cast<long long>(samples_us.size());
  if (n == 0) return TimingStop::more;
  if (o.point_time_limit_s > 0 && elapsed_s >= o.point_time_limit_s) return TimingStop::time_limit;
  if (n < o.repetitions) return TimingStop::more;
  if (o.max_repetitions == 0) return TimingStop::repetitions;
  if (summarize(samples_us, o.noise_cv).cv <= o.noise_cv) return TimingStop::cv_target;
  if (n >= o.max_repetitions) return TimingStop::max_repetitions;
  return TimingStop::more;
}

}  // namespace decode_bench
