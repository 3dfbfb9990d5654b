#pragma once
// The counter pass of a point: a separate profiled replay of its launch (never the timed one),
// one replay per hardware metric pass with the L2 flushed before each, and the counters derived
// beside the point's byte/FLOP model. The CUPTI range profiler is set up on the first point a
// runner profiles (about a second) and kept; where it cannot be (no CUPTI, no permission) every
// point records why instead of counters.
#include <functional>
#include <optional>
#include <string>
#include <variant>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "harness/counters/range_profiler.hpp"
#include "harness/l2_flush.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

class CounterPass {
 public:
  // launch: the point's launch on a given stream; model: the point's "model" JSON; write_flush:
  // L2 emptied by a write before each replay (timing = cold_write), so the counters show the
  // dirty lines' write-back that the timed launch paid.
  nlohmann::json profile(RunContext& ctx, const std::function<cudaError_t(cudaStream_t)>& launch,
                         const nlohmann::json& model, L2Flusher& flusher, bool write_flush = false);

 private:
  std::optional<std::variant<counters::RangeProfiler, std::string>> profiler_;
};

}  // namespace decode_bench::sweeps
