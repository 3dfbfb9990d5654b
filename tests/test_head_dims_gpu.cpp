// Head dims between the compiled ones (kernels/decode_problem.hpp: kernels for 64, 128 and 256 serve
// every multiple of 16 up to 256, the tail dims masked) against the float64 reference on every
// path: the CUDA-core flash-decode (MHA and its GQA groups, standard, short and work-list tilings)
// and the 3-kernel baseline, the tensor-core row attention (GQA groups 4 and 8, MQA), both row-
// attention kernels directly (split partials and their merge), every storage type each path takes,
// contiguous and over shuffled pages. Outputs are exactly (.., h) arrays, poisoned before each
// launch, with a poisoned guard after them that must stay untouched. The shared-prefix cases at
// d = 80 and 96 are in tests/test_shared_prefix_gpu.cpp. GPU tests skip with the reason where no
// GPU exists; the refusals of unsupported head dims are host tests.
#include <cmath>
#include <cstring>
#include <sstream>

#include <gtest/gtest.h>

#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/row_attention_case.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;

// 80 and 96 (Phi-2, Phi-3: on the d = 128 kernel), 48 (on 64: a tail inside the first 64-dim span
// of the FP8 fragments), 112 (one 16-dim chunk short of 128) and 160 (on 256: most of the row masked).
constexpr int kTailHeadDims[] = {80, 96, 48, 112, 160};


std::string describe(DType dtype, const DecodeCase& c) {
  std::ostringstream s;
  s << decode_kernel_name(c.kernel) << " " << dtype_name(dtype) << " " << decode_path_name(c.path)
    << " Hq=" << c.shape.heads_q << " Hkv=" << c.shape.heads_kv << " D=" << c.shape.head_dim << " page=" << c.page_size
    << " splits=" << c.splits << (c.host_lengths ? " host lengths" : "") << " T=";
  for (auto l : c.lengths) s << l << ",";
  return s.str();
}

void expect_decode_verified(DType dtype, const DecodeCase& c, DecodePath expected_path) {
  const auto r = testing::run_decode_case_as(dtype, c);
  ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
  if (c.kernel == DecodeKernel::flash_decode) {
    EXPECT_EQ(r.plan.path == DecodePath::tensor_core, expected_path == DecodePath::tensor_core) << describe(dtype, c);
  }
}

constexpr DType kAllDtypes[] = {DType::fp32, DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2};

// MHA and the CUDA-core GQA groups: flash-decode for every storage type, the baseline for the
// non-FP8 ones; a ragged batch with empty and one-token sequences, one split and seven.
TEST(HeadDimsGpu, CudaCoreFlashDecodeAndBaseline) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 1000;
  for (int d : kTailHeadDims)
    for (DType dtype : kAllDtypes)
      for (int page : {0, 7})
        for (int splits : {0, 7}) {
          DecodeCase c{DecodeKernel::flash_decode, {8, 8, d}, {0, 1, 77, 1013}, page, splits, ++seed};
          c.path = DecodePath::cuda_core;
          c.launches = 2;  // the fused merge's counters are reset for the next launch
          expect_decode_verified(dtype, c, DecodePath::cuda_core);
          if (!dtype_is_fp8(dtype)) {
            c.kernel = DecodeKernel::baseline;
            expect_decode_verified(dtype, c, DecodePath::cuda_core);
          }
        }
  // GQA groups 2, 4, 8 on the CUDA-core kernel (FP32 and FP8 take it automatically).
  for (int d : {80, 96})
    for (DType dtype : kAllDtypes)
      for (int group : {2, 4, 8}) {
        DecodeCase c{DecodeKernel::flash_decode, {2 * group, 2, d}, {3, 255, 1013}, 16, 0, ++seed};
        c.path = DecodePath::cuda_core;
        expect_decode_verified(dtype, c, DecodePath::cuda_core);
      }
}

// c on the CUDA-core path with its tiling pinned: verified, and planned on `want` (a pin the
// storage type or head dim has no kernel for keeps the standard tiling).
void expect_pinned_tiling(DType dtype, DecodeCase c, TilingOverride pin, DecodeTiling want) {
  c.path = DecodePath::cuda_core;
  c.tuning.fd_tiling = pin;
  const auto r = testing::run_decode_case_as(dtype, c);
  ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
  EXPECT_EQ(r.plan.tiling, want) << describe(dtype, c);
}

