// decode-bench's MLA decode kernel (kernels/mla/mla_decode.hpp) against the float64 reference
// (kernels/mla/mla_reference.hpp) over the same stored latent values (times the FP8 scale): every
// h_q of DeepSeek-V3's tensor-parallel shapes plus an odd one (24), q_len 1 and 2, lengths 1, 63,
// 64, 65 and 100003, pages of 1, 7 and 64 tokens in order and shuffled, contiguous caches, a batch
// with an empty sequence, FP16, BF16 and FP8 E4M3 (one scale for the cache), one split and several
// (the LSE merge).
//
// Bound: q is drawn representable in the mma's type (the latent's; FP16 for FP8, whose values FP16
// holds exactly), so the kernel's roundings are those of the weights P to that type (unit roundoff
// u: FP16 2^-11, BF16 2^-8) and FP32 sums, giving
// |o - ref| <= u sum_t w_t |v_t| per column; the test allows 2u plus the FP32 score sums' own
// bound (+1e-6), and lse 1e-4 (relative above 1).
#include <cmath>
#include <algorithm>
#include <cstddef>
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
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

struct MlaCase {
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
    std::string s = "h_q ";
    s += std::to_string(heads_q);
    s += " q_len ";
    s += std::to_string(q_len);
    s += " ";
    s += dtype_name(dtype);
    if (storage == LatentStorage::paged) {
      s += " page ";
      s += std::to_string(page_size);
    } else {
      s += " contiguous";
    }
    s += shuffle ? " shuffled" : "";
    s += " splits ";
    s += std::to_string(splits);
    s += " lengths";
    for (const auto l : lengths) {
      s += ' ';
      s += std::to_string(l);
    }
    return s;
  }
};

