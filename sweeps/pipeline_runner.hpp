#pragma once
// The runner of the GPU kernels (baseline, flash_decode, batch_decode, shared_prefix): every point
// through the one measurement pipeline (sweeps/point_pipeline.hpp), computed by the backend its
// `backend` parameter names (default decode-bench; backends/registry.hpp).
#include <memory>
#include <vector>

#include "harness/backend.hpp"
#include "harness/kernel_kind.hpp"
#include "sweeps/gpu_point_steps.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

// Every registered backend, on the GPU steps.
std::unique_ptr<PointRunner> make_kernel_runner(KernelKind kernel);

// The same runner over the given backends and steps (tests: a host fake of both).
std::unique_ptr<PointRunner> make_pipeline_runner(KernelKind kernel, std::vector<std::unique_ptr<Backend>> backends,
                                                  StepsFactory steps);

}  // namespace decode_bench::sweeps
