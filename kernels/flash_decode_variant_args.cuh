#pragma once
// The attention variants as the CUDA-core split-K kernel's twins take them
// (flash_decode_split_variant_kernel, kernels/flash_decode.cuh): one query token a sequence, and any
// of a sliding window, the logit soft-cap and sinks (definitions: kernels/attention_variant.hpp).
// A struct of its own, passed to the twins only, so the plain kernels keep FlashDecodeArgs and their
// code (every use of it sits behind `if constexpr (kVariant)`).
//   window: the sequence's token range starts at len - window (one query token at position len - 1
//           sees the last `window` positions); 0: full attention.
//   soft-cap: on the score in the kernel's log2 domain, s2 = s x log2(e): cap x tanh(s / cap) is
//           c2 x tanh(s2 / c2) with c2 = cap x log2(e) (cap_log2; inv_cap_log2 = 1 / c2), the tanh
//           one MUFU instruction (kernels/tanh_approx.cuh), as the row family does.
//   sinks:  one logit per query head (natural log) joining max and denominator only at the final
//           normalisation: in the epilogue of an unsplit block, in the merge of a split sequence.
#include <cstdint>

#include "kernels/tanh_approx.cuh"

namespace decode_bench::device {

struct FlashDecodeVariantArgs {
  const float* sinks = nullptr;  // (H_q) sink logits, natural log; nullptr: no sinks
  float cap_log2 = 0.f;          // cap x log2(e); 0: no soft-cap
  float inv_cap_log2 = 0.f;      // 1 / cap_log2
  std::int32_t window = 0;       // 0: full attention
};

// The first token a window lets the sequence's one query token see.
__device__ __forceinline__ std::int64_t variant_first_token(const FlashDecodeVariantArgs& va, std::int64_t len) {
  return va.window > 0 && len > va.window ? len - va.window : 0;
}

// A score of the log2 domain, soft-capped when the variant asks.
__device__ __forceinline__ float variant_score(const FlashDecodeVariantArgs& va, float s2) {
  return va.cap_log2 > 0.f ? va.cap_log2 * tanh_approx(s2 * va.inv_cap_log2) : s2;
}

}  // namespace decode_bench::device
