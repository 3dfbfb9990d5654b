// The attention variants on the short-sequence kernel (one query token with a sliding window, sinks
// and the logit soft-cap; kernels/short_decode_variant.hpp), both stages, against the float64
// variant reference (kernels/cpu_reference_variant.hpp): windows 1, 5, 63, 64, 65 and 128 over
// sequences of 0, 1, 64, 65, 127, 128, 129, 1000 and 4097 tokens in one batch, sinks on and off,
// caps 0, 5 and 30, FP16 at 32 / 8 heads d 128 and BF16 at gpt-oss's 64 / 8 d 64, contiguous and
// over shuffled pages of 1, 7 and 16; GQA groups 1, 4, 8 and 16 and MQA 71 / 1 (every head bound
// of the variant kernels: 4, 8, 16); gpt-oss's sliding points on the automatic route and, with
// DECODE_BENCH_FD_SHORT_SEQ=off, on the row twins. Every row before a sequence's window is NaN in
// the copy the kernel reads, and every page wholly before it is a released entry (-1) that reaches
// a NaN page laid out in front of the pages: a kernel reading a token behind the window carries NaN
// into o. Outputs are poisoned before each of two launches; an empty sequence must write o = 0 and
// lse = its sink logit (-inf without sinks). Skipped with the reason where no GPU exists.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/decode_launch.hpp"
#include "tests/case_kv.hpp"
#include "tests/decode_variant_case.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

using ShortVariantCase = testing::DecodeVariantCase;  // q_len 1 here

struct ShortVariantResult {
  cudaError_t status = cudaSuccess;
  VerificationResult verification;
  bool empty_sequences_ok = true;  // o = 0 and lse = the sink logit (-inf without) where a sequence is empty
  DecodePlan plan;
  std::int64_t released_pages = 0;  // page entries set to -1 behind the windows
};

// 0xFF bytes: NaN in FP16 and BF16.
template <class Elem>
Elem nan_element() {
  Elem x;
  std::memset(static_cast<void*>(&x), 0xFF, sizeof x);
  return x;
}

