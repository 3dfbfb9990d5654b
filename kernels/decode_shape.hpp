#pragma once
// The head configuration of one decode step: one query token per query head.
//   q: (H_q, D) fp32        K, V: per sequence (T, H_kv, D) logically, layout set by the accessor
//   o: (H_q, D) fp32        lse: (H_q) natural-log log-sum-exp of the scaled scores
// Query head h reads KV head h / group, group = H_q / H_kv (grouped-query attention).
#include <cmath>
#include <string>

namespace decode_bench {

struct DecodeShape {
  int heads_q = 1;
  int heads_kv = 1;
  int head_dim = 128;

  int group() const { return heads_q / heads_kv; }
  double softmax_scale() const { return 1.0 / std::sqrt(static_cast<double>(head_dim)); }

  // Empty string when the shape is valid, otherwise the reason (names the offending field).
  std::string invalid_reason() const {
    if (heads_q < 1) return "heads_q must be >= 1";
    if (heads_kv < 1) return "heads_kv must be >= 1";
    if (heads_q % heads_kv != 0) return "heads_q must be a multiple of heads_kv";
    if (head_dim < 1) return "head_dim must be >= 1";
    return {};
  }
};

}  // namespace decode_bench