template <class T>
void run_case(const MlaCase& c) {
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

  // q representable in the mma's type (FP16 for an FP8 cache): the kernel's rounding of q is then exact.
  using MmaT = std::conditional_t<std::is_same_v<T, __nv_fp8_e4m3>, __half, T>;
  std::vector<float> q(static_cast<std::size_t>(batch) * shape.rows() * shape.key_dim());
  std::uint64_t x = 12345 + c.heads_q;
  for (float& v : q) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const float u = static_cast<float>(x >> 40) / static_cast<float>(1 << 24);
    v = static_cast<float>(to_double(from_float<MmaT>(c.q_amplitude * (2.f * u - 1.f))));
  }

  // Reference on the host copy.
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

  // Device copies and the kernel.
  std::vector<unsigned char> bytes(reinterpret_cast<const unsigned char*>(cache.data().data()),
                                   reinterpret_cast<const unsigned char*>(cache.data().data()) + cache.data().size());
  DeviceBuffer<unsigned char> d_cache(bytes);
  DeviceBuffer<std::int32_t> d_lens(c.lengths), d_pages(cache.page_indices().empty() ? std::vector<std::int32_t>{0} : cache.page_indices()),
      d_indptr(cache.indptr().empty() ? std::vector<std::int32_t>{0} : cache.indptr());
  DeviceBuffer<float> d_q(q), d_o(out_rows * shape.value_dim()), d_lse(out_rows), d_scale(std::vector<float>{scale});
  d_o.poison();
  d_lse.poison();
  int sm_count = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  std::int64_t max_len = 0;
  for (const auto l : c.lengths) max_len = std::max<std::int64_t>(max_len, l);
  const MlaDecodePlan plan = plan_mla_decode(shape, c.dtype, batch, max_len, sm_count, c.splits);
  if (c.splits > 0) {
    EXPECT_LE(plan.num_splits, c.splits);
  }
  DeviceBuffer<unsigned char> d_work(plan.workspace_bytes);
  const T* base = reinterpret_cast<const T*>(d_cache.get());
  cudaError_t err;
  if (c.storage == LatentStorage::contiguous)
    err = run_mla_decode(shape, cache.contiguous_view(base, d_scale.get()), d_lens.get(), d_q.get(), d_o.get(),
                         d_lse.get(), d_work.get(), plan, nullptr);
  else
    err = run_mla_decode(shape, cache.paged_view(base, d_pages.get(), d_indptr.get(), d_scale.get()), d_lens.get(),
                         d_q.get(), d_o.get(), d_lse.get(), d_work.get(), plan, nullptr);
  ASSERT_EQ(err, cudaSuccess) << cudaGetErrorString(err);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> o = d_o.download(), lse = d_lse.download();

  // The bound's sum_t w_t |v_t| per column, from the reference's weights.
  const double u = c.dtype == DType::bf16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);  // FP8 runs on FP16
  int bad = 0;
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
        EXPECT_EQ(lse[row], -std::numeric_limits<float>::infinity()) << "seq " << b << " row " << r;
        for (int j = 0; j < shape.value_dim(); ++j) EXPECT_EQ(o[row * shape.value_dim() + j], 0.f) << "seq " << b;
        continue;
      }
      EXPECT_NEAR(lse[row], ref_lse[row], 1e-4 * std::max(1.0, std::fabs(ref_lse[row]))) << "seq " << b << " row " << r;
      std::vector<double> w_abs_v(shape.value_dim(), 0.0);
      double abs_dot_max = 0;  // the largest sum_c |q_c k_c|: the FP32 score sums' error scale
      for (std::int64_t t = 0; t < visible; ++t) {
        double dot = 0, abs_dot = 0;
        for (int col = 0; col < shape.key_dim(); ++col) {
          const double x = q[row * shape.key_dim() + col] * latent[t * shape.key_dim() + col];
          dot += x;
          abs_dot += std::fabs(x);
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
        const double err_j = std::fabs(o[row * shape.value_dim() + j] - ref_o[row * shape.value_dim() + j]);
        if (!(err_j <= tol * w_abs_v[j] + 1e-6) && ++bad <= 5)
          ADD_FAILURE() << "seq " << b << " row " << r << " col " << j << ": " << o[row * shape.value_dim() + j]
                        << " vs " << ref_o[row * shape.value_dim() + j] << " (bound " << tol * w_abs_v[j] + 1e-6 << ")";
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

void run(const MlaCase& c) {
  if (c.dtype == DType::fp16) run_case<__half>(c);
  else if (c.dtype == DType::fp8_e4m3) run_case<__nv_fp8_e4m3>(c);
  else run_case<__nv_bfloat16>(c);
}

TEST(MlaDecodeGpu, EveryHeadCountAndQueryLength) {
  DB_REQUIRE_GPU();
  for (const int h : {16, 24, 32, 64, 128})
    for (const int q_len : {1, 2}) {
      MlaCase c;
      c.heads_q = h;
      c.q_len = q_len;
      c.lengths = {1, 63, 64, 65, 300};
      c.shuffle = true;
      run(c);
    }
}

TEST(MlaDecodeGpu, PageSizesOrdersAndStorage) {
  DB_REQUIRE_GPU();
  for (const int page : {1, 7, 64})
    for (const bool shuffle : {false, true}) {
      MlaCase c;
      c.heads_q = 32;
      c.lengths = {1, 63, 64, 65, 129};
      c.page_size = page;
      c.shuffle = shuffle;
      run(c);
    }
  MlaCase contiguous;
  contiguous.heads_q = 16;
  contiguous.q_len = 2;
  contiguous.lengths = {65, 1, 200};
  contiguous.storage = LatentStorage::contiguous;
  run(contiguous);
}

TEST(MlaDecodeGpu, EmptySequenceAndBothStorageTypes) {
  DB_REQUIRE_GPU();
  for (const DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (const int splits : {1, 3}) {
      MlaCase c;
      c.heads_q = 24;
      c.q_len = 2;
      c.dtype = dtype;
      c.lengths = {100, 0, 1, 257};
      c.splits = splits;
      c.q_amplitude = 4.f;  // sharper softmax
      run(c);
    }
}

TEST(MlaDecodeGpu, SplitsMergeByLogSumExp) {
  DB_REQUIRE_GPU();
  for (const int splits : {1, 2, 5, 64}) {
    MlaCase c;
    c.heads_q = 128;
    c.lengths = {2048, 777};
    c.splits = splits;
    run(c);
  }
}

TEST(MlaDecodeGpu, LongSequence) {
  DB_REQUIRE_GPU();
  MlaCase c;
  c.heads_q = 16;
  c.lengths = {100003};
  c.shuffle = true;
  run(c);
}

// Host-side: what the kernel refuses and how the planner splits.
TEST(MlaDecodePlan, UnsupportedShapesAreRefusedAndSplitsAreBounded) {
  MlaShape s;
  EXPECT_EQ(mla_decode_unsupported_reason(s, DType::bf16), "");
  s.kv_lora_rank = 256;
  EXPECT_NE(mla_decode_unsupported_reason(s, DType::bf16).find("kv_lora_rank 512"), std::string::npos);
  EXPECT_EQ(mla_decode_unsupported_reason(MlaShape{}, DType::fp8_e4m3), "");
  EXPECT_NE(mla_decode_unsupported_reason(MlaShape{}, DType::fp8_e5m2).find("not fp8_e5m2"), std::string::npos);
  // The plan: rows in blocks of 64, splits bounded by the tiles, workspace only with splits.
  MlaShape h128;
  const MlaDecodePlan one = plan_mla_decode(h128, DType::bf16, 128, 4096, 132);
  EXPECT_EQ(one.row_blocks, 2);
  EXPECT_EQ(one.num_splits, 2);  // 256 blocks already cover 2 waves of 132 SMs: ceil(264 / 256) = 2
  const MlaDecodePlan small = plan_mla_decode(h128, DType::bf16, 1, 100, 132);
  EXPECT_EQ(small.num_splits, 1);  // 4 tiles: at least 4 tiles per split
  EXPECT_EQ(small.workspace_bytes, 0u);
  const MlaDecodePlan forced = plan_mla_decode(h128, DType::bf16, 1, 100, 132, 3);
  // FP8 stages bytes and widens them into one FP16 work tile: less shared memory than two FP16 stages.
  EXPECT_LT(plan_mla_decode(h128, DType::fp8_e4m3, 1, 100, 132).shared_bytes, forced.shared_bytes);
  EXPECT_EQ(forced.num_splits, 2);  // 4 tiles in splits of ceil(4 / 3) = 2 tiles: 2 splits, none empty
  EXPECT_EQ(forced.workspace_bytes, 2u * 128 * 513 * 4);
}

}  // namespace
}  // namespace decode_bench