// The other flash-decode plans: the separate merge kernel, the work-list plan of a ragged batch with
// host lengths (its partials at work-item rows), and many short sequences (the short tiling).
TEST(HeadDimsGpu, CudaCoreMergeKernelWorkListAndShortTiling) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 2000;
  for (int d : {80, 96, 48})
    for (DType dtype : {DType::fp16, DType::fp32, DType::fp8_e4m3})
      for (int page : {0, 16}) {
        DecodeCase merge{DecodeKernel::flash_decode, {4, 4, d}, {4096, 17}, page, 9, ++seed};
        merge.path = DecodePath::cuda_core;
        merge.fused_merge = false;
        expect_decode_verified(dtype, merge, DecodePath::cuda_core);
        DecodeCase ragged{DecodeKernel::flash_decode, {4, 4, d}, {0, 1, 5000, 40, 3, 900, 12000, 7}, page, 0, ++seed};
        ragged.path = DecodePath::cuda_core;
        ragged.host_lengths = true;
        ragged.launches = 2;
        expect_decode_verified(dtype, ragged, DecodePath::cuda_core);
        DecodeCase many_short{DecodeKernel::flash_decode, {32, 32, d}, std::vector<std::int32_t>(64, 32), page, 0, ++seed};
        many_short.path = DecodePath::cuda_core;
        many_short.host_lengths = true;
        expect_decode_verified(dtype, many_short, DecodePath::cuda_core);
      }
  // The short tiling pinned over uniform sequences of many of its tiles (a wide bus plans it up to
  // eight standard tiles at these head dims): every stage refilled, the tail tile masked.
  for (int d : {80, 96})
    for (DType dtype : {DType::fp16, DType::bf16})
      for (int page : {0, 16})
        expect_pinned_tiling(dtype, {DecodeKernel::flash_decode, {8, 8, d}, std::vector<std::int32_t>(4, 1000), page, 0, ++seed},
                             TilingOverride::short_batch, DecodeTiling::short_batch);
}

// The deep tiling (four stages of 64-token tiles: kernels/flash_decode_traits.cuh), pinned, at the
// head dims of the kernel of 128 it runs (a wide bus plans it over pages for the masked ones past
// the short tiling's reach): uniform batches with a masked tail tile, split (fused and separate merge),
// a ragged batch on the work list, contiguous and shuffled pages. Storage types it is not compiled
// for keep the standard tiling under the pin.
void expect_deep_tiling(DType dtype, const DecodeCase& c, DecodeTiling want) {
  expect_pinned_tiling(dtype, c, TilingOverride::deep, want);
}

TEST(HeadDimsGpu, CudaCoreDeepTiling) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 2500;
  for (int d : {80, 96, 112, 128})
    for (DType dtype : {DType::fp16, DType::bf16})
      for (int page : {0, 16}) {
        expect_deep_tiling(dtype, {DecodeKernel::flash_decode, {8, 8, d}, std::vector<std::int32_t>(4, 1000), page, 0, ++seed},
                           DecodeTiling::deep);
        DecodeCase split{DecodeKernel::flash_decode, {4, 4, d}, {3001, 3001}, page, 5, ++seed};
        expect_deep_tiling(dtype, split, DecodeTiling::deep);
        split.fused_merge = false;
        split.seed = ++seed;
        expect_deep_tiling(dtype, split, DecodeTiling::deep);
        DecodeCase ragged{DecodeKernel::flash_decode, {4, 4, d}, {0, 1, 5000, 40, 3, 900, 12000, 7}, page, 0, ++seed};
        ragged.host_lengths = true;
        ragged.launches = 2;
        expect_deep_tiling(dtype, ragged, DecodeTiling::deep);
      }
  for (DType dtype : {DType::fp32, DType::fp8_e4m3})
    expect_deep_tiling(dtype, {DecodeKernel::flash_decode, {8, 8, 96}, std::vector<std::int32_t>(4, 1000), 16, 0, ++seed},
                       DecodeTiling::standard);
  expect_deep_tiling(DType::fp16, {DecodeKernel::flash_decode, {8, 8, 48}, std::vector<std::int32_t>(4, 1000), 16, 0, ++seed},
                     DecodeTiling::standard);
}

