#pragma once
// Which measured tensor ceiling a compute bound holds a kernel's tensor-core work against: the
// highest of the roofs that run the kernel's MMA operand type, among those the run measured.
//   fp16 operands   fp16_tensor (mma.sync), fp16_tensor_wgmma
//   bf16 operands   bf16_tensor_wgmma, fp16_tensor (mma.sync issues BF16 and FP16 at one rate, so
//                   the FP16 mma.sync ceiling is a BF16 roof as well)
//   fp8_e4m3        fp8_e4m3_tensor_wgmma
// A bound that states its roof by name (shared-prefix bounds, the roofline) says which one won.
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kernels/dtype.hpp"

namespace decode_bench {

struct TensorRoof {
  std::string name;    // a ceiling of harness/ceilings.hpp
  double tflops = 0;   // its measured value
};

// The roofs that match `operands` (fp16, bf16, fp8_e4m3); empty for any other type (fp32, e5m2:
// no tensor roof is measured for them).
std::span<const std::string_view> matching_tensor_roofs(DType operands);

// The tensor-core operand type of a kernel that stores K/V as `kv`: FP8 K/V is widened to FP16
// before the MMA (kernels/row_attention_fp8.cuh), BF16 stays BF16, FP16 stays FP16.
DType tensor_operands_for_kv(DType kv);

// The highest positive matching roof in `ceilings` (a results document's `ceilings` object), or
// nullopt when the run measured none of them. Ties go to the first in the list above.
std::optional<TensorRoof> highest_tensor_roof(const nlohmann::json& ceilings, DType operands);

}  // namespace decode_bench
