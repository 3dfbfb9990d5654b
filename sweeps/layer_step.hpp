#pragma once
// A decode step as a server runs it (the `layers` axis): L layers, each reading its own cache of
// the point's shape, under one plan made outside the step, their L launches captured into one
// CUDA graph and the graph's replay timed. Cold timing flushes the L2 before each replay, never
// between layers: every layer's bytes are cold because the L caches together are far larger than
// the L2, as in a server, not because anything is flushed in between. The point keeps its
// single-launch time beside the step's, so the two can be compared.
//
// run_point_pipeline runs this stage after timing the single launch (sweeps/point_pipeline.hpp):
//   build      layers 1 .. L-1 (PointSteps::build_layers; phase data_fill)
//   bind       Backend::layer_launch per layer, no planning (its host time: bind_us)
//   capture    the L launches in order into one graph (PointSteps::capture_step)
//   verify     one replay, every layer's o and lse against the reference of its own data
//   time       the replay through harness/timing (events around one graph launch)
// and records the point's "layers" block (docs/results.md).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/backend.hpp"
#include "sweeps/point_pipeline.hpp"

namespace decode_bench::sweeps {

// Why a point asks for something a step of `layers` layers cannot give (end_to_end, whose
// copies are of one layer), or nullopt.
std::optional<std::string> layers_request_unsupported(int layers, bool end_to_end);

// The stage above for a point whose single launch verified and was timed (single_launch_us, its
// median). `problem` is layer 0's, built and planned. Returns {"status", "reason"} on failure
// (status error or verification_failed), else the "layers" block with status ok.
nlohmann::json measure_layers(Backend& backend, const AttentionProblem& problem, PointSteps& steps,
                              const MeasureRequest& request, const TimingOptions& options, double single_launch_us,
                              double plan_us, RunContext& ctx);

}  // namespace decode_bench::sweeps