// Runs the case twice (outputs poisoned before each) on K/V whose rows before each sequence's window
// are NaN and, paged, whose pages wholly before it are released entries (-1) reaching a NaN page.
template <class Elem>
ShortVariantResult run_short_variant_case(const ShortVariantCase& c) {
  std::mt19937_64 rng(c.seed);
  const DecodeShape& s = c.shape;
  const int seqs = static_cast<int>(c.lengths.size());
  const testing::CaseKv<Elem> kv_data(s, c.lengths, c.page_size, c.seed, false, rng);
  testing::VariantDecodeInputs in(c, dtype_of<Elem>::value, rng);
  const std::vector<float>& q = in.q;
  const std::vector<float>& sinks = in.sinks;
  const Elem nan = nan_element<Elem>();
  const auto first_seen = [&](int b) { return read_range(c.lengths[b], c.variant).begin; };
  const auto nan_row = [&](std::vector<Elem>& x, std::int64_t offset) {
    std::fill_n(x.begin() + offset, s.head_dim, nan);
  };
  ShortVariantResult result;

  const auto launch_twice = [&](const auto& kv) {
    using KV = std::decay_t<decltype(kv)>;
    result.status = plan_decode<KV>(DecodeKernel::flash_decode, in.problem, c.options, &result.plan);
    if (result.status != cudaSuccess) return;
    DeviceBuffer<std::uint8_t> workspace(result.plan.workspace_bytes);
    for (int launch = 0; launch < 2 && result.status == cudaSuccess; ++launch) {
      workspace.poison();
      in.d_o.poison();
      in.d_lse.poison();
      result.status = init_decode_workspace(result.plan, workspace.get(), nullptr);
      if (result.status == cudaSuccess) result.status = run_decode<KV>(kv, in.problem, result.plan, workspace.get(), nullptr);
      if (result.status == cudaSuccess) result.status = cudaDeviceSynchronize();
      if (result.status != cudaSuccess) return;
      const std::vector<float> o = in.d_o.download(), lse = in.d_lse.download();
      VerificationResult launch_result;
      launch_result.passed = true;
      for (int b = 0; b < seqs; ++b) {
        const std::size_t first = static_cast<std::size_t>(b) * s.heads_q;
        const std::span<const float> ob(o.data() + first * s.head_dim, static_cast<std::size_t>(s.heads_q) * s.head_dim);
        const std::span<const float> lb(lse.data() + first, s.heads_q);
        if (c.lengths[b] == 0) {  // the reference takes no empty sequence (q_len 1 needs a token)
          for (float x : ob) result.empty_sequences_ok = result.empty_sequences_ok && x == 0.f;
          for (int h = 0; h < s.heads_q; ++h)
            result.empty_sequences_ok = result.empty_sequences_ok && (c.variant.sinks ? std::abs(lb[h] - sinks[h]) <= 1e-5f
                                                                                      : lb[h] == -INFINITY);
          continue;
        }
        const ReferenceOutput ref = reference_decode_variant(
            kv_data.host, b, c.lengths[b], std::span<const float>(q.data() + first * s.head_dim, ob.size()), s,
            c.variant, sinks);
        accumulate(launch_result, verify_decode(ob, lb, ref, dtype_of<Elem>::value));
      }
      // The sweep's rule for this variant (harness/verify.hpp).
      judge_at(launch_result, verification_tolerance(dtype_of<Elem>::value, c.variant));
      if (launch == 0) result.verification = launch_result;
      else accumulate(result.verification, launch_result);
    }
    judge_at(result.verification, verification_tolerance(dtype_of<Elem>::value, c.variant));
  };

  if (c.page_size == 0) {
    std::vector<Elem> k = kv_data.k, v = kv_data.v;
    for (int b = 0; b < seqs; ++b)
      for (int g = 0; g < s.heads_kv; ++g)
        for (std::int64_t t = 0; t < first_seen(b); ++t) {
          nan_row(k, kv_data.host.row_offset(b, g, t));
          nan_row(v, kv_data.host.row_offset(b, g, t));
        }
    DeviceBuffer<Elem> dk(k), dv(v);
    launch_twice(kv_data.scales.attach(
        ContiguousKV<Elem>::make(dk.get(), dv.get(), s.heads_kv, kv_data.slot_len, s.head_dim), true));
  } else {
    testing::PagedSeq<Elem> paged = kv_data.paged;
    const PagedKV<Elem> host_view = paged.view(s);  // resolves rows through the entries as scattered
    for (int b = 0; b < seqs; ++b)
      for (int g = 0; g < s.heads_kv; ++g)
        for (std::int64_t t = 0; t < first_seen(b); ++t) {
          nan_row(paged.k, host_view.row_offset(b, g, t));
          nan_row(paged.v, host_view.row_offset(b, g, t));
        }
    for (int b = 0; b < seqs; ++b)
      for (std::int64_t page = 0; (page + 1) * c.page_size <= first_seen(b); ++page, ++result.released_pages)
        paged.page_indices[paged.indptr[b] + page] = -1;
    // The arena behind one NaN page: entry -1 reads it, in bounds.
    const std::size_t stride = static_cast<std::size_t>(s.heads_kv) * c.page_size * s.head_dim;
    std::vector<Elem> k(stride, nan), v(stride, nan);
    k.insert(k.end(), paged.k.begin(), paged.k.end());
    v.insert(v.end(), paged.v.begin(), paged.v.end());
    DeviceBuffer<Elem> dk(k), dv(v);
    DeviceBuffer<std::int32_t> pages(paged.page_indices.empty() ? std::vector<std::int32_t>{0} : paged.page_indices),
        indptr(paged.indptr);
    launch_twice(kv_data.scales.attach(PagedKV<Elem>{dk.get() + stride, dv.get() + stride, pages.get(), indptr.get(),
                                                     c.page_size, s.heads_kv, s.head_dim},
                                       true));
  }
  return result;
}