// The deep tiling's few small cases for the sanitizers (tests/test_tiers.cmake): a masked tail
// tile, split with the separate merge, and a ragged batch on the work list.
TEST(HeadDimsGpu, DeepTilingSmall) {
  DB_REQUIRE_GPU();
  DecodeCase split{DecodeKernel::flash_decode, {2, 2, 96}, {300, 1000}, 16, 3, 2601};
  split.fused_merge = false;
  expect_deep_tiling(DType::fp16, split, DecodeTiling::deep);
  DecodeCase ragged{DecodeKernel::flash_decode, {2, 2, 80}, {0, 70, 700, 5}, 0, 0, 2602};
  ragged.host_lengths = true;
  expect_deep_tiling(DType::bf16, ragged, DecodeTiling::deep);
}

// The short tiling at GQA group 2 (4 warps, 32-token tiles, 3 stages: kernels/flash_decode_traits.cuh),
// pinned, on the kernel of 128 it is compiled for (FP16 and BF16): uniform batches of one tile, of
// many with a masked tail tile, split (fused and separate merge) and a ragged batch on the work list,
// contiguous and over shuffled pages of 16 and 7, at d 128 and the masked 96. Storage types and head
// dims it is not compiled for keep the standard tiling under the pin.
TEST(HeadDimsGpu, CudaCoreShortTilingAtGroupTwo) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 2700;
  for (int d : {128, 96})
    for (DType dtype : {DType::fp16, DType::bf16})
      for (int page : {0, 16, 7}) {
        const DecodeShape g2{8, 4, d};
        expect_pinned_tiling(dtype, {DecodeKernel::flash_decode, g2, std::vector<std::int32_t>(6, 32), page, 0, ++seed},
                             TilingOverride::short_batch, DecodeTiling::short_batch);
        expect_pinned_tiling(dtype, {DecodeKernel::flash_decode, g2, std::vector<std::int32_t>(6, 1001), page, 0, ++seed},
                             TilingOverride::short_batch, DecodeTiling::short_batch);
        DecodeCase split{DecodeKernel::flash_decode, g2, {3001, 3001}, page, 5, ++seed};
        split.launches = 2;  // the fused merge's counters are reset for the next launch
        expect_pinned_tiling(dtype, split, TilingOverride::short_batch, DecodeTiling::short_batch);
        split.fused_merge = false;
        split.seed = ++seed;
        expect_pinned_tiling(dtype, split, TilingOverride::short_batch, DecodeTiling::short_batch);
        DecodeCase ragged{DecodeKernel::flash_decode, g2, {0, 1, 5000, 40, 3, 900, 12000, 7}, page, 0, ++seed};
        ragged.host_lengths = true;
        ragged.launches = 2;
        expect_pinned_tiling(dtype, ragged, TilingOverride::short_batch, DecodeTiling::short_batch);
      }
  for (DType dtype : {DType::fp32, DType::fp8_e4m3})
    expect_pinned_tiling(dtype, {DecodeKernel::flash_decode, {8, 4, 128}, std::vector<std::int32_t>(6, 500), 16, 0, ++seed},
                         TilingOverride::short_batch, DecodeTiling::standard);
  for (int d : {64, 160})  // the kernels of 64 and 256
    expect_pinned_tiling(DType::fp16, {DecodeKernel::flash_decode, {8, 4, d}, std::vector<std::int32_t>(6, 500), 0, 0, ++seed},
                         TilingOverride::short_batch, DecodeTiling::standard);
}

// Its few small cases for the sanitizers (tests/test_tiers.cmake): a masked tail tile over pages,
// split with the separate merge, and a ragged batch on the work list.
TEST(HeadDimsGpu, ShortTilingAtGroupTwoSmall) {
  DB_REQUIRE_GPU();
  expect_pinned_tiling(DType::bf16, {DecodeKernel::flash_decode, {4, 2, 128}, {300, 300}, 7, 0, 2801},
                       TilingOverride::short_batch, DecodeTiling::short_batch);
  DecodeCase split{DecodeKernel::flash_decode, {4, 2, 96}, {300, 1000}, 16, 3, 2802};
  split.fused_merge = false;
  expect_pinned_tiling(DType::fp16, split, TilingOverride::short_batch, DecodeTiling::short_batch);
  DecodeCase ragged{DecodeKernel::flash_decode, {4, 2, 128}, {0, 70, 700, 5}, 0, 0, 2803};
  ragged.host_lengths = true;
  expect_pinned_tiling(DType::bf16, ragged, TilingOverride::short_batch, DecodeTiling::short_batch);
}

