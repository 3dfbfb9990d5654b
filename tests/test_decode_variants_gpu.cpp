// decode-bench's attention variants (q_len > 1, a sliding window, sinks, logits soft-cap) on the
// tensor-core row kernel (kernels/row_attention_variant.cuh) against the float64 variant reference
// (kernels/cpu_reference_variant.hpp), on fresh random data with o and lse poisoned before the
// launch: query lengths 1-16 at GQA groups 1, 4, 7, 8 and MQA; windows of 1, a page minus one, a
// page, T - 1, T and beyond over shuffled pages and contiguous slabs; sinks and soft-cap alone,
// together and with q_len > 1 and a window; forced splits (the merge adds the sinks); BF16 at head
// dim 64 (gpt-oss). Skipped with the reason where no GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tests/decode_variant_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

using testing::DecodeVariantCase;
using testing::DecodeVariantResult;

// The case (tests/decode_variant_case.hpp: the planner's options unless it pins splits) verified,
// on the tensor-core row family when it is a variant. DECODE_BENCH_FD_SHORT_SEQ=off: one query token
// whose window holds at most 128 tokens (or a sequence that short) plans on the short path otherwise
// (tests/test_short_decode_variant_gpu.cpp).
void expect_verified(DType dtype, DecodeVariantCase c) {
  c.options.tuning.fd_short_seq = false;
  const DecodeVariantResult r = testing::run_decode_variant_case(dtype, c);
  ASSERT_EQ(r.status, cudaSuccess) << testing::describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  if (!c.variant.plain()) {
    EXPECT_EQ(r.plan.path, DecodePath::tensor_core) << testing::describe(dtype, c);
  }
  EXPECT_TRUE(r.verification.passed) << testing::describe(dtype, c) << ": " << r.verification.summary();
}

// Query lengths 1-16 at GQA groups 1, 4, 7, 8 and MQA: group x q_len rows an item, from one
// 16-row block (narrow tiling) to several wide blocks (MQA 32 heads x 16 tokens = 512 rows).
TEST(DecodeVariantsGpu, QueryLengthsAndGroups) {
  DB_REQUIRE_GPU();
  const DecodeShape shapes[] = {{8, 8, 128}, {32, 8, 128}, {28, 4, 128}, {64, 8, 128}, {32, 1, 128}};
  for (const DecodeShape& shape : shapes)
    for (int q_len : {1, 2, 3, 8, 16})
      for (int page : {0, 16}) {
        DecodeVariantCase c{shape, {1013, 16, 300}, page, {.q_len = q_len}};
        c.lengths[1] = std::max(q_len, 16);
        c.seed = static_cast<std::uint64_t>(q_len * 100 + shape.group() + page);
        expect_verified(DType::fp16, c);
      }
  for (int q_len : {2, 7, 16}) expect_verified(DType::bf16, {{32, 8, 128}, {517, 64}, 16, {.q_len = q_len}, {}, 5});
}

// Windows of 1, a page minus one, a page, T - 1, T and past T, on shuffled pages and contiguous
// K/V, one query token and four (each token its own window; the item's range starts at the first
// token's). Page 7 makes windows and tiles cross page edges anywhere.
TEST(DecodeVariantsGpu, Windows) {
  DB_REQUIRE_GPU();
  constexpr std::int32_t T = 1013;
  for (int page : {0, 16, 7})
    for (int q_len : {1, 4})
      for (std::int64_t window : {1, 15, 16, 63, 64, 65, T - 1, T, T + 100}) {
        DecodeVariantCase c{{32, 8, 128}, {T, 200, 64}, page, {.q_len = q_len, .window = window}};
        c.seed = static_cast<std::uint64_t>(window * 10 + page + q_len);
        expect_verified(DType::fp16, c);
      }
  expect_verified(DType::bf16, {{32, 8, 128}, {4096, 333}, 16, {.q_len = 3, .window = 128}, {}, 9});
}

// Sinks and the soft-cap, alone and together, with q_len > 1 and a window, unsplit and over forced
// splits (the merge adds the sinks: merge_if_last): 64 rows an item (q_len 16 x group 4) take the
// merge's many-rows branch, 16 rows its few-rows branch. A cap of 5 bends the generated logits
// (|s| up to about 4) well away from the uncapped ones.
TEST(DecodeVariantsGpu, SinksAndSoftCap) {
  DB_REQUIRE_GPU();
  const AttentionVariant variants[] = {
      {.sinks = true},
      {.logits_soft_cap = 50.0},
      {.logits_soft_cap = 5.0},
      {.q_len = 4, .sinks = true, .logits_soft_cap = 5.0},
      {.q_len = 16, .window = 100, .sinks = true},
      {.q_len = 3, .window = 16, .sinks = true, .logits_soft_cap = 30.0},
  };
  for (const AttentionVariant& v : variants)
    for (int splits : {0, 1, 7, 40})
      for (DType dtype : {DType::fp16, DType::bf16})
        expect_verified(dtype, {{32, 8, 128}, {1013, 77}, 16, v, {.splits = splits}, static_cast<std::uint64_t>(splits + 3)});
  // Every split of an item but one empty for some rows (window 1 at q_len 4 over 40 splits).
  expect_verified(DType::fp16, {{32, 8, 128}, {1013}, 0, {.q_len = 4, .window = 1, .sinks = true}, {.splits = 40}, 4});
  // Head dim 64 (BF16, gpt-oss's heads): 128 rows an item (q_len 16 x group 8) on the wide tiling,
  // whose many-rows merge takes each row's statistics a thread per row up to 16 splits (7 here) and
  // a warp per row above (40), the sink in both.
  for (int splits : {7, 40})
    expect_verified(DType::bf16, {{64, 8, 64}, {1013, 77}, 16, {.q_len = 16, .sinks = true, .logits_soft_cap = 30.0},
                                  {.splits = splits}, static_cast<std::uint64_t>(50 + splits)});
}

