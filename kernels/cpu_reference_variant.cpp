#include "kernels/cpu_reference_variant.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace decode_bench {

template <class KV>
ReferenceOutput reference_decode_variant(const KV& kv, int seq, std::int64_t length, std::span<const float> q,
                                         const DecodeShape& shape, const AttentionVariant& variant,
                                         std::span<const float> sinks) {
  const int d = shape.head_dim, hq = shape.heads_q, n = variant.q_len;
  if (!shape.invalid_reason().empty()) throw std::invalid_argument(shape.invalid_reason());
  if (length < 0 || length > std::numeric_limits<std::int32_t>::max())
    throw std::invalid_argument("length must lie in [0, 2^31)");
  if (auto why = variant_invalid_reason(variant, {static_cast<std::int32_t>(length)})) throw std::invalid_argument(*why);
  if (q.size() != static_cast<std::size_t>(n) * hq * d)
    throw std::invalid_argument("q must hold q_len * heads_q * head_dim values");
  if (variant.sinks && sinks.size() != static_cast<std::size_t>(hq))
    throw std::invalid_argument("sinks must hold heads_q logits");

  const std::size_t rows = static_cast<std::size_t>(n) * hq;
  ReferenceOutput out;
  out.o.assign(rows * d, 0.0);
  out.lse.assign(rows, -std::numeric_limits<double>::infinity());
  out.o_abs.assign(out.o.size(), 0.0);

  const double scale = shape.softmax_scale(), cap = variant.logits_soft_cap;
  std::vector<double> scores;
  for (int i = 0; i < n; ++i) {
    const VisibleRange r = visible_range(length, n, i, variant.window);
    scores.assign(static_cast<std::size_t>(r.end - r.begin), 0.0);
    for (int h = 0; h < hq; ++h) {
      const int g = h / shape.group();
      const std::size_t row = static_cast<std::size_t>(i) * hq + h;
      const float* qh = q.data() + row * d;
      const double k_scale = kv_scale(kv.k_scale, g), v_scale = kv_scale(kv.v_scale, g);
      // The sink joins the maximum too, so a large sink logit stays finite in exp.
      const double sink = variant.sinks ? static_cast<double>(sinks[h]) : -std::numeric_limits<double>::infinity();
      double max_score = sink;
      for (std::int64_t t = r.begin; t < r.end; ++t) {
        const auto* k = kv.k + kv.row_offset(seq, g, t);
        double dot = 0.0;
        for (int x = 0; x < d; ++x) dot += static_cast<double>(qh[x]) * (to_double(k[x]) * k_scale);
        double s = dot * scale;
        if (cap > 0) s = cap * std::tanh(s / cap);
        scores[t - r.begin] = s;
        max_score = std::max(max_score, s);
      }
      double sum = std::isinf(sink) ? 0.0 : std::exp(sink - max_score);
      double* oh = out.o.data() + row * d;
      double* ah = out.o_abs.data() + row * d;
      for (std::int64_t t = r.begin; t < r.end; ++t) {
        const double w = std::exp(scores[t - r.begin] - max_score);
        sum += w;
        const auto* v = kv.v + kv.row_offset(seq, g, t);
        for (int x = 0; x < d; ++x) {
          const double val = to_double(v[x]) * v_scale;
          oh[x] += w * val;
          ah[x] += w * std::abs(val);
        }
      }
      for (int x = 0; x < d; ++x) {
        oh[x] /= sum;
        ah[x] /= sum;
      }
      out.lse[row] = max_score + std::log(sum);
    }
  }
  return out;
}

#define DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(KV)                                                   \
  template ReferenceOutput reference_decode_variant<KV>(const KV&, int, std::int64_t, std::span<const float>, \
                                                        const DecodeShape&, const AttentionVariant&,         \
                                                        std::span<const float>);
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(ContiguousKV<float>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(ContiguousKV<__half>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(PagedKV<float>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(PagedKV<__half>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(PagedKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(ContiguousKV<__nv_fp8_e4m3>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(ContiguousKV<__nv_fp8_e5m2>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(PagedKV<__nv_fp8_e4m3>)
DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE(PagedKV<__nv_fp8_e5m2>)
#undef DECODE_BENCH_INSTANTIATE_VARIANT_REFERENCE

}  // namespace decode_bench