// Grouped decode on the tensor cores: groups 4 and 8 and MQA (32 query heads on one KV head), FP16,
// BF16 and both FP8 formats, contiguous and shuffled pages, automatic splits and nine.
TEST(HeadDimsGpu, TensorCoreGroupedDecodeAndMqa) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 3000;
  for (int d : kTailHeadDims)
    for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
      for (DecodeShape shape : {DecodeShape{8, 2, d}, DecodeShape{16, 2, d}, DecodeShape{32, 1, d}})
        for (int page : {0, 16})
          for (int splits : {0, 9}) {
            DecodeCase c{DecodeKernel::flash_decode, shape, {0, 1, 77, 1000}, page, splits, ++seed};
            c.path = DecodePath::tensor_core;
            c.launches = 2;
            expect_decode_verified(dtype, c, DecodePath::tensor_core);
          }
}

// Both row-attention kernels directly, rows gathered from many sequences (the shared-prefix shape),
// ranges starting past 0, an empty range, one split and several (the partials' merge).
TEST(HeadDimsGpu, RowAttentionBothPaths) {
  DB_REQUIRE_GPU();
  struct Variant {
    DType dtype;
    RowAttentionPath path;
  };
  constexpr Variant kVariants[] = {{DType::fp32, RowAttentionPath::simt},      {DType::fp16, RowAttentionPath::simt},
                                   {DType::fp8_e5m2, RowAttentionPath::simt},  {DType::fp16, RowAttentionPath::tensor_core},
                                   {DType::bf16, RowAttentionPath::tensor_core},
                                   {DType::fp8_e4m3, RowAttentionPath::tensor_core},
                                   {DType::fp8_e5m2, RowAttentionPath::tensor_core}};
  std::uint64_t seed = 4000;
  for (int d : kTailHeadDims)
    for (const auto& var : kVariants)
      for (int page : {0, 16})
        for (int splits : {1, 3}) {
          testing::RowCase c;
          c.shape = {8, 2, d};
          c.lengths = {300, 1000};
          c.page_size = page;
          c.splits = splits;
          c.path = var.path;
          c.seed = ++seed;
          c.items = {{1, 1, 40, 37, 1000}, {0, 0, 17, 5, 300}, {1, 0, 3, 500, 500}};
          const auto r = testing::run_row_case_as(var.dtype, c);
          const std::string what = std::string(dtype_name(var.dtype)) +
                                   (var.path == RowAttentionPath::simt ? " simt" : " tensor_core") + " D=" +
                                   std::to_string(d) + " page=" + std::to_string(page) + " splits=" + std::to_string(splits);
          ASSERT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
          EXPECT_EQ(r.plan.path, var.path) << what;
          EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
        }
}

