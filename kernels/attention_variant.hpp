#pragma once
// The attention variants a decode point may ask for, as plain data shared by the sweep, the
// backends' supports(), the float64 reference and the traffic model. Every field's default is
// plain decode (one query token, full causal attention, no sink, no cap), and a problem at the
// defaults is exactly the problem the project computed before the variants existed.
//
// Definitions (docs/sweeps.md, "Attention variants"), for a sequence of L cached tokens:
//   q_len:  the sequence brings q_len query tokens (speculative decoding verifies k drafts with
//           q_len = k + 1; multi-token prediction uses 2). Query token i (0 <= i < q_len) sits at
//           position p_i = L - q_len + i: the new tokens are the last q_len of the cache, and token i
//           sees cache positions t <= p_i (causal among the new ones). q_len 1 is plain decode.
//   window: 0 = full attention. Otherwise query token i sees only t in [p_i - window + 1, p_i], the
//           last `window` positions up to and including its own (Mistral's and gpt-oss's
//           sliding_window; FlashInfer's window_left = window - 1). window >= L means full.
//   logits_soft_cap: 0 = off. Otherwise each logit s = (q . k) / sqrt(D) becomes cap * tanh(s / cap),
//           applied after the 1/sqrt(D) scale, as Gemma 2 does.
//   sinks:  one learned logit z_h per query head (sink_logits below) joins the softmax's
//           denominator only, as gpt-oss does: o = sum_t e^{s_t} v_t / (e^{z_h} + sum_t e^{s_t}).
//           The reported lse includes it: lse = log(e^{z_h} + sum_t e^{s_t}).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/host_device.hpp"

namespace decode_bench {

constexpr int kMaxQueryLen = 16;

struct AttentionVariant {
  int q_len = 1;
  std::int64_t window = 0;      // 0: full
  bool sinks = false;
  double logits_soft_cap = 0;   // 0: off

  // Whether anything differs from plain decode (one query token, full attention, no sink, no cap).
  bool plain() const { return q_len == 1 && window == 0 && !sinks && logits_soft_cap == 0; }
  // "q_len 4, window 128, sinks, logits_soft_cap 50": the requested variants only, for reasons.
  std::string describe() const;
  // The window as it acts on a sequence of `length` tokens: 0 where it covers every visible token.
  std::int64_t effective_window(std::int64_t length) const { return window == 0 || window >= length ? 0 : window; }

  friend bool operator==(const AttentionVariant&, const AttentionVariant&) = default;
};

// The cache positions query token i of a sequence of `length` tokens sees: [begin, end).
struct VisibleRange {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};
DB_HD VisibleRange visible_range(std::int64_t length, int q_len, int i, std::int64_t window) {
  const std::int64_t pos = length - q_len + i;  // the token's own position
  VisibleRange r;
  r.end = pos + 1;
  r.begin = window > 0 && pos + 1 > window ? pos + 1 - window : 0;
  return r;
}

// The cache positions any of the q_len query tokens sees (the union of their visible ranges): what
// a kernel must read for the sequence.
inline VisibleRange read_range(std::int64_t length, const AttentionVariant& v) {
  return {visible_range(length, v.q_len, 0, v.window).begin, length};
}

// The sink logits of a point: one per query head, drawn from the point's seed (uniform on [0, 4),
// so a sink weighs as much as tens of ordinary tokens of the generated data, whose logits lie near 0).
std::vector<float> sink_logits(int heads_q, std::uint64_t seed);

// Why a problem of these variants is malformed for sequences of these lengths (q_len outside
// 1..16, a negative window or cap, a sequence shorter than q_len), naming the key; or nullopt.
std::optional<std::string> variant_invalid_reason(const AttentionVariant& v, const std::vector<std::int32_t>& lengths);

}  // namespace decode_bench