ShortVariantResult run_case(DType dtype, const ShortVariantCase& c) {
  return dtype == DType::bf16 ? run_short_variant_case<__nv_bfloat16>(c) : run_short_variant_case<__half>(c);
}

// Runs `c`: it must plan on the short path (the stage of its window's tokens), match the
// reference at both launches and write the empty sequences' closed form.
DecodePlan expect_short_verified(DType dtype, const ShortVariantCase& c) {
  SCOPED_TRACE(describe(dtype, c));
  const ShortVariantResult r = run_case(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << cudaGetErrorString(r.status);
  EXPECT_EQ(r.plan.path, DecodePath::short_seq);
  const std::int64_t max_len = *std::max_element(c.lengths.begin(), c.lengths.end());
  const std::int64_t tokens = c.variant.window > 0 ? std::min(max_len, c.variant.window) : max_len;
  EXPECT_EQ(r.plan.tile_tokens, std::max<std::int64_t>(tokens, 1));
  EXPECT_EQ(r.plan.num_splits, 1);
  EXPECT_EQ(r.plan.workspace_bytes, 0u);
  EXPECT_TRUE(r.verification.passed) << r.verification.summary();
  EXPECT_TRUE(r.empty_sequences_ok);
  return r.plan;
}

const std::vector<std::int32_t> kLengths{0, 1, 64, 65, 127, 128, 129, 1000, 4097};
constexpr DecodeShape kGptOss{64, 8, 64};

// Every window, sink and cap of the brief at FP16 32 / 8 d 128 and BF16 64 / 8 d 64, the layouts
// taking turns (contiguous, pages of 1, 7, 16), under DECODE_BENCH_FD_SHORT_MAX_LEN=128 (the
// automatic route leaves gpt-oss's 9 sequences, 8 heads a long-stage block, on the row twins).
TEST(ShortDecodeVariantGpu, WindowsSinksAndCapsOverBoundaryLengths) {
  DB_REQUIRE_GPU();
  const int pages[] = {0, 1, 7, 16};
  std::uint64_t seed = 5000;
  DecodeOptions long_stage;
  long_stage.tuning.fd_short_max_len = 128;
  int i = 0;
  for (std::int64_t window : {1, 5, 63, 64, 65, 128})
    for (bool sinks : {false, true})
      for (double cap : {0.0, 5.0, 30.0}) {
        const AttentionVariant v{.window = window, .sinks = sinks, .logits_soft_cap = cap};
        expect_short_verified(DType::fp16, {{32, 8, 128}, kLengths, pages[i % 4], v, long_stage, ++seed});
        expect_short_verified(DType::bf16, {kGptOss, kLengths, pages[(i + 2) % 4], v, long_stage, ++seed});
        ++i;
      }
}

// Groups 1, 4, 8 and 16 and MQA 71 / 1 at d 64 (BF16: the row twins' d 64 storage), MHA and 32 / 8
// at d 128 (FP16), each at both stages (windows 5 and 100) under DECODE_BENCH_FD_SHORT_MAX_LEN=128
// (MHA's long stage stays on the CUDA-core twins otherwise), contiguous and pages of 16: the variant
// kernels' head bounds 4 (1-4 heads a block), 8 and 16, and a group split over several blocks
// whose last one is short.
TEST(ShortDecodeVariantGpu, GroupsAndHeadBounds) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 5500;
  // The boundaries but 4097 (the first test's), so that MHA's 32 KV heads stay a small case.
  const std::vector<std::int32_t> lengths{0, 1, 64, 65, 127, 128, 129, 1000};
  std::vector<std::int32_t> seventeen = lengths;  // 17 sequences: 136 (sequence, KV head) pairs at 8 KV heads
  seventeen.insert(seventeen.end(), {3, 50, 64, 66, 90, 100, 128, 300, 2});
  DecodeOptions long_stage;
  long_stage.tuning.fd_short_max_len = 128;
  for (int page : {0, 16})
    for (std::int64_t window : {5, 100}) {
      const AttentionVariant v{.window = window, .sinks = true, .logits_soft_cap = 30.0};
      for (DecodeShape shape : {DecodeShape{8, 8, 64}, DecodeShape{32, 8, 64}, kGptOss, DecodeShape{71, 1, 64}})
        expect_short_verified(DType::bf16, {shape, lengths, page, v, long_stage, ++seed});
      const DecodePlan g16 = expect_short_verified(DType::bf16, {{128, 8, 64}, seventeen, page, v, long_stage, ++seed});
      if (window == 100) {
        EXPECT_EQ(g16.query_heads_per_block, 16);  // 136 pairs: one part a pair
      }
      const DecodePlan mqa = expect_short_verified(DType::bf16, {{71, 1, 64}, {129, 64, 1000}, page, v, long_stage, ++seed});
      EXPECT_NE(71 % mqa.query_heads_per_block, 0);  // the last block short
      for (DecodeShape shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 8, 128}})
        expect_short_verified(DType::fp16, {shape, lengths, page, v, long_stage, ++seed});
    }
}

