#include "sweeps/mla_verify.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/dtype.hpp"
#include "kernels/mla/mla_reference.hpp"

namespace decode_bench::sweeps {
namespace {

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// One sequence's rows of `heads` (every query position) against the float64 reference, folded
// into `r`. Views of the host cache start at the sequence, so the reference sees a batch of one.
template <class T>
void verify_sequence(const MlaShape& shape, const LatentCache& cache, int s, const std::vector<int>& heads,
                     const std::vector<float>& q, const std::vector<float>& o, const std::vector<float>& lse,
                     double tol, double u, bool rounded_weights, MlaVerification& r) {
  const int kd = shape.key_dim(), vd = shape.value_dim(), k = static_cast<int>(heads.size());
  MlaShape sub = shape;
  sub.heads_q = k;
  // q of the chosen rows, (q_len, k, key_dim): the reference's layout for a batch of one.
  std::vector<float> q_sub(static_cast<std::size_t>(shape.q_len) * k * kd);
  const auto row_of = [&](int i, int h) { return (static_cast<std::size_t>(s) * shape.q_len + i) * shape.heads_q + h; };
  for (int i = 0; i < shape.q_len; ++i)
    for (int j = 0; j < k; ++j)
      std::copy_n(q.begin() + static_cast<std::ptrdiff_t>(row_of(i, heads[j]) * kd), kd,
                  q_sub.begin() + static_cast<std::ptrdiff_t>((static_cast<std::size_t>(i) * k + j) * kd));
  const T* base = reinterpret_cast<const T*>(cache.data().data());
  const float scale = cache.scale();
  const std::int32_t len = cache.lengths()[static_cast<std::size_t>(s)];
  std::vector<double> ref_o(static_cast<std::size_t>(shape.q_len) * k * vd), ref_lse(static_cast<std::size_t>(shape.q_len) * k);
  std::vector<double> latent(static_cast<std::size_t>(len) * kd);
  const auto check = [&](const auto& view) {
    mla_reference(sub, view, 1, &len, q_sub.data(), ref_o.data(), ref_lse.data());
    const double lat_scale = kv_scale(view.k_scale, 0);
    for (std::int64_t t = 0; t < len; ++t) {
      const T* row = view.k + view.row_offset(0, 0, t);
      for (int c = 0; c < kd; ++c) latent[static_cast<std::size_t>(t) * kd + c] = to_double(row[c]) * lat_scale;
    }
  };
  if (cache.config().storage == LatentStorage::paged)
    check(cache.paged_view<T>(base, cache.page_indices().data(), cache.indptr().data() + s, &scale));
  else
    check(cache.contiguous_view<T>(base + cache.row_offset(s, 0), &scale));

  std::vector<double> o_abs(vd);
  for (int i = 0; i < shape.q_len; ++i) {
    const std::int64_t visible = mla_visible_tokens(len, shape.q_len, i);
    for (int j = 0; j < k; ++j) {
      const std::size_t sr = static_cast<std::size_t>(i) * k + j, kr = row_of(i, heads[j]);
      const float* qr = q_sub.data() + sr * kd;
      // The bound's sum_t w_t |v_t| per column, w_t from the reference's lse, and the largest
      // sum_c |q_c k_c|: the scale of the FP32 score sums' error.
      std::fill(o_abs.begin(), o_abs.end(), 0.0);
      double abs_dot_max = 0;
      for (std::int64_t t = 0; t < visible; ++t) {
        const double* lt = latent.data() + static_cast<std::size_t>(t) * kd;
        double dot = 0, abs_dot = 0;
        for (int c = 0; c < kd; ++c) {
          const double x = static_cast<double>(qr[c]) * lt[c];
          dot += x;
          abs_dot += std::abs(x);
        }
        abs_dot_max = std::max(abs_dot_max, abs_dot);
        const double w = std::exp(dot * shape.softmax_scale - ref_lse[sr]);
        for (int c = 0; c < vd; ++c) o_abs[c] += w * std::abs(lt[c]);
      }
      // A score's FP32 sum of key_dim exact products is off by at most key_dim x 2^-24 of its
      // sum |q k|; a weight moves by that (times the scale) relative, twice over (numerator and l).
      const double score_err = kd * std::ldexp(1.0, -24) * abs_dot_max * shape.softmax_scale;
      const double row_tol = tol + 4 * score_err;
      for (int c = 0; c < vd; ++c) {
        const double err = std::abs(static_cast<double>(o[kr * vd + c]) - ref_o[sr * vd + c]);
        r.max_abs_error = std::max(r.max_abs_error, err);
        const double over = std::max(0.0, err - 1e-6);
        // Over its bound: <= 1 exactly when err <= row_tol o_abs + 1e-6.
        const double ratio =
            over == 0 ? 0.0 : o_abs[c] > 0 ? over / (row_tol * o_abs[c]) : std::numeric_limits<double>::infinity();
        r.max_o_ratio = std::max(r.max_o_ratio, ratio);
      }
      if (visible == 0) {
        if (!(std::isinf(lse[kr]) && lse[kr] < 0)) r.max_lse_ratio = std::numeric_limits<double>::infinity();
        continue;
      }
      const double lse_err = std::abs(static_cast<double>(lse[kr]) - ref_lse[sr]);
      r.max_lse_error = std::max(r.max_lse_error, lse_err);
      const double mag = std::max(1.0, std::abs(ref_lse[sr]));
      const double lse_bound = rounded_weights ? std::max(1e-4 * mag, u + score_err + 1e-6 * mag) : 1e-4 * mag;
      r.max_lse_ratio = std::max(r.max_lse_ratio, lse_err / lse_bound);
    }
  }
}

}  // namespace

std::int64_t MlaRowSample::rows() const {
  std::int64_t n = 0;
  for (const Sequence& s : sequences) n += static_cast<std::int64_t>(s.heads.size());
  return n;
}

MlaRowSample mla_rows_to_verify(const MlaShape& shape, const std::vector<std::int32_t>& lengths, std::int64_t budget) {
  MlaRowSample sample;
  if (lengths.empty()) return sample;
  const int b = static_cast<int>(lengths.size());
  const std::set<int> seqs{0, b / 2, b - 1};
  const std::int64_t per_seq = std::max<std::int64_t>(1, budget / static_cast<std::int64_t>(seqs.size()));
  for (const int s : seqs) {
    const std::int64_t cost = std::max<std::int64_t>(1, lengths[static_cast<std::size_t>(s)]) * shape.q_len;
    const int k = static_cast<int>(std::clamp<std::int64_t>(per_seq / cost, 1, shape.heads_q));
    MlaRowSample::Sequence seq{s, {}};
    for (int j = 0; j < k; ++j)
      seq.heads.push_back(k == 1 ? 0 : static_cast<int>(static_cast<std::int64_t>(j) * (shape.heads_q - 1) / (k - 1)));
    seq.heads.erase(std::unique(seq.heads.begin(), seq.heads.end()), seq.heads.end());
    sample.sequences.push_back(std::move(seq));
  }
  return sample;
}

std::vector<float> mla_query(const MlaShape& shape, int batch, DType latent_dtype, std::uint64_t seed) {
  const std::size_t n = static_cast<std::size_t>(batch) * shape.rows() * shape.key_dim();
  std::vector<float> q(n);
  const bool bf16 = latent_dtype == DType::bf16;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = mix(mix(seed ^ 0x6d6c615f71ull) ^ i);
    const float u = 2.f * (static_cast<float>(h >> 40) / static_cast<float>(1ull << 24)) - 1.f;
    q[i] = bf16 ? __bfloat162float(__float2bfloat16_rn(u)) : __half2float(__float2half_rn(u));
  }
  return q;
}

