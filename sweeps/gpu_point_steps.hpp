#pragma once
// The measurement pipeline's steps on a GPU (sweeps/point_pipeline.hpp), for both kinds of GPU
// point: a plain decode batch in a contiguous or paged pool (sweeps/decode_state.hpp) and a
// shared-prefix batch of forked pages (sweeps/shared_prefix_state.hpp). The storage type is picked
// once, in the factory.
#include <functional>
#include <memory>

#include "harness/attention_problem.hpp"
#include "sweeps/point.hpp"
#include "sweeps/point_pipeline.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

// The steps of one point, from its described problem (sweeps/point_problem.hpp).
using StepsFactory =
    std::function<std::unique_ptr<PointSteps>(const AttentionProblem& described, const Point& point, RunContext& ctx)>;

// GPU steps that keep, from point to point, what a device's points reuse: the L2 flusher's buffer
// and the CUPTI range profiler of the counter pass. One per runner (runners are per device).
StepsFactory gpu_steps_factory();

}  // namespace decode_bench::sweeps
