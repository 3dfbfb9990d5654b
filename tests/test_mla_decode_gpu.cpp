// decode-bench's MLA decode kernels (kernels/mla/mla_decode.hpp: the 64-row kernel and the narrow
// one for rows <= 32) against the float64 reference (kernels/mla/mla_reference.hpp) over the same
// stored latent values (times the FP8 scale): every h_q of DeepSeek-V3's tensor-parallel shapes
// plus an odd one (24), q_len 1 and 2, lengths 1, 63, 64, 65 and 100003, pages of 1, 7 and 64
// tokens in order and shuffled, contiguous caches, a batch with an empty sequence, FP16, BF16 and
// FP8 E4M3 (one scale for the cache), one split and several (the LSE merge).
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
#include <optional>
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
  std::optional<MlaKernel> kernel;  // the kernel the plan must pick, where the case is about one
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
  if (c.kernel) {
    ASSERT_EQ(plan.kernel, *c.kernel) << mla_kernel_name(plan.kernel);
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
  c.kernel = MlaKernel::mma_narrow;
  run(c);
  c.heads_q = 64;  // the 64-row kernel
  c.lengths = {20011};
  c.kernel = MlaKernel::mma;
  run(c);
}

// The narrow kernel (rows <= 32: 16 rows per block at h_q 16 q_len 1, else 32, padding rows
// included at h_q 24) over lengths around its 64-token tile and the 8-token warp shares (1, 7, 8,
// 9, 63, 64, 65, 129), an empty sequence, pages of 1, 7 and 64 shuffled, the three storage types.
TEST(MlaDecodeGpu, NarrowKernelRowsLengthsPagesAndTypes) {
  DB_REQUIRE_GPU();
  const int shapes[][2] = {{16, 1}, {16, 2}, {24, 1}, {32, 1}};
  for (const auto& hq : shapes)
    for (const int page : {1, 7, 64})
      for (const DType dtype : {DType::bf16, DType::fp16, DType::fp8_e4m3}) {
        MlaCase c;
        c.heads_q = hq[0];
        c.q_len = hq[1];
        c.lengths = {1, 63, 0, 64, 65, 7, 8, 9, 129};
        c.page_size = page;
        c.shuffle = true;
        c.dtype = dtype;
        c.kernel = MlaKernel::mma_narrow;
        run(c);
      }
}

// The narrow kernel's split partials merged by their log-sum-exp (ranges of 1, 2, ... tiles; an
// empty sequence; a split past a short sequence's end), and a sharp softmax.
TEST(MlaDecodeGpu, NarrowSplitsMergeByLogSumExp) {
  DB_REQUIRE_GPU();
  for (const int q_len : {1, 2})
    for (const int splits : {1, 2, 5, 64}) {
      MlaCase c;
      c.heads_q = 16;
      c.q_len = q_len;
      c.lengths = {2048, 777, 0, 65};
      c.splits = splits;
      c.q_amplitude = 4.f;
      c.kernel = MlaKernel::mma_narrow;
      run(c);
    }
}

