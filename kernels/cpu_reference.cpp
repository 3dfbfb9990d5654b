#include "kernels/cpu_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace decode_bench {

template <class KV>
ReferenceOutput reference_decode_range(const KV& kv, int seq, std::int64_t begin, std::int64_t end,
                                       std::span<const float> q, const DecodeShape& shape) {
  const int d = shape.head_dim;
  if (!shape.invalid_reason().empty()) throw std::invalid_argument(shape.invalid_reason());
  if (q.size() != static_cast<std::size_t>(shape.heads_q) * d)
    throw std::invalid_argument("q must hold heads_q * head_dim values");
  if (begin < 0 || end < begin) throw std::invalid_argument("token range must satisfy 0 <= begin <= end");

  ReferenceOutput out;
  out.o.assign(static_cast<std::size_t>(shape.heads_q) * d, 0.0);
  out.lse.assign(shape.heads_q, -std::numeric_limits<double>::infinity());
  out.o_abs.assign(out.o.size(), 0.0);
  if (begin == end) return out;

  const double scale = shape.softmax_scale();
  std::vector<double> scores(static_cast<std::size_t>(end - begin));
  for (int h = 0; h < shape.heads_q; ++h) {
    const int g = h / shape.group();
    const float* qh = q.data() + static_cast<std::size_t>(h) * d;
    // Dequantization (FP8 caches): the exact stored value times the head's scale, in double.
    const double k_scale = kv_scale(kv.k_scale, g), v_scale = kv_scale(kv.v_scale, g);
    // Pass 1: scores and their maximum (subtracted before exp so +-1e4 logits stay finite).
    double max_score = -std::numeric_limits<double>::infinity();
    for (std::int64_t t = begin; t < end; ++t) {
      const auto* k = kv.k + kv.row_offset(seq, g, t);
      double dot = 0.0;
      for (int i = 0; i < d; ++i) dot += static_cast<double>(qh[i]) * (to_double(k[i]) * k_scale);
      scores[t - begin] = dot * scale;
      max_score = std::max(max_score, scores[t - begin]);
    }
    // Pass 2: unnormalized weights, their sum, and the weighted sum of V rows.
    double sum = 0.0;
    double* oh = out.o.data() + static_cast<std::size_t>(h) * d;
    double* ah = out.o_abs.data() + static_cast<std::size_t>(h) * d;
    for (std::int64_t t = begin; t < end; ++t) {
      const double w = std::exp(scores[t - begin] - max_score);
      sum += w;
      const auto* v = kv.v + kv.row_offset(seq, g, t);
      for (int i = 0; i < d; ++i) {
        const double x = to_double(v[i]) * v_scale;
        oh[i] += w * x;
        ah[i] += w * std::abs(x);
      }
    }
    for (int i = 0; i < d; ++i) {
      oh[i] /= sum;
      ah[i] /= sum;
    }
    out.lse[h] = max_score + std::log(sum);
  }
  return out;
}

// The reference is instantiated once per (layout, storage type): ten in all.
#define DECODE_BENCH_INSTANTIATE_REFERENCE(KV)                                                     \
  template ReferenceOutput reference_decode_range<KV>(const KV&, int, std::int64_t, std::int64_t, \
                                                      std::span<const float>, const DecodeShape&);
DECODE_BENCH_INSTANTIATE_REFERENCE(ContiguousKV<float>)
DECODE_BENCH_INSTANTIATE_REFERENCE(ContiguousKV<__half>)
DECODE_BENCH_INSTANTIATE_REFERENCE(ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_REFERENCE(PagedKV<float>)
DECODE_BENCH_INSTANTIATE_REFERENCE(PagedKV<__half>)
DECODE_BENCH_INSTANTIATE_REFERENCE(PagedKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_REFERENCE(ContiguousKV<__nv_fp8_e4m3>)
DECODE_BENCH_INSTANTIATE_REFERENCE(ContiguousKV<__nv_fp8_e5m2>)
DECODE_BENCH_INSTANTIATE_REFERENCE(PagedKV<__nv_fp8_e4m3>)
DECODE_BENCH_INSTANTIATE_REFERENCE(PagedKV<__nv_fp8_e5m2>)
#undef DECODE_BENCH_INSTANTIATE_REFERENCE

}  // namespace decode_bench
