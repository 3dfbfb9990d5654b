#pragma once
// The `cpu_reference` kernel's runner: the float64 reference itself, timed on the host. It stays
// outside the measurement pipeline (sweeps/point_pipeline.hpp) because it is what the pipeline
// verifies against: no backend, no device pool, nothing to check it with.
#include <memory>

#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

std::unique_ptr<PointRunner> make_cpu_reference_runner();

}  // namespace decode_bench::sweeps