// gpt-oss's sliding layers at the models preset's shapes (window 128, sinks; one sequence of 32K
// and 16 of 4K), contiguous and pages of 16. The automatic route takes the long stage for both (4
// heads a block for the one sequence, whole groups of 8 for the 16); DECODE_BENCH_FD_SHORT_SEQ=off
// and DECODE_BENCH_FD_SHORT_MAX_LEN=64 keep them on the tensor-core row twins. Every run verified.
TEST(ShortDecodeVariantGpu, GptOssSlidingPoints) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 5900;
  const AttentionVariant v{.window = 128, .sinks = true};
  const auto expect_row_twins = [](const ShortVariantCase& c, const std::string& what) {
    SCOPED_TRACE(describe(DType::bf16, c) + what);
    const ShortVariantResult r = run_case(DType::bf16, c);
    ASSERT_EQ(r.status, cudaSuccess) << cudaGetErrorString(r.status);
    EXPECT_EQ(r.plan.path, DecodePath::tensor_core);
    EXPECT_TRUE(r.verification.passed) << r.verification.summary();
  };
  for (int page : {0, 16})
    for (const std::vector<std::int32_t>& lengths : {std::vector<std::int32_t>{32768}, std::vector<std::int32_t>(16, 4096)}) {
      const bool one = lengths.size() == 1;
      ShortVariantCase c{kGptOss, lengths, page, v, {}, ++seed};
      const DecodePlan plan = expect_short_verified(DType::bf16, c);  // automatic
      EXPECT_EQ(plan.query_heads_per_block, one ? 4 : 8);
      ShortVariantCase off{kGptOss, lengths, page, v, {}, c.seed};
      off.options.tuning.fd_short_seq = false;
      expect_row_twins(off, " DECODE_BENCH_FD_SHORT_SEQ=off");
      ShortVariantCase closed{kGptOss, lengths, page, v, {}, c.seed};
      closed.options.tuning.fd_short_max_len = 64;
      expect_row_twins(closed, " DECODE_BENCH_FD_SHORT_MAX_LEN=64");
    }
}

// A small case for compute-sanitizer (memcheck, racecheck): both stages (windows 64 and 100) with
// sinks and a cap over pages of 7 (released entries reach the NaN page in front, in bounds) and an
// empty sequence; BF16 gpt-oss's shape contiguous.
TEST(ShortDecodeVariantGpu, Small) {
  DB_REQUIRE_GPU();
  for (std::int64_t window : {64, 100})
    expect_short_verified(DType::fp16, {{32, 8, 128}, {0, 1, 65, 130}, 7, {.window = window, .sinks = true, .logits_soft_cap = 5.0},
                                        {}, 6000 + static_cast<std::uint64_t>(window)});
  expect_short_verified(DType::bf16, {kGptOss, {200, 3}, 0, {.window = 128, .sinks = true}, {}, 6200});
}

}  // namespace
}  // namespace decode_bench
