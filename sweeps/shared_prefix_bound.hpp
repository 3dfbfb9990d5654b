#pragma once
// The roofline bound of a shared-prefix point , pure so that CI tests it:
//   bound       = max(unique K/V bytes / the run's dram_read ceiling, prefix FLOPs / its tensor roof)
//   floor bound = max(the read floor at the unique bytes,             prefix FLOPs / the tensor roof)
// The tensor roof is the highest measured roof matching the kernel's MMA operands
// (harness/tensor_roof.hpp: mma.sync or warpgroup MMA, FP16 or BF16), named in the JSON.
// prefix FLOPs = 4 x (prefix rows' tokens, every level, each sequence that shares it) x H_q x d.
// The floor bound exists for cold points of a run that measured the read floor
// (harness/read_floor.hpp): what the fastest read of those bytes takes under the sweep's timing.
#include <nlohmann/json.hpp>

#include "harness/timing_options.hpp"
#include "kernels/dtype.hpp"

namespace decode_bench::sweeps {

// {unique_kv_bytes, prefix_flops, dram_read_gbps, memory_us, tensor_roof (its ceiling's name),
// tensor_tflops, compute_us,
// bound_us (with both ceilings), memory_floor_us and floor_bound_us (cold, with the floor and the
// tensor ceiling)}; the rates and times only for the ceilings `ceilings` has.
nlohmann::json shared_prefix_bound(double unique_kv_bytes, double prefix_row_tokens, int heads_q, int head_dim,
                                   DType kv_dtype, const nlohmann::json& ceilings, TimingMode mode);

// Adds median_over_bound and median_over_floor_bound for the bounds `bound` has.
void add_bound_ratios(nlohmann::json& bound, double median_us);

}  // namespace decode_bench::sweeps