// A few small cases of every code path the variants add, for the sanitizer tier (memcheck and
// racecheck): the narrow tiling unsplit and split (the merge's sink), the wide tiling over several
// row blocks (MQA at q_len 16), windows with per-row edges on pages of 7.
TEST(DecodeVariantsGpu, Small) {
  DB_REQUIRE_GPU();
  const AttentionVariant all{.q_len = 3, .window = 16, .sinks = true, .logits_soft_cap = 20.0};
  for (int splits : {1, 5}) {
    expect_verified(DType::fp16, {{32, 8, 128}, {300, 40}, 7, all, {.splits = splits}, 21});
    expect_verified(DType::bf16, {{32, 8, 128}, {300}, 0, all, {.splits = splits}, 22});
    expect_verified(DType::fp16, {{16, 1, 128}, {200}, 7, {.q_len = 16, .window = 50, .sinks = true}, {.splits = splits}, 23});
  }
}

// Head dims below 128 run on the head-dim-128 kernel with the tail masked.
TEST(DecodeVariantsGpu, HeadDimsOfTheCompiledKernel) {
  DB_REQUIRE_GPU();
  for (int d : {80, 96, 112})
    expect_verified(DType::fp16, {{32, 8, d}, {700}, 16, {.q_len = 2, .window = 300, .sinks = true, .logits_soft_cap = 20.0}});
}

// gpt-oss's attention on the BF16 head-dim-64 variant kernels (the models preset's gpt_oss_*
// points): 64 q / 8 KV heads, windows of 1, a page minus one, a page, T - 1, T and none, each with
// and without sinks, over shuffled pages of 16 and 7 and contiguous K/V, unsplit and over forced
// splits (the merge adds the sinks); then the preset's own shapes (window 128 over T 32K, sinks),
// q_len 2, the wide tiling (MQA at q_len 16) and head dim 48 on the same kernel, its tail masked.
TEST(DecodeVariantsGpu, HeadDim64WindowsAndSinks) {
  DB_REQUIRE_GPU();
  constexpr std::int32_t T = 1013;
  for (int page : {0, 16, 7}) {
    const std::int64_t pg = page == 0 ? 16 : page;
    for (std::int64_t window : {std::int64_t{1}, pg - 1, pg, std::int64_t{T - 1}, std::int64_t{T}, std::int64_t{0}})
      for (bool sinks : {false, true})
        for (int splits : {0, 5}) {
          if (window == 0 && !sinks) continue;  // plain decode: not a variant
          DecodeVariantCase c{{64, 8, 64}, {T, 300, 64}, page, {.window = window, .sinks = sinks}, {.splits = splits}};
          c.seed = static_cast<std::uint64_t>(window * 10 + page + splits + (sinks ? 1 : 0));
          expect_verified(DType::bf16, c);
        }
  }
  expect_verified(DType::bf16, {{64, 8, 64}, {32768}, 16, {.window = 128, .sinks = true}, {}, 31});
  expect_verified(DType::bf16, {{64, 8, 64}, {4096, 4096}, 0, {.window = 128, .sinks = true}, {}, 32});
  expect_verified(DType::bf16, {{64, 8, 64}, {4096, 517}, 16, {.sinks = true}, {}, 33});
  expect_verified(DType::bf16, {{64, 8, 64}, {700, 129}, 7, {.q_len = 2, .window = 128, .sinks = true}, {.splits = 3}, 34});
  expect_verified(DType::bf16, {{32, 1, 64}, {600}, 16, {.q_len = 16, .window = 100, .sinks = true}, {}, 35});
  expect_verified(DType::bf16, {{64, 8, 48}, {700}, 16, {.window = 128, .sinks = true, .logits_soft_cap = 20.0}, {}, 36});
}

// A window reads only the window: a windowed plan over T 32K is the plan of full attention over the
// window's tokens (the same splits and tiles), and it verifies.
TEST(DecodeVariantsGpu, AWindowIsPlannedAsItsTokens) {
  DB_REQUIRE_GPU();
  DecodeVariantCase windowed{{32, 8, 128}, {32768}, 16, {.q_len = 4, .window = 1024}};
  DecodeVariantCase short_full{{32, 8, 128}, {1024 + 3}, 16, {.q_len = 4}};
  const DecodeVariantResult a = testing::run_decode_variant_case<__half>(windowed),
                            b = testing::run_decode_variant_case<__half>(short_full);
  ASSERT_EQ(a.status, cudaSuccess);
  ASSERT_EQ(b.status, cudaSuccess);
  EXPECT_TRUE(a.verification.passed) << a.verification.summary();
  EXPECT_EQ(a.plan.rows.splits, b.plan.rows.splits);
  EXPECT_EQ(a.plan.rows.rows_per_block, b.plan.rows.rows_per_block);
  EXPECT_EQ(a.plan.rows.workspace_bytes, b.plan.rows.workspace_bytes);
}

}  // namespace
}  // namespace decode_bench