// o and lse are exactly (seqs, H_q, h) and (seqs, H_q): the masked tail of the last row must not
// be written past the end (a kernel that wrote D-dim rows would). A poisoned guard follows o.
template <class Elem>
void expect_guard_untouched(const DecodeShape& s, DecodePath path, int splits) {
  const std::vector<std::int32_t> lengths{1013, 300};
  std::mt19937_64 rng(7);
  const testing::CaseKv<Elem> kv_data(s, lengths, 0, 7, false, rng);
  const std::size_t out = lengths.size() * s.heads_q * s.head_dim, guard = 256;
  const std::vector<float> q = testing::random_values<float>(out, rng, -2.f, 2.f);
  DeviceBuffer<float> d_q(q), d_o(out + guard), d_lse(lengths.size() * s.heads_q);
  DeviceBuffer<std::int32_t> d_lens(lengths);
  const DecodeProblem problem{s, dtype_of<Elem>::value, static_cast<int>(lengths.size()), 1013, d_lens.get(), d_q.get(),
                              d_o.get(), d_lse.get()};
  d_o.poison();
  kv_data.on_device([&](const auto& kv) {
    using KV = std::decay_t<decltype(kv)>;
    DecodePlan plan;
    ASSERT_EQ(plan_decode<KV>(DecodeKernel::flash_decode, problem, {.splits = splits, .path = path}, &plan), cudaSuccess);
    DeviceBuffer<std::uint8_t> workspace(plan.workspace_bytes);
    ASSERT_EQ(init_decode_workspace(plan, workspace.get(), nullptr), cudaSuccess);
    ASSERT_EQ(run_decode<KV>(kv, problem, plan, workspace.get(), nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  });
  const std::vector<float> o = d_o.download();
  for (std::size_t i = out; i < out + guard; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &o[i], sizeof bits);
    ASSERT_EQ(bits, 0xFFFFFFFFu) << "o[" << i << "] past the (seqs, H_q, " << s.head_dim << ") output was written ("
                                 << decode_path_name(path) << ", splits " << splits << ")";
  }
  for (std::size_t i = 0; i < out; ++i) ASSERT_FALSE(std::isnan(o[i])) << "o[" << i << "] was not written";
}

TEST(HeadDimsGpu, OutputsEndAtTheHeadDim) {
  DB_REQUIRE_GPU();
  for (int splits : {1, 5}) {
    expect_guard_untouched<__half>({4, 4, 80}, DecodePath::cuda_core, splits);
    expect_guard_untouched<__half>({8, 2, 80}, DecodePath::tensor_core, splits);
    expect_guard_untouched<__nv_fp8_e4m3>({8, 2, 96}, DecodePath::tensor_core, splits);
    expect_guard_untouched<float>({4, 4, 160}, DecodePath::cuda_core, splits);
  }
}

// Host side (no GPU): head dims outside the supported set are refused by every planner, with the
// value and the supported set in the sentence; those inside are accepted.
TEST(HeadDimSupport, MultiplesOf16UpTo256) {
  for (int d : {16, 48, 64, 80, 96, 112, 128, 160, 192, 256}) {
    EXPECT_TRUE(head_dim_supported(d)) << d;
    EXPECT_GE(compiled_head_dim(d), d) << d;
    EXPECT_TRUE(compiled_head_dim(d) == 64 || compiled_head_dim(d) / 2 < d) << d;  // the smallest that fits
  }
  EXPECT_EQ(compiled_head_dim(80), 128);
  EXPECT_EQ(compiled_head_dim(96), 128);
  EXPECT_EQ(compiled_head_dim(48), 64);
  EXPECT_EQ(compiled_head_dim(160), 256);
  for (int d : {0, 1, 8, 72, 100, 120, 257, 272, 512}) EXPECT_FALSE(head_dim_supported(d)) << d;
}

TEST(HeadDimSupport, RefusalsNameTheHeadDimAndTheSupportedSet) {
  const std::string expected_72 =
      "head_dim 72 is not supported (supported: multiples of 16 from 16 to 256; kernels are compiled for 64, 128 and "
      "256, smaller head dims run on the next one up with the tail dims masked)";
  EXPECT_EQ(head_dim_unsupported_reason(72), expected_72);
  DecodeProblem p{{32, 8, 72}, DType::fp16, 4, 4096};
  EXPECT_EQ(decode_unsupported_reason(p).value_or("<supported>"), expected_72);
  EXPECT_FALSE(decode_tensor_core_supported(p));
  for (int d : {80, 96, 48, 160}) {
    p.shape.head_dim = d;
    EXPECT_EQ(decode_unsupported_reason(p).value_or("<supported>"), "<supported>") << d;
    EXPECT_TRUE(decode_tensor_core_supported(p)) << d;
  }
  p.shape.head_dim = 320;
  EXPECT_EQ(decode_unsupported_reason(p).value_or("<supported>"), head_dim_unsupported_reason(320));
  RowAttentionProblem r;
  r.shape = {8, 2, 100};
  EXPECT_EQ(row_attention_unsupported_reason(r).value_or("<supported>"),
            "row attention: " + head_dim_unsupported_reason(100));
  r.shape.head_dim = 96;
  EXPECT_EQ(row_attention_unsupported_reason(r).value_or("<supported>"), "<supported>");
}

// Host side: the planners refuse an unsupported head dim before any CUDA call.
TEST(HeadDimSupport, PlannersRefuseBeforeAnyCudaCall) {
  const DecodeProblem p{{8, 8, 72}, DType::fp16, 1, 255};
  DecodePlan plan;
  EXPECT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, {}, &plan), cudaErrorInvalidValue);
  EXPECT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::baseline, p, {}, &plan), cudaErrorInvalidValue);
  RowAttentionProblem r;
  r.shape = {8, 2, 72};
  RowAttentionPlan row_plan;
  EXPECT_EQ(plan_row_attention<ContiguousKV<__half>>(r, {}, &row_plan), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace decode_bench
