// The warpgroup-MMA row kernel's twin for attention variants of one query token (a window, a
// logits soft-cap, sinks; kernels/row_attention_wgmma.cuh, kVariant) through plan_decode /
// run_decode, against the float64 variant reference on fresh random data with o and lse poisoned
// first (tests/decode_variant_case.hpp): FP16 at d 128 (groups 4 and 7) and BF16 at d 64 (gpt-oss's
// 64 / 8 heads), windows of 1, a tile minus one, a tile, a tile plus one and past T, each with and
// without sinks and a cap, unsplit and over 3 and 17 splits (the fused merge adds the sinks),
// contiguous and over shuffled pages of 16 and 7, lengths of 1 to 1013; and which variants the
// planner sends to it. Skipped with the reason where no GPU exists or it is not compute capability
// 9.0 (or the build has no sm_90a kernel).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/device_buffer.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/row_attention_balance.hpp"  // nonempty_chunks
#include "tests/decode_variant_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

using testing::DecodeVariantCase;
using testing::DecodeVariantResult;

// The case run and verified; wgmma: whether the plan must be on the warpgroup-MMA kernel. The
// short path is off (a window of at most 128 tokens plans there otherwise).
DecodeVariantResult expect_verified(DType dtype, DecodeVariantCase c, bool wgmma) {
  c.options.tuning.fd_short_seq = false;
  const DecodeVariantResult r = testing::run_decode_variant_case(dtype, c);
  const std::string what = testing::describe(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
  if (r.status != cudaSuccess) return r;
  EXPECT_EQ(r.plan.path, DecodePath::tensor_core) << what;
  EXPECT_EQ(r.plan.rows.wgmma, wgmma) << what;
  if (wgmma) {
    EXPECT_FALSE(r.plan.rows.cluster_merge) << what;  // the twin's splits merge fused, with the sinks
    EXPECT_FALSE(r.plan.rows.separate_merge) << what;
  }
  EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
  return r;
}

struct Layout {
  DType dtype;
  DecodeShape shape;
};

TEST(DecodeVariantsWgmmaGpu, WindowsCapsAndSinksOverSplitsAndPages) {
  DB_REQUIRE_WGMMA();
  const Layout layouts[] = {{DType::fp16, {32, 8, 128}}, {DType::fp16, {28, 4, 128}}, {DType::bf16, {64, 8, 64}}};
  const AttentionVariant variants[] = {
      {.window = 1},
      {.window = 63, .sinks = true},
      {.window = 64, .logits_soft_cap = 20.0},
      {.window = 65, .sinks = true, .logits_soft_cap = 30.0},
      {.sinks = true},
      {.logits_soft_cap = 5.0},
      {.window = 1 << 20, .sinks = true},
  };
  std::uint64_t seed = 12000;
  for (const Layout& l : layouts)
    for (int page : {0, 16, 7})
      for (const AttentionVariant& v : variants)
        for (int splits : {0, 3}) {
          DecodeVariantCase c{l.shape, {1013, 1, 64, 300}, page, v, {.splits = splits}, ++seed};
          c.options.tuning.row_tiling = RowAttentionTiling::wgmma;
          expect_verified(l.dtype, c, true);
        }
  // Many splits of one long sequence: each split a tile or less, several empty past a window.
  for (const Layout& l : layouts) {
    DecodeVariantCase c{l.shape, {2000}, 16, {.window = 700, .sinks = true, .logits_soft_cap = 20.0}, {.splits = 17}, ++seed};
    c.options.tuning.row_tiling = RowAttentionTiling::wgmma;
    expect_verified(l.dtype, c, true);
  }
}

// What the planner sends to the twin with nothing pinned: one query token at d 128 (FP16) at any
// batch, and at d 64 (BF16) at any batch; several query tokens, and BF16 at d 128 (no twin
// compiled), stay on mma.sync.
TEST(DecodeVariantsWgmmaGpu, TheAutomaticChoice) {
  DB_REQUIRE_WGMMA();
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const AttentionVariant sinks{.sinks = true};
  const DecodeShape gqa{32, 8, 128}, oss{64, 8, 64};
  expect_verified(DType::fp16, {gqa, {4000}, 16, sinks, {}, 1}, true);
  expect_verified(DType::fp16, {gqa, std::vector<std::int32_t>(64, 900), 0, {.window = 512}, {}, 2}, true);
  expect_verified(DType::fp16, {gqa, {4000}, 16, {.logits_soft_cap = 50.0}, {}, 3}, true);
  expect_verified(DType::fp16, {gqa, {4000}, 16, {.q_len = 2, .sinks = true}, {}, 4}, false);
  expect_verified(DType::bf16, {gqa, {4000}, 16, sinks, {}, 5}, false);
  const int fill = (sms + oss.heads_kv - 1) / oss.heads_kv;  // sequences whose items fill the SMs
  expect_verified(DType::bf16, {oss, std::vector<std::int32_t>(fill, 300), 16, sinks, {}, 6}, true);
  expect_verified(DType::bf16, {oss, std::vector<std::int32_t>(fill - 1, 300), 16, sinks, {}, 7}, true);
  expect_verified(DType::bf16, {oss, std::vector<std::int32_t>(fill - 1, 300), 0, sinks, {}, 9}, true);
  // The split rule of grouped decodes on this kernel: about one block an SM.
  const DecodeVariantResult one = expect_verified(DType::fp16, {gqa, {32768}, 0, sinks, {}, 8}, true);
  EXPECT_EQ(one.plan.rows.splits, sms / gqa.heads_kv);
  // BF16 at d 64: about two blocks an SM, or one where DECODE_BENCH_ROW_DECODE_SPLITS pins sms;
  // either count less the splits the whole-tile cut would leave empty (132 SMs: 33 -> 32).
  const DecodeVariantResult two = expect_verified(DType::bf16, {oss, {32768}, 16, sinks, {}, 10}, true);
  EXPECT_EQ(two.plan.rows.splits, nonempty_chunks(32768, 2 * sms / oss.heads_kv, two.plan.rows.tile_tokens));
  EXPECT_EQ(two.plan.active_splits, two.plan.rows.splits);
  DecodeVariantCase pinned{oss, {32768}, 16, sinks, {}, 11};
  pinned.options.tuning.row_decode_splits = RowDecodeSplits::sms;
  const DecodeVariantResult one_an_sm = expect_verified(DType::bf16, pinned, true);
  EXPECT_EQ(one_an_sm.plan.rows.splits, nonempty_chunks(32768, sms / oss.heads_kv, one_an_sm.plan.rows.tile_tokens));
}

// run_row_attention refuses a plan on the twin for a variant the twin does not take (several query
// tokens, explicit items), before any launch: a plan made for one query token, run with two.
TEST(DecodeVariantsWgmmaGpu, APlanOnTheTwinIsRefusedForSeveralQueryTokens) {
  DB_REQUIRE_WGMMA();
  RowAttentionProblem p;
  p.shape = DecodeShape{32, 8, 128};
  p.kv_dtype = DType::fp16;
  p.num_items = 8;
  p.num_rows = 32;
  p.max_item_rows = 4;
  p.max_item_tokens = 1000;
  p.variant.window = 100;
  RowAttentionPlan plan;
  ASSERT_EQ(plan_row_attention<ContiguousKV<__half>>(p, {}, &plan), cudaSuccess);
  ASSERT_TRUE(plan.wgmma);
  DeviceBuffer<float> q(64 * 128), o(64 * 128), lse(64);
  DeviceBuffer<std::int32_t> lens(1);
  p.q = q.get();
  p.o = o.get();
  p.lse = lse.get();
  p.seq_lens = lens.get();
  p.variant.q_len = 2;
  DeviceBuffer<std::uint8_t> workspace(std::max<std::size_t>(plan.workspace_bytes, 1));
  EXPECT_EQ(run_row_attention<ContiguousKV<__half>>(ContiguousKV<__half>{}, p, plan, workspace.get(), nullptr),
            cudaErrorInvalidValue);
}

// Small enough for compute-sanitizer memcheck and racecheck: both compiled twins, unsplit and
// over 3 splits (the fused merge with the sinks), a window, a cap and sinks, pages of 7.
TEST(DecodeVariantsWgmmaGpu, Small) {
  DB_REQUIRE_WGMMA();
  const AttentionVariant all{.window = 100, .sinks = true, .logits_soft_cap = 20.0};
  for (int splits : {1, 3}) {
    DecodeVariantCase fp16{{8, 2, 128}, {300, 5}, 7, all, {.splits = splits}, 21};
    fp16.options.tuning.row_tiling = RowAttentionTiling::wgmma;
    expect_verified(DType::fp16, fp16, true);
    DecodeVariantCase bf16{{16, 2, 64}, {300, 5}, 7, all, {.splits = splits}, 22};
    bf16.options.tuning.row_tiling = RowAttentionTiling::wgmma;
    expect_verified(DType::bf16, bf16, true);
  }
}

}  // namespace
}  // namespace decode_bench
