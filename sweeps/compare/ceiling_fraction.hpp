#pragma once
// `compare --normalize ceilings`: a point's performance as a fraction of its own run's measured
// ceiling, so the same kernel quality on two GPUs compares as 1.0 although the times differ.
//   intensity I = model.flops / model.bytes (FLOP/B, the model's, not the counters')
//   ridge R     = compute roof (GFLOP/s) / dram_read (GB/s) of the point's own run
//   I <  R: memory-bound,  fraction = achieved GB/s / dram_read
//   I >= R: compute-bound, fraction = achieved GFLOP/s / compute roof
// The compute roof matches the point's dtype: fp32 -> fp32_fma, fp16 and bf16 -> fp16_fma (the
// decode kernels compute with FMAs, not tensor cores); a run without that roof treats every
// point as memory-bound.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace decode_bench::compare {

struct CeilingFraction {
  double value = 0;    // achieved / ceiling, in (0, ...)
  std::string bound;   // the ceiling's name: "dram_read", "fp32_fma", "fp16_fma", an MLA point's tensor roof
};

// The compute roof a point is held against (by parameters.dtype; an MLA point's, the tensor roof
// its bound names).
std::string compute_roof_for(const nlohmann::json& point);

// nullopt when the point has no usable timing or model, or `doc` has no dram_read ceiling.
std::optional<CeilingFraction> ceiling_fraction(const nlohmann::json& doc, const nlohmann::json& point);

// ceilings.<name>.value, or nullopt when absent or not positive.
std::optional<double> ceiling_value(const nlohmann::json& doc, const std::string& name);

}  // namespace decode_bench::compare
