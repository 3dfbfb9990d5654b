#include "kernels/mla/mla_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/dtype.hpp"

namespace decode_bench {

template <class KV>
void mla_reference(const MlaShape& shape, const KV& cache, int batch, const std::int32_t* lengths, const float* q,
                   double* o, double* lse) {
  const int kd = shape.key_dim(), vd = shape.value_dim();
  const double scale = kv_scale(cache.k_scale, 0);
  std::vector<double> latent, s;
  for (int b = 0; b < batch; ++b) {
    const std::int64_t len = lengths[b];
    // The sequence's latents in double, once for all its query rows.
    latent.assign(static_cast<std::size_t>(len) * kd, 0.0);
    for (std::int64_t t = 0; t < len; ++t) {
      const auto* row = cache.k + cache.row_offset(b, 0, t);
      for (int c = 0; c < kd; ++c) latent[static_cast<std::size_t>(t) * kd + c] = to_double(row[c]) * scale;
    }
    for (int i = 0; i < shape.q_len; ++i) {
      const std::int64_t visible = mla_visible_tokens(len, shape.q_len, i);
      for (int h = 0; h < shape.heads_q; ++h) {
        const std::size_t r = (static_cast<std::size_t>(b) * shape.q_len + i) * shape.heads_q + h;
        const float* qr = q + r * kd;
        double* orow = o + r * vd;
        std::fill(orow, orow + vd, 0.0);
        if (visible == 0) {
          if (lse) lse[r] = -std::numeric_limits<double>::infinity();
          continue;
        }
        s.assign(static_cast<std::size_t>(visible), 0.0);
        double m = -std::numeric_limits<double>::infinity();
        for (std::int64_t t = 0; t < visible; ++t) {
          const double* lt = latent.data() + static_cast<std::size_t>(t) * kd;
          double dot = 0;
          for (int c = 0; c < kd; ++c) dot += static_cast<double>(qr[c]) * lt[c];
          s[t] = dot * shape.softmax_scale;
          m = std::max(m, s[t]);
        }
        double l = 0;
        for (std::int64_t t = 0; t < visible; ++t) {
          const double p = std::exp(s[t] - m);
          l += p;
          const double* lt = latent.data() + static_cast<std::size_t>(t) * kd;
          for (int j = 0; j < vd; ++j) orow[j] += p * lt[j];
        }
        for (int j = 0; j < vd; ++j) orow[j] /= l;
        if (lse) lse[r] = m + std::log(l);
      }
    }
  }
}

#define DECODE_BENCH_MLA_REFERENCE(T)                                                                              \
  template void mla_reference<ContiguousKV<T>>(const MlaShape&, const ContiguousKV<T>&, int, const std::int32_t*,  \
                                               const float*, double*, double*);                                    \
  template void mla_reference<PagedKV<T>>(const MlaShape&, const PagedKV<T>&, int, const std::int32_t*,            \
                                          const float*, double*, double*);
DECODE_BENCH_MLA_REFERENCE(__half)
DECODE_BENCH_MLA_REFERENCE(__nv_bfloat16)
DECODE_BENCH_MLA_REFERENCE(__nv_fp8_e4m3)
#undef DECODE_BENCH_MLA_REFERENCE

}  // namespace decode_bench
