#pragma once
// q and o in the dtype a backend asks for (Backend::io_dtype): FP32 as generated, or FP16 / BF16,
// converted on the host outside every timed region. q is rounded once and the float64 reference
// reads the rounded values, so both compute on the same inputs; o is widened back to FP32 before
// verification, so its rounding counts against the verification rule.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernels/dtype.hpp"

namespace decode_bench::sweeps {

// Why the pipeline cannot give a backend q and o in `dtype` (FP32, FP16 and BF16 only), or nullopt.
std::optional<std::string> io_dtype_unsupported(DType dtype);

// x rounded to `dtype` (fp16 or bf16, round to nearest even): the 16-bit patterns, and back.
std::vector<std::uint16_t> to_io_bits(std::span<const float> x, DType dtype);
std::vector<float> from_io_bits(std::span<const std::uint16_t> bits, DType dtype);

}  // namespace decode_bench::sweeps
