#pragma once
// Float64 CPU reference for the attention variants (kernels/attention_variant.hpp), computed
// directly from their definitions: for query token i of q_len (position p_i = length - q_len + i)
// and query head h (KV head g = h / group),
//   visible:  t in [begin_i, p_i + 1), begin_i = max(0, p_i - window + 1) (0 when window = 0)
//   s_t = (q_{i,h} . k_{g,t}) / sqrt(D);  s_t = cap * tanh(s_t / cap) when logits_soft_cap = cap > 0
//   Z = sum_t exp(s_t) + (sinks ? exp(z_h) : 0)
//   o_{i,h} = sum_t exp(s_t) v_{g,t} / Z,  lse_{i,h} = log Z
// With the defaults (q_len 1, window 0, no sinks, no cap) it equals reference_decode.
#include <cstdint>
#include <span>

#include "kernels/attention_variant.hpp"
#include "kernels/cpu_reference.hpp"

namespace decode_bench {

// q: (q_len, H_q, D), query token-major; sinks: (H_q) sink logits, read only when variant.sinks.
// The output's o and o_abs are (q_len, H_q, D) and lse (q_len, H_q). Throws std::invalid_argument
// for a malformed variant (variant_invalid_reason), wrong sizes, or length < q_len.
template <class KV>
ReferenceOutput reference_decode_variant(const KV& kv, int seq, std::int64_t length, std::span<const float> q,
                                         const DecodeShape& shape, const AttentionVariant& variant,
                                         std::span<const float> sinks);

}  // namespace decode_bench
