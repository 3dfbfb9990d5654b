#pragma once
// One MLA decode case on the GPU against the float64 reference (kernels/mla/mla_reference.hpp)
// over the same stored latent values: the latent cache built (pools/latent_cache.hpp), q drawn in
// the kernels' q / o type (MlaIo: the latent's; FP16 for FP8), o and lse poisoned, each plan the
// caller's planners give launched through run_mla_decode (which dispatches on the plan's kernel),
// every row checked against the one reference.
//
// Bound: q is exact in the MMA's type, so the kernel's roundings are those of the weights P to
// that type (unit roundoff u: FP16 2^-11, BF16 2^-8) and FP32 sums, giving |o - ref| <= u sum_t w_t
// |v_t| per column before o is rounded; the check allows 2u plus four times the FP32 score sums'
// own bound (+1e-6), plus o's one rounding to its type, u (|ref| + that bound); lse 1e-4 (relative
// above 1). A row that sees no token must have o = 0 and lse = -inf exactly.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "harness/device_buffer.hpp"
#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_reference.hpp"
#include "pools/latent_cache.hpp"

namespace decode_bench::testing {

struct MlaDecodeCase {
  int heads_q = 16;
  int q_len = 1;
  std::vector<std::int32_t> lengths;
  LatentStorage storage = LatentStorage::paged;
  int page_size = 64;
  bool shuffle = false;
  DType dtype = DType::bf16;
  int splits = 0;  // 0: the planner's choice
  float q_amplitude = 1.f;
  std::string name() const {
    std::string s = "h_q " + std::to_string(heads_q) + " q_len " + std::to_string(q_len) + " ";
    s += dtype_name(dtype);
    s += storage == LatentStorage::paged ? " page " + std::to_string(page_size) : std::string(" contiguous");
    s += shuffle ? " shuffled" : "";
    s += " splits " + std::to_string(splits) + " lengths";
    for (const auto l : lengths) s += ' ' + std::to_string(l);
    return s;
  }
};

// The planner under test: (shape, dtype, batch, max_len, sm_count, splits) -> plan.
using MlaPlanner = std::function<MlaDecodePlan(const MlaShape&, DType, int, std::int64_t, int, int)>;

// Runs the case once per planner against one reference and one bound (the host's float64 work is
// done once however many plans are checked); returns the plans it ran, in order (for the caller's
// checks of the plans).
template <class T>
std::vector<MlaDecodePlan> run_mla_decode_case(const MlaDecodeCase& c, const std::vector<MlaPlanner>& planners) {
  SCOPED_TRACE(c.name());
  MlaShape shape;
  shape.heads_q = c.heads_q;
  shape.q_len = c.q_len;
  LatentCacheConfig cfg;
  cfg.key_dim = shape.key_dim();
  cfg.dtype = c.dtype;
  cfg.storage = c.storage;
  cfg.page_size = c.page_size;
  cfg.shuffle_pages = c.shuffle;
  cfg.seed = 7 + c.heads_q;
  const LatentCache cache(cfg, c.lengths);
  const int batch = cache.num_seqs();

  // q in the kernels' type (FP16 for an FP8 cache); the reference reads the same values.
  using Io = MlaIo<T>;
  std::vector<Io> q_io(static_cast<std::size_t>(batch) * shape.rows() * shape.key_dim());
  std::vector<float> q(q_io.size());
  std::uint64_t x = 12345 + c.heads_q;
  for (std::size_t i = 0; i < q.size(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const float u = static_cast<float>(x >> 40) / static_cast<float>(1 << 24);
    q_io[i] = from_float<Io>(c.q_amplitude * (2.f * u - 1.f));
    q[i] = static_cast<float>(to_double(q_io[i]));
  }

  const std::size_t out_rows = static_cast<std::size_t>(batch) * shape.rows();
  std::vector<double> ref_o(out_rows * shape.value_dim()), ref_lse(out_rows);
  const T* host_base = reinterpret_cast<const T*>(cache.data().data());
  const float scale = cache.scale();  // 1 unless FP8
  if (c.storage == LatentStorage::contiguous)
    mla_reference(shape, cache.contiguous_view(host_base, &scale), batch, c.lengths.data(), q.data(), ref_o.data(),
                  ref_lse.data());
  else
    mla_reference(shape, cache.paged_view(host_base, cache.page_indices().data(), cache.indptr().data(), &scale),
                  batch, c.lengths.data(), q.data(), ref_o.data(), ref_lse.data());

  // Each element's bound (a row that sees no token: none, it must be exactly 0 / -inf).
  const double u = c.dtype == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);  // FP8 runs on FP16
  std::vector<double> bound(out_rows * shape.value_dim(), 0.0);
  std::vector<bool> sees_none(out_rows, false);
  for (int b = 0; b < batch; ++b) {
    const std::int64_t len = c.lengths[b];
    std::vector<double> latent(static_cast<std::size_t>(len) * shape.key_dim());
    for (std::int64_t t = 0; t < len; ++t)
      for (int col = 0; col < shape.key_dim(); ++col)
        latent[t * shape.key_dim() + col] = to_double(host_base[cache.row_offset(b, t) + col]) * scale;
    for (int r = 0; r < shape.rows(); ++r) {
      const std::size_t row = static_cast<std::size_t>(b) * shape.rows() + r;
      const std::int64_t visible = mla_visible_tokens(len, shape.q_len, r / shape.heads_q);
      if (visible == 0) {
        sees_none[row] = true;
        continue;
      }
      std::vector<double> w_abs_v(shape.value_dim(), 0.0);
      double abs_dot_max = 0;  // the largest sum_c |q_c k_c|: the FP32 score sums' error scale
      for (std::int64_t t = 0; t < visible; ++t) {
        double dot = 0, abs_dot = 0;
        for (int col = 0; col < shape.key_dim(); ++col) {
          const double xv = q[row * shape.key_dim() + col] * latent[t * shape.key_dim() + col];
          dot += xv;
          abs_dot += std::fabs(xv);
        }
        abs_dot_max = std::max(abs_dot_max, abs_dot);
        const double w = std::exp(dot * shape.softmax_scale - ref_lse[row]);
        for (int j = 0; j < shape.value_dim(); ++j) w_abs_v[j] += w * std::fabs(latent[t * shape.key_dim() + j]);
      }
      // A score's FP32 sum of 576 exact products is off by at most 576 x 2^-24 of sum |q k|; a
      // weight then moves by that (times the scale) relative, twice over (numerator and l).
      const double score_err = shape.key_dim() * std::ldexp(1.0, -24) * abs_dot_max * shape.softmax_scale;
      const double tol = 2 * u + 4 * score_err;
      for (int j = 0; j < shape.value_dim(); ++j) {
        const std::size_t at = row * shape.value_dim() + j;
        const double before_rounding = tol * w_abs_v[j] + 1e-6;
        bound[at] = before_rounding + u * (std::fabs(ref_o[at]) + before_rounding);
      }
    }
  }

  std::vector<unsigned char> bytes(reinterpret_cast<const unsigned char*>(cache.data().data()),
                                   reinterpret_cast<const unsigned char*>(cache.data().data()) + cache.data().size());
  DeviceBuffer<unsigned char> d_cache(bytes);
  DeviceBuffer<std::int32_t> d_lens(c.lengths),
      d_pages(cache.page_indices().empty() ? std::vector<std::int32_t>{0} : cache.page_indices()),
      d_indptr(cache.indptr().empty() ? std::vector<std::int32_t>{0} : cache.indptr());
  DeviceBuffer<Io> d_q(q_io), d_o(out_rows * shape.value_dim());
  DeviceBuffer<float> d_lse(out_rows), d_scale(std::vector<float>{scale});
  int sm_count = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  std::int64_t max_len = 0;
  for (const auto l : c.lengths) max_len = std::max<std::int64_t>(max_len, l);
  const T* base = reinterpret_cast<const T*>(d_cache.get());

  std::vector<MlaDecodePlan> plans;
  for (const MlaPlanner& planner : planners) {
    const MlaDecodePlan plan = planner(shape, c.dtype, batch, max_len, sm_count, c.splits);
    plans.push_back(plan);
    SCOPED_TRACE(plan.to_json().dump());
    if (c.splits > 0) {
      EXPECT_LE(plan.num_splits, c.splits);
    }
    DeviceBuffer<unsigned char> d_work(plan.workspace_bytes);
    const cudaError_t init = init_mla_workspace(plan, d_work.get(), nullptr);
    EXPECT_EQ(init, cudaSuccess) << cudaGetErrorString(init);
    if (init != cudaSuccess) continue;
    const auto launch = [&] {
      if (c.storage == LatentStorage::contiguous)
        return run_mla_decode(shape, cache.contiguous_view(base, d_scale.get()), d_lens.get(), d_q.get(), d_o.get(),
                              d_lse.get(), d_work.get(), plan, nullptr);
      return run_mla_decode(shape, cache.paged_view(base, d_pages.get(), d_indptr.get(), d_scale.get()), d_lens.get(),
                            d_q.get(), d_o.get(), d_lse.get(), d_work.get(), plan, nullptr);
    };
    cudaError_t err = cudaSuccess;
    // A fused merge's plan runs twice: the second launch finds the counters the first one's last
    // blocks reset (a counter left non-zero would merge early or never, and the check below fail).
    for (int run = 0; run < (plan.fused_merge ? 2 : 1) && err == cudaSuccess; ++run) {
      d_o.poison();  // every plan writes every element it owns, none left from the previous plan or run
      d_lse.poison();
      err = launch();
    }
    EXPECT_EQ(err, cudaSuccess) << cudaGetErrorString(err);
    if (err != cudaSuccess) continue;
    const cudaError_t sync = cudaDeviceSynchronize();
    EXPECT_EQ(sync, cudaSuccess) << cudaGetErrorString(sync);
    if (sync != cudaSuccess) return plans;  // a sticky error: later launches would fail alike
    const std::vector<Io> o_io = d_o.download();
    const std::vector<float> lse = d_lse.download();
    std::vector<double> o(o_io.size());
    std::transform(o_io.begin(), o_io.end(), o.begin(), [](Io v) { return to_double(v); });

    int bad = 0;
    for (std::size_t row = 0; row < out_rows; ++row) {
      const std::size_t b = row / shape.rows(), r = row % shape.rows();
      if (sees_none[row]) {
        EXPECT_EQ(lse[row], -std::numeric_limits<float>::infinity()) << "seq " << b << " row " << r;
        for (int j = 0; j < shape.value_dim(); ++j)
          if (o[row * shape.value_dim() + j] != 0.f && ++bad <= 5)
            ADD_FAILURE() << "seq " << b << " row " << r << " col " << j << " sees no token but o is "
                          << o[row * shape.value_dim() + j];
        continue;
      }
      EXPECT_NEAR(lse[row], ref_lse[row], 1e-4 * std::max(1.0, std::fabs(ref_lse[row]))) << "seq " << b << " row " << r;
      for (int j = 0; j < shape.value_dim(); ++j) {
        const std::size_t at = row * shape.value_dim() + j;
        const double err_j = std::fabs(o[at] - ref_o[at]);
        if (!(err_j <= bound[at]) && ++bad <= 5)
          ADD_FAILURE() << "seq " << b << " row " << r << " col " << j << ": " << o[at] << " vs " << ref_o[at]
                        << " (bound " << bound[at] << ")";
      }
    }
    EXPECT_EQ(bad, 0);
  }
  return plans;
}

inline std::vector<MlaDecodePlan> run_mla_decode_case(const MlaDecodeCase& c, const std::vector<MlaPlanner>& planners) {
  if (c.dtype == DType::fp16) return run_mla_decode_case<__half>(c, planners);
  if (c.dtype == DType::fp8_e4m3) return run_mla_decode_case<__nv_fp8_e4m3>(c, planners);
  return run_mla_decode_case<__nv_bfloat16>(c, planners);
}

// One planner: the plan it ran.
inline MlaDecodePlan run_mla_decode_case(const MlaDecodeCase& c, const MlaPlanner& planner) {
  const std::vector<MlaDecodePlan> plans = run_mla_decode_case(c, std::vector<MlaPlanner>{planner});
  return plans.empty() ? MlaDecodePlan{} : plans.front();
}

}  // namespace decode_bench::testing
