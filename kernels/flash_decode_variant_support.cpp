// Host rules of the CUDA-core split-K variant twins (kernels/flash_decode_variant.hpp): what they
// compute and when flash_decode takes them instead of the tensor-core row family.
#include <string>

#include "kernels/flash_decode_variant.hpp"

namespace decode_bench {

std::optional<std::string> flash_decode_variant_unsupported_reason(const DecodeShape& shape, DType kv_dtype,
                                                                   const RowAttentionVariant& variant) {
  if (variant.plain()) return std::nullopt;
  const std::string twins = "the CUDA-core split-K variant kernels";
  if (kv_dtype != DType::fp16 && kv_dtype != DType::bf16)
    return "dtype " + std::string(dtype_name(kv_dtype)) + ": " + twins + " are compiled for FP16 and BF16 storage only";
  if (variant.q_len != 1)
    return "q_len " + std::to_string(variant.q_len) + ": " + twins + " take one query token a sequence";
  if (const int group = shape.group(); group != 1 && group != 2)
    return "GQA group " + std::to_string(group) + ": " + twins + " are compiled for groups 1 and 2";
  if (!head_dim_supported(shape.head_dim) || compiled_head_dim(shape.head_dim) != 128)
    return "head_dim " + std::to_string(shape.head_dim) + ": " + twins +
           " are compiled for head dims 80-128 (the kernel of head dim 128)";
  return std::nullopt;
}

bool decode_variant_on_cuda_core(const DecodeProblem& p, const TuningPolicy& tuning) {
  if (p.variant.plain() || tuning.fd_variant_path == VariantPathOverride::tensor_core) return false;
  if (!p.shape.invalid_reason().empty() || flash_decode_variant_unsupported_reason(p.shape, p.kv_dtype, p.variant))
    return false;
  // Only where the plain point of the same shape runs on the CUDA cores: a variant then costs its own
  // arithmetic, not a change of kernel family.
  DecodeProblem plain = p;
  plain.variant = RowAttentionVariant{};
  return !decode_prefers_tensor_core(plain);
}

}  // namespace decode_bench
