#pragma once
// The runner for `kernel = capacity` points: how many sequences a pool holds in budget_bytes
// (seed paper, Figure 5), through measure_capacity (pools/capacity.hpp). Nothing is launched or
// timed. The exact host simulation (accounting backend) runs everywhere; when the point's device
// is a usable GPU the count is repeated on real cudaMalloc'd arenas and the two must agree, as in
// `decode-bench capacity`. The point carries a `capacity` object instead of verification/timing,
// and `parameters.max_seq_len` (derived: ceil(T * fragmentation)) for the Figure 5 plot.
#include <memory>

#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

std::unique_ptr<PointRunner> make_capacity_runner();

}  // namespace decode_bench::sweeps
