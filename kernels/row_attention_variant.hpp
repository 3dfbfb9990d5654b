#pragma once
// The attention variants as the row-attention kernels take them (kernels/attention_variant.hpp
// defines them): plain data for the problem, the planner and the kernel's argument list. A problem
// whose variant is plain() runs the kernels compiled before the variants existed; any other runs the
// variant instantiations of the tensor-core kernel (kernels/row_attention_variant.cuh), compiled only
// where a preset uses them: FP16, BF16 and FP8 (E4M3, E5M2) storage at head dim 128 and BF16 at 64
// (compiled_head_dim), decode items.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "kernels/attention_variant.hpp"
#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"

namespace decode_bench {

struct RowAttentionVariant {
  int q_len = 1;                // query tokens per sequence: an item holds group x q_len rows
  std::int32_t window = 0;      // 0: full; else each token sees the last `window` positions up to its own
  float logits_soft_cap = 0;    // 0: off; else s -> cap x tanh(s / cap) on the scaled logit
  const float* sinks = nullptr; // (H_q) device sink logits (natural log), or nullptr: no sinks

  bool plain() const { return q_len == 1 && window == 0 && logits_soft_cap == 0 && sinks == nullptr; }
};

// The kernels' form of a sweep's variant (a window at or above 2^31 covers every sequence).
inline RowAttentionVariant row_attention_variant(const AttentionVariant& v, const float* sinks) {
  RowAttentionVariant r;
  r.q_len = v.q_len;
  r.window = v.window >= std::numeric_limits<std::int32_t>::max() ? 0 : static_cast<std::int32_t>(v.window);
  r.logits_soft_cap = static_cast<float>(v.logits_soft_cap);
  r.sinks = v.sinks ? sinks : nullptr;
  return r;
}

// Row v of a variant item (one KV head of one sequence) is query token v / group and query head
// kv_head x group + v % group of the group (FlashInfer's packing of qo_len x group rows), so the
// item's rows are contiguous: rows [item x group x q_len, + group x q_len).
constexpr int variant_rows_per_item(int group, int q_len) { return group * q_len; }

// The most tokens one item of a sequence of `max_len` tokens reads: a window's last window + q_len - 1
// positions (every token's own window together), else the whole sequence.
inline std::int64_t variant_item_tokens(std::int64_t max_len, const RowAttentionVariant& v) {
  if (v.window <= 0) return max_len;
  return std::min<std::int64_t>(max_len, static_cast<std::int64_t>(v.window) + v.q_len - 1);
}

// The variant kernel of a storage type at compiled head dim D (FP16 / BF16 / FP8 contiguous or paged
// at 128, BF16 at 64): the wide tiling's or the narrow one's (kernels/instantiate/row_attention_variant_*.cu;
// FP8 has no wide tiling: nullptr).
template <class KV, int D>
const void* row_attention_variant_kernel(bool wide);

// Why the variant kernels cannot compute this variant for this shape and storage type, or nullopt
// (a plain variant: nullopt). Compiled: FP16, BF16, FP8 E4M3 and E5M2 storage at head dims 80..128
// (the kernel of head dim 128), BF16 at head dims 16..64 (the kernel of head dim 64: gpt-oss), any GQA
// group (MQA included) and q_len 1..16; every window, soft-cap and sinks. Refused: FP32 (the row
// kernel's tensor-core path has none), the other head dims.
std::optional<std::string> row_attention_variant_unsupported_reason(const DecodeShape& shape, DType kv_dtype,
                                                                    const RowAttentionVariant& variant);

}  // namespace decode_bench
