#pragma once
// decode-bench's attention variants (kernels/attention_variant.hpp) in FlashInfer's terms, for both
// FlashInfer backends. For a sequence of L cached tokens whose q_len query tokens are its last ones
// (query token i at position p_i = L - q_len + i), FlashInfer's kernels place query token i of a
// request of q_len tokens over L KV tokens at the same position, so:
//   q_len > 1 -> causal:       FlashInfer's MaskMode::kCausal hides KV token t where t > p_i, which
//                              is decode-bench's "token i sees t <= p_i"
//   window W  -> window_left:  FlashInfer's sliding window keeps t >= p_i - window_left; decode-bench's
//                              W keeps t >= p_i - W + 1, so window_left = W - 1 (-1: no window, W 0)
//   soft-cap  -> logits_soft_cap: FlashInfer's DefaultAttention computes tanh(x sm_scale / cap) and
//                              scales it by cap (sm_scale_log2 = cap log2 e): cap tanh(s / cap) of the
//                              scaled logit s = q.k / sqrt(D), decode-bench's definition
//   sinks     -> the sink logits z_h (natural log), for decode-bench's own FlashInfer variant
//                              (flashinfer_sink_attention.cuh), prefill kernels only
// q, o and lse need no reordering: decode-bench lays them out (batch, q_len, heads_q[, D]), query
// token-major within a sequence, which is FlashInfer's ragged (tokens, heads[, D]) with request b's
// tokens at rows b q_len .. b q_len + q_len - 1 (qo_indptr[b] = b q_len).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "kernels/attention_variant.hpp"

namespace decode_bench {

struct FlashInferVariantArgs {
  bool causal = false;
  std::int32_t window_left = -1;
  float logits_soft_cap = 0;
  bool sinks = false;
};

inline FlashInferVariantArgs flashinfer_variant_args(const AttentionVariant& v) {
  FlashInferVariantArgs a;
  a.causal = v.q_len > 1;
  // A window beyond 2^31 tokens covers every sequence (lengths are int32): clamped, still full.
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  a.window_left = v.window > 0 ? static_cast<std::int32_t>(std::min(v.window - 1, kMax)) : -1;
  a.logits_soft_cap = static_cast<float>(v.logits_soft_cap);
  a.sinks = v.sinks;
  return a;
}

}  // namespace decode_bench
