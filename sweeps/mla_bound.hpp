#pragma once
// The roofline bound of an MLA decode point, pure so that CI tests it:
//   bound = max(model bytes / the run's dram_read ceiling, model FLOPs / its tensor roof)
// The tensor roof is the highest measured roof matching the kernel's MMA operands
// (harness/tensor_roof.hpp): bf16_tensor_wgmma for a BF16 latent cache where the run measured it,
// fp16_tensor_wgmma or fp16_tensor for FP16 (and FP8, widened to FP16 before the MMA). The ridge is
// where the two meet: tensor FLOP/s over DRAM bytes/s; `limiter` says which side of it the point's
// arithmetic intensity falls on.
#include <nlohmann/json.hpp>

#include "kernels/dtype.hpp"

namespace decode_bench::sweeps {

// {bytes, flops, arithmetic_intensity, dram_read_gbps, memory_us, tensor_roof, tensor_tflops,
// compute_us, ridge_intensity, limiter ("memory" | "compute"), bound_us}: the rates and times only
// for the ceilings `ceilings` has; ridge, limiter and bound only with both.
nlohmann::json mla_bound(double bytes, double flops, DType latent_dtype, const nlohmann::json& ceilings);

// After timing: the bound's median_over_bound, and the point's achieved fraction_of_tensor_roof
// (with the roof's name) where the bound has a roof.
void add_mla_bound_ratios(nlohmann::json& bound, nlohmann::json& achieved, double median_us);

}  // namespace decode_bench::sweeps
