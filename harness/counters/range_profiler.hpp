#pragma once
// Hardware counters for one launch through the CUDA 13 CUPTI Range Profiler
// (cupti_range_profiler.h) and the Profiler Host API (cupti_profiler_host.h).
//
// Each profile() call is its own profiled run, never the timed one: the profiler is enabled on
// the context only for the duration of the call, so timing runs carry no profiler hooks. Metrics
// that need several hardware passes are collected by user replay: the launch is replayed once
// per pass, and before_pass (the L2 flush) runs before each, outside the profiled session, so
// every pass starts from a cold L2. The launch must therefore be idempotent (same inputs, same
// work each time).
//
// Range mode: by default one range per kernel (CUPTI auto range), so gpu__time_duration is kernel
// time summed over the launch's kernels, as Nsight Compute reports it per kernel; counters
// (".sum") are summed over kernels and rates (".per_second", ".avg", ".pct", ".ratio") are
// averaged weighted by each kernel's duration (combine_kernel_ranges). whole_launch puts the
// launch in one user range instead (includes gaps between kernels).
//
// Usage:
//   auto made = RangeProfiler::create(device, metric_names_with_extras(cli_metrics));
//   if (auto* reason = std::get_if<std::string>(&made)) { record *reason; time only; }
//   auto& profiler = std::get<RangeProfiler>(made);
//   json raw = profiler.profile(launch, stream, flush_l2);   // {"raw": {...}, "passes": n, ...}
//   point["counters"] = derive_counters(raw_map(raw), point["model"]);
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

namespace decode_bench::counters {

enum class RangeMode { per_kernel, whole_launch };

struct RangeProfilerOptions {
  RangeMode range_mode = RangeMode::per_kernel;
  std::size_t max_kernels_per_launch = 64;  // per_kernel ranges the counter image can hold
};

class RangeProfiler {
 public:
  // A ready profiler, or why counters are unavailable on `device` with the fix ("no CUDA device
  // found: ...", insufficient privileges -> root or NVreg_RestrictProfilingToAdminUsers=0,
  // another profiler attached, MIG, an unknown metric name). Never throws for those.
  static std::variant<RangeProfiler, std::string> create(int device, std::vector<std::string> metrics,
                                                         RangeProfilerOptions options = {});

  RangeProfiler(RangeProfiler&&) noexcept;
  RangeProfiler& operator=(RangeProfiler&&) noexcept;
  ~RangeProfiler();

  // Replays `launch` on `stream` once per pass, calling before_pass(stream) before each pass.
  // Returns {"raw": {metric: value}, "passes": n, "ranges": kernels seen, "range_mode": "..."}.
  // Throws CounterError (cupti_status.hpp) on a CUPTI failure or dropped ranges, and
  // decode_bench::CudaError when launch or before_pass fails.
  nlohmann::json profile(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream,
                         const std::function<void(cudaStream_t)>& before_pass);

  const std::vector<std::string>& metrics() const;
  std::size_t passes() const;        // hardware passes the metric set needs
  const std::string& chip() const;   // e.g. "GH100"

 private:
  struct Impl;
  explicit RangeProfiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// profile()'s "raw" object as the map derive_counters() takes.
std::map<std::string, double> raw_map(const nlohmann::json& profiled);

// Per-kernel values of one launch combined into one value per metric: counters (names ending in
// ".sum", or any metric without a rate/ratio suffix) are summed; rates and ratios (".per_second",
// ".avg", ".pct", ".ratio", ".max", ".min", ... after the counter) are averaged weighted by each
// kernel's gpu__time_duration.sum when that metric is present, else plainly. Pure host code.
std::map<std::string, double> combine_kernel_ranges(const std::vector<std::map<std::string, double>>& ranges);

}  // namespace decode_bench::counters
