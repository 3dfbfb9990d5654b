#include "kernels/shared_prefix_variant.hpp"

#include "kernels/decode_launch.hpp"

namespace decode_bench {

std::optional<std::string> shared_prefix_variant_unsupported_reason(const DecodeShape& shape, DType kv_dtype,
                                                                    const RowAttentionVariant& v, bool has_levels) {
  if (v.plain()) return std::nullopt;
  if (v.q_len != 1)
    return "q_len " + std::to_string(v.q_len) +
           ": the shared prefix's prefix phase holds one query row a (sequence, query head); q_len > 1 over a "
           "shared prefix is not composed (kernel batch_decode computes it over the same pages)";
  // FP8: the decode kernels take its variants, the composition not (its capped prefix phase, over
  // explicit items, and its verification are checked for FP16 and BF16 only).
  if (dtype_is_fp8(kv_dtype))
    return "dtype " + std::string(dtype_name(kv_dtype)) +
           ": the shared prefix's attention variants are composed for fp16 and bf16 (kernels flash_decode and "
           "batch_decode compute fp8 variants over the same pages)";
  if (v.window < 0) return "window " + std::to_string(v.window) + " is negative";
  DecodeProblem suffix;
  suffix.shape = shape;
  suffix.kv_dtype = kv_dtype;
  suffix.variant = v;
  if (auto why = decode_unsupported_reason(suffix)) return "the shared prefix's suffix phase: " + *why;
  if (has_levels && v.logits_soft_cap != 0) {
    RowAttentionVariant capped;  // the prefix phase's: the cap alone
    capped.logits_soft_cap = v.logits_soft_cap;
    if (auto why = row_attention_variant_unsupported_reason(shape, kv_dtype, capped))
      return "logits_soft_cap: the shared prefix's prefix phase (the row kernel's variant twin): " + *why;
  }
  return std::nullopt;
}

}  // namespace decode_bench
