#pragma once
// Runners for the decode kernels: one point = build the KV cache through a pool (contiguous or
// paged, device memory, fresh random data), verify the kernel against the float64 reference with
// NaN-poisoned outputs, and only then time it (harness/timing.hpp) and profile it in a separate
// pass (harness/counters). A point that fails verification carries no timing.
#include <memory>

#include "harness/kernel_kind.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

// kernel = baseline, flash_decode or batch_decode (the points without a shared prefix).
std::unique_ptr<PointRunner> make_gpu_decode_runner(KernelKind kernel);
// kernel = "cpu_reference": the float64 reference itself, timed on the host.
std::unique_ptr<PointRunner> make_cpu_reference_runner();

}  // namespace decode_bench::sweeps
