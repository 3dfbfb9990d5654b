#pragma once
// Float64 CPU reference for one decode step (seed paper, eq. 1, with GQA and a log-sum-exp):
//   for each query head h (KV head g = h / group):
//     s_t = (q_h . k_{g,t}) * scale            scale = 1 / sqrt(D)
//     lse_h = log sum_t exp(s_t),  o_h = sum_t exp(s_t - lse_h) v_{g,t}
// It reads K/V through the same accessors as the kernels (host pointers), converts the exact
// stored values to double (times the accessor's per-head dequantization scale, for FP8), and
// accumulates in double. Over an empty token range it returns the
// empty attention state (lse = -inf, o = 0).
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/kv_accessor.hpp"

namespace decode_bench {

struct ReferenceOutput {
  std::vector<double> o;      // (H_q, D)
  std::vector<double> lse;    // (H_q), natural log
  std::vector<double> o_abs;  // (H_q, D): sum_t w_t |v_t|, the magnitude rounding errors scale with
};

// Attention of q over tokens [begin, end) of sequence `seq`.
template <class KV>
ReferenceOutput reference_decode_range(const KV& kv, int seq, std::int64_t begin, std::int64_t end,
                                       std::span<const float> q, const DecodeShape& shape);

template <class KV>
ReferenceOutput reference_decode(const KV& kv, int seq, std::int64_t length,
                                 std::span<const float> q, const DecodeShape& shape) {
  return reference_decode_range(kv, seq, 0, length, q, shape);
}

}  // namespace decode_bench
