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
  TimingPlan plan;                     // events or graph, launches per sample
  double warmup_launch_us = 0;         // single-launch time measured in the warm-up (sized the plan)
  long long iterations_per_repetition = 0;  // samples per repetition chosen by Google Benchmark
  std::vector<double> samples_us;      // one per repetition: mean time of one launch
  SampleStats stats;                   // over samples_us

  std::string error;                   // empty when timing succeeded
  int cuda_error = 0;                  // the cudaError_t behind `error` (0 when it was not CUDA's)
  bool sticky_error = false;           // the CUDA context is poisoned: stop the run after saving
  bool filtered_out = false;           // --benchmark_filter excluded this name; nothing ran

  bool ok() const { return error.empty() && !filtered_out && !samples_us.empty(); }

  // The point's `timing` object: median_us and repetitions (schema-required), mean_us, min_us,
  // max_us, stddev_us, cv, noisy, method, mode, launches_per_sample, iterations_per_repetition,
  // warmup_launch_us, samples_us. Throws std::logic_error when !ok(): a failed timing has a
  // reason, never numbers.
  nlohmann::json to_json() const;
};

}  // namespace decode_bench
