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
  if (v.window < 0) return "window " + std::to_string(v.window) + " is negative";
  DecodeProblem suffix;
  suffix.shape = shape;
  suffix.kv_dtype = kv_dtype;
  suffix.variant = v;
  if (auto why = decode_unsupported_reason(suffix)) return "the shared prefix's suffix phase: " + *why;
  if (has_levels && v.logits_soft_cap != 0)
    return std::string(
        "logits_soft_cap: the shared prefix's prefix phase runs the row kernel over level items, and its "
        "soft-capped twin takes decode items only (kernel batch_decode computes it over the same pages)");
  return std::nullopt;
}

}  // namespace decode_bench
