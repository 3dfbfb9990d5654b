#pragma once
// What timing one configuration produced: the samples, their summary, how they were taken, or
// the CUDA error that stopped it. Host-only, so the JSON shape is tested in CI.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/statistics.hpp"
#include "harness/timing_options.hpp"

namespace decode_bench {

struct TimingResult {
  std::string name;                    // the point / benchmark name (also the NVTX range)
  TimingMode mode = TimingMode::cold;
  TimingOptions options;               // what the timing was asked for (mode included)
  TimingStop stopped_by = TimingStop::more;  // why sampling ended (set when ok())
  TimingPlan plan;                     // events or graph, launches per sample
  double warmup_launch_us = 0;         // single-launch time measured in the warm-up (sized the plan)
  long long iterations_per_repetition = 0;  // samples per repetition chosen by Google Benchmark
  std::vector<double> samples_us;      // one per repetition: mean time of one launch
  SampleStats stats;                   // over samples_us

  std::string error;                   // empty when timing succeeded
  int cuda_error = 0;                  // the cudaError_t behind `error` (0 when it was not CUDA's)
  bool sticky_error = false;           // the CUDA context is poisoned: stop the run after saving

  bool ok() const { return error.empty() && !samples_us.empty(); }

  // The point's `timing` object: median_us and repetitions (schema-required), mean_us, min_us,
  // max_us, stddev_us, cv, noisy, method, mode, launches_per_sample, iterations_per_repetition,
  // warmup_launch_us, samples_us, stopped_by, cv_target_met (only under a cv target, i.e.
  // options.max_repetitions > 0) and options (to_json below). Throws std::logic_error when !ok():
  // a failed timing has a reason, never numbers.
  nlohmann::json to_json() const;
};

// The settings a timing was asked for, without the mode (recorded beside it): repetitions,
// max_repetitions, warmup, min_rep_time_ms, noise_cv, point_time_limit_s, graph_threshold_us,
// graph_target_us, max_graph_launches. A point's timing.options and a sweep's meta.timing.
nlohmann::json to_json(const TimingOptions& options);

}  // namespace decode_bench