namespace {
// u of the MMA operand type of `latent_dtype` (FP8 latents are widened to FP16).
double operand_unit(DType latent_dtype) {
  return latent_dtype == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
}
}  // namespace

double mla_verification_tolerance(DType latent_dtype) { return 2.0 * operand_unit(latent_dtype); }

double mla_verification_tolerance(DType latent_dtype, DType io_dtype) {
  const double own = mla_verification_tolerance(latent_dtype);
  return io_dtype == DType::fp32 ? own : std::max(own, verification_tolerance(latent_dtype, io_dtype));
}

nlohmann::json MlaVerification::terms_json() const {
  const auto finite = [](double x) { return std::isfinite(x) ? x : 1e300; };  // JSON has no Inf
  return {{"lse_rule", rounded_weights_lse ? "rounded_weights" : "relative"},
          {"max_o_ratio", finite(max_o_ratio)},
          {"max_lse_ratio", finite(max_lse_ratio)},
          {"limited_by", max_lse_ratio > max_o_ratio ? "lse" : "o"}};
}

MlaVerification verify_mla_on_host(const MlaShape& shape, const LatentCache& cache, const std::vector<float>& q,
                                   const std::vector<float>& o, const std::vector<float>& lse, const MlaRowSample& sample,
                                   const MlaVerifyRule& rule) {
  MlaVerification r;
  r.tolerance = mla_verification_tolerance(cache.config().dtype, rule.io_dtype);
  r.rounded_weights_lse = rule.denominator_sums_rounded_weights;
  const double u = operand_unit(cache.config().dtype);
  // Every output: finite o; lse finite, or -inf exactly where the row sees no token.
  const int vd = shape.value_dim();
  for (int s = 0; s < cache.num_seqs(); ++s)
    for (int i = 0; i < shape.q_len; ++i) {
      const bool none = mla_visible_tokens(cache.lengths()[static_cast<std::size_t>(s)], shape.q_len, i) == 0;
      for (int h = 0; h < shape.heads_q; ++h) {
        const std::size_t row = (static_cast<std::size_t>(s) * shape.q_len + i) * shape.heads_q + h;
        const float l = lse[row];
        if (none ? !(std::isinf(l) && l < 0) : !std::isfinite(l)) ++r.non_finite;
        for (int c = 0; c < vd; ++c)
          if (!std::isfinite(o[row * vd + c])) ++r.non_finite;
      }
    }
  const double tol = r.tolerance;
  for (const MlaRowSample::Sequence& seq : sample.sequences) {
    switch (cache.config().dtype) {
      case DType::fp16: verify_sequence<__half>(shape, cache, seq.seq, seq.heads, q, o, lse, tol, u, r.rounded_weights_lse, r); break;
      case DType::bf16: verify_sequence<__nv_bfloat16>(shape, cache, seq.seq, seq.heads, q, o, lse, tol, u, r.rounded_weights_lse, r); break;
      case DType::fp8_e4m3: verify_sequence<__nv_fp8_e4m3>(shape, cache, seq.seq, seq.heads, q, o, lse, tol, u, r.rounded_weights_lse, r); break;
      default: r.max_o_ratio = std::numeric_limits<double>::infinity();
    }
  }
  // A NaN anywhere compares false above; non_finite counts it.
  if (std::isnan(r.max_abs_error)) r.max_o_ratio = std::numeric_limits<double>::infinity();
  r.max_rel_error = std::max(r.max_o_ratio, r.max_lse_ratio) * tol;
  r.passed = r.non_finite == 0 && r.max_rel_error <= tol;
  return r;
}

}  // namespace decode_bench::sweeps