// Small narrow cases of each storage type, with and without splits (the sanitizers' share).
TEST(MlaDecodeGpu, NarrowStorageTypesAndSplits) {
  DB_REQUIRE_GPU();
  for (const DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (const int q_len : {1, 2})
      for (const int splits : {1, 3}) {
        MlaCase c;
        c.heads_q = 16;
        c.q_len = q_len;
        c.dtype = dtype;
        c.lengths = {100, 0, 1, 257};
        c.page_size = 7;
        c.shuffle = true;
        c.splits = splits;
        c.kernel = MlaKernel::mma_narrow;
        run(c);
      }
}

// A long sequence on the narrow kernel at 32 rows (q_len 2: the last tile's causal cut) and FP8.
TEST(MlaDecodeGpu, NarrowLongSequence) {
  DB_REQUIRE_GPU();
  for (const DType dtype : {DType::bf16, DType::fp8_e4m3}) {
    MlaCase c;
    c.heads_q = 16;
    c.q_len = 2;
    c.lengths = {40001, 3};
    c.shuffle = true;
    c.dtype = dtype;
    c.kernel = MlaKernel::mma_narrow;
    run(c);
  }
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
  EXPECT_EQ(one.kernel, MlaKernel::mma);
  EXPECT_EQ(one.to_json()["kernel"], "mla_decode_mma");
  EXPECT_EQ(one.to_json()["rows_per_block"], 64);
  EXPECT_EQ(one.to_json()["tile_tokens"], 32);
  EXPECT_EQ(one.to_json()["stages"], 2);
}

MlaShape mla_rows(int heads_q, int q_len) {
  MlaShape s;
  s.heads_q = heads_q;
  s.q_len = q_len;
  return s;
}

// Rows <= 32 take the narrow kernel (16 rows per block up to 16, else 32), more take the 64-row one.
TEST(MlaDecodePlan, FewRowsTakeTheNarrowKernel) {
  const int narrow[][3] = {{16, 1, 16}, {8, 2, 16}, {16, 2, 32}, {24, 1, 32}, {32, 1, 32}, {1, 1, 16}, {17, 1, 32}};
  for (const auto& n : narrow) {
    SCOPED_TRACE("h_q " + std::to_string(n[0]) + " q_len " + std::to_string(n[1]));
    const MlaDecodePlan p = plan_mla_decode(mla_rows(n[0], n[1]), DType::bf16, 4, 1000, 132);
    EXPECT_EQ(p.kernel, MlaKernel::mma_narrow);
    EXPECT_EQ(p.rows_per_block, n[2]);
    EXPECT_EQ(p.row_blocks, 1);
    EXPECT_EQ(p.tile_tokens, 64);
    EXPECT_EQ(p.threads, 256);
  }
  for (const auto& wide : {mla_rows(32, 2), mla_rows(33, 1), mla_rows(24, 2), mla_rows(128, 1)}) {
    const MlaDecodePlan p = plan_mla_decode(wide, DType::bf16, 4, 1000, 132);
    EXPECT_EQ(p.kernel, MlaKernel::mma) << wide.rows();
    EXPECT_EQ(p.rows_per_block, 64);
    EXPECT_EQ(p.tile_tokens, 32);
  }
}

// The narrow plan's JSON, its shared memory (Q, P, the row reductions, the stages: 16-bit two of
// 64 x 1168 bytes; FP8 one FP16 work tile and three byte stages of 64 x 576) and its splits.
TEST(MlaDecodePlan, NarrowPlanFieldsAndSplits) {
  const MlaDecodePlan h16 = plan_mla_decode(mla_rows(16, 1), DType::bf16, 128, 4096, 132);
  const nlohmann::json j = h16.to_json();
  EXPECT_EQ(j["kernel"], "mla_decode_mma_narrow");
  EXPECT_EQ(j["rows"], 16);
  EXPECT_EQ(j["rows_per_block"], 16);
  EXPECT_EQ(j["row_blocks"], 1);
  EXPECT_EQ(j["tile_tokens"], 64);
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["threads"], 256);
  EXPECT_EQ(j["shared_bytes"], 16 * 1168 + 16 * 144 + 8 * 16 * 4 + 2 * 64 * 1168);
  const MlaDecodePlan h16_fp8 = plan_mla_decode(mla_rows(16, 1), DType::fp8_e4m3, 128, 4096, 132);
  EXPECT_EQ(h16_fp8.stages, 3);
  EXPECT_EQ(h16_fp8.shared_bytes, 16u * 1168 + 16 * 144 + 8 * 16 * 4 + 64 * 1168 + 3 * 64 * 576);
  const MlaDecodePlan h32 = plan_mla_decode(mla_rows(16, 2), DType::fp16, 128, 4096, 132);
  EXPECT_EQ(h32.shared_bytes, 32u * 1168 + 32 * 144 + 8 * 32 * 4 + 2 * 64 * 1168);
  // Every narrow block fits sm_90's 227 KiB and takes over half an SM's 228 KiB (one per SM).
  for (const DType dtype : {DType::bf16, DType::fp8_e4m3})
    for (const int q_len : {1, 2}) {
      const MlaDecodePlan p = plan_mla_decode(mla_rows(16, q_len), dtype, 1, 64, 132);
      EXPECT_LE(p.shared_bytes, 227u * 1024);
      EXPECT_GT(p.shared_bytes, 114u * 1024);
    }
  // Splits (132 SMs): 128 x 4K is one wave of one split each (64 tiles; 2 splits cost 2 waves of
  // 32 tiles plus the partials and the merge); 128 x 16K too (64 splits would be 63 waves of 4
  // tiles plus the partials); 32 x 4K fills the wave with 4 splits of 16 tiles; 1 x 32K takes 128
  // splits of 4 tiles (512 tiles; 4 tiles per split needs 128).
  EXPECT_EQ(h16.num_splits, 1);
  EXPECT_EQ(h16.split_tiles, 64);
  EXPECT_EQ(h16.workspace_bytes, 0u);
  EXPECT_EQ(plan_mla_decode(mla_rows(16, 1), DType::bf16, 128, 16384, 132).num_splits, 1);
  const MlaDecodePlan b32 = plan_mla_decode(mla_rows(16, 1), DType::bf16, 32, 4096, 132);
  EXPECT_EQ(b32.num_splits, 4);
  EXPECT_EQ(b32.split_tiles, 16);
  EXPECT_EQ(b32.workspace_bytes, 4u * 32 * 16 * 513 * 4);
  const MlaDecodePlan b1 = plan_mla_decode(mla_rows(16, 2), DType::bf16, 1, 32768, 132);
  EXPECT_EQ(b1.num_splits, 128);
  EXPECT_EQ(b1.split_tiles, 4);
  // A split count given is taken, clamped to the tiles: 100 tokens are 2 tiles.
  const MlaDecodePlan forced = plan_mla_decode(mla_rows(16, 1), DType::bf16, 1, 100, 132, 3);
  EXPECT_EQ(forced.num_splits, 2);
  EXPECT_EQ(forced.split_tiles, 1);
  EXPECT_EQ(forced.workspace_bytes, 2u * 16 * 513 * 4);
}

}  // namespace
}  // namespace decode_bench
