// The attention variants of one query token (sinks, logit soft-cap, sliding window) on the CUDA-core
// split-K twins (kernels/flash_decode_variant.hpp) against the float64 variant reference, at MHA
// (32 q / 32 KV heads) and GQA group 2, FP16 and BF16, contiguous K/V and shuffled pages: unsplit,
// over the planner's splits and forced ones (the merge adds the sinks), the ragged work list, the
// short tiling, the separate merge kernel and two KV heads a block. Every case also asserts which
// family ran. Skipped with the reason where no GPU exists.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/flash_decode_variant.hpp"
#include "tests/decode_variant_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

using testing::DecodeVariantCase;
using testing::DecodeVariantResult;

constexpr DecodeShape kMha{32, 32, 128};
constexpr DecodeShape kGroup2{32, 16, 128};

// Runs the case, asserts that it ran on `path` and verified, and returns its plan.
// DECODE_BENCH_FD_SHORT_SEQ=off: one query token whose window (or sequence) holds at most 64 tokens
// plans on the short path otherwise (tests/test_short_decode_variant_gpu.cpp).
DecodePlan expect_verified(DType dtype, DecodeVariantCase c, DecodePath path = DecodePath::cuda_core) {
  c.options.tuning.fd_short_seq = false;
  const DecodeVariantResult r = testing::run_decode_variant_case(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << testing::describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  if (r.status != cudaSuccess) return r.plan;
  EXPECT_EQ(r.plan.path, path) << testing::describe(dtype, c);
  EXPECT_TRUE(r.verification.passed) << testing::describe(dtype, c) << ": " << r.verification.summary();
  return r.plan;
}

const AttentionVariant kSinks{.sinks = true};
const AttentionVariant kCap50{.logits_soft_cap = 50.0};
const AttentionVariant kBoth{.sinks = true, .logits_soft_cap = 50.0};

// Sinks, soft-cap 50 and both (the variant_costs experiment's points), and a cap of 5 that bends the
// generated logits (|s| up to about 4) well away from the uncapped ones: MHA and group 2, FP16 and
// BF16, contiguous and pages of 16, unsplit (1), the planner's split and forced splits of 7 and 40.
TEST(DecodeVariantsCudaCoreGpu, SinksAndSoftCap) {
  DB_REQUIRE_GPU();
  const AttentionVariant variants[] = {kSinks, kCap50, kBoth, {.logits_soft_cap = 5.0}, {.sinks = true, .logits_soft_cap = 5.0}};
  std::uint64_t seed = 1;
  for (const DecodeShape& shape : {kMha, kGroup2})
    for (const AttentionVariant& v : variants)
      for (int page : {0, 16})
        for (int splits : {0, 1, 7, 40})
          for (DType dtype : {DType::fp16, DType::bf16}) {
            const DecodePlan plan = expect_verified(dtype, {shape, {1013, 77}, page, v, {.splits = splits}, ++seed});
            if (splits > 0) {
              EXPECT_EQ(plan.num_splits, splits);
            }
          }
}

// One long sequence over many splits (1 x 4K at 32 heads: the planner's own split count, and 64 and
// 128 forced): the merge folds many partials and the sink once.
TEST(DecodeVariantsCudaCoreGpu, OneLongSequenceManySplits) {
  DB_REQUIRE_GPU();
  for (int splits : {0, 64, 128})
    for (const AttentionVariant& v : {kSinks, kCap50, kBoth})
      for (DType dtype : {DType::fp16, DType::bf16}) {
        const DecodePlan plan = expect_verified(dtype, {kMha, {4096}, 16, v, {.splits = splits}, 40u + splits});
        if (splits == 0) {
          EXPECT_GT(plan.num_splits, 1);
        }
      }
}

// Ragged batches (8 sequences of 1 to 300 tokens, host lengths known): the load-balanced work list,
// whose items are split or not sequence by sequence (sinks folded in the epilogue or the merge).
TEST(DecodeVariantsCudaCoreGpu, RaggedWorkList) {
  DB_REQUIRE_GPU();
  const std::vector<std::int32_t> lens{300, 17, 1, 299, 64, 128, 257, 5};
  for (const AttentionVariant& v : {kSinks, kCap50, kBoth, AttentionVariant{.window = 100, .sinks = true}})
    for (int page : {0, 16, 7})
      for (DType dtype : {DType::fp16, DType::bf16}) {
        const DecodePlan plan = expect_verified(dtype, {kMha, lens, page, v, {}, 60u + page});
        EXPECT_FALSE(plan.work_items.empty()) << "a ragged batch with host lengths plans a work list";
      }
  // Many sequences, split a few ways each, at group 2.
  std::vector<std::int32_t> many;
  for (int i = 0; i < 64; ++i) many.push_back(1 + (i * 733) % 3000);
  expect_verified(DType::fp16, {kGroup2, many, 16, kBoth, {}, 71});
}

// Sliding windows of 1, a page minus one, a page, a tile, T - 1, T and past T: the splits cover only
// the window (its first token at T - window), alone and with sinks and the soft-cap, unsplit and split.
TEST(DecodeVariantsCudaCoreGpu, Windows) {
  DB_REQUIRE_GPU();
  constexpr std::int32_t T = 1013;
  for (int page : {0, 16, 7})
    for (std::int64_t window : {1, 15, 16, 128, 300, T - 1, T, T + 100})
      for (int splits : {0, 1, 5}) {
        const AttentionVariant v{.window = window, .sinks = window % 2 == 0, .logits_soft_cap = window > 100 ? 30.0 : 0.0};
        expect_verified(DType::fp16, {kMha, {T, 200, 64}, page, v, {.splits = splits},
                                      static_cast<std::uint64_t>(window * 10 + page + splits)});
      }
  expect_verified(DType::bf16, {kGroup2, {4096, 333}, 16, {.window = 1024, .sinks = true, .logits_soft_cap = 50.0}, {}, 9});
}

// A window reads only the window: the windowed plan over T 32K is the plan of full attention over the
// window's tokens (the same splits and chunk), and it verifies.
TEST(DecodeVariantsCudaCoreGpu, AWindowIsPlannedAsItsTokens) {
  DB_REQUIRE_GPU();
  const DecodeVariantResult a = testing::run_decode_variant_case(DType::fp16, {kMha, {32768}, 16, {.window = 1024, .sinks = true}});
  const DecodeVariantResult b = testing::run_decode_variant_case(DType::fp16, {kMha, {1024}, 16, kSinks});
  ASSERT_EQ(a.status, cudaSuccess);
  ASSERT_EQ(b.status, cudaSuccess);
  EXPECT_EQ(a.plan.path, DecodePath::cuda_core);
  EXPECT_TRUE(a.verification.passed) << a.verification.summary();
  EXPECT_EQ(a.plan.num_splits, b.plan.num_splits);
  EXPECT_EQ(a.plan.chunk, b.plan.chunk);
  EXPECT_EQ(a.plan.workspace_bytes, b.plan.workspace_bytes);
}

// The short tiling (group 1, many short (sequence, head) blocks: 64 x 200 at 32 heads), the separate
// merge kernel (fused merge off, its sink), and two KV heads a block (the sinks' head index).
TEST(DecodeVariantsCudaCoreGpu, TilingsAndMerges) {
  DB_REQUIRE_GPU();
  const std::vector<std::int32_t> uniform(64, 200);
  for (DType dtype : {DType::fp16, DType::bf16}) {
    const DecodePlan plan = expect_verified(dtype, {kMha, uniform, 16, kBoth, {}, 81});
    EXPECT_EQ(plan.tiling, DecodeTiling::short_batch);
    expect_verified(dtype, {kMha, {2000, 1500}, 16, kBoth, {.splits = 9, .fused_merge = false}, 82});
    expect_verified(dtype, {kGroup2, {777}, 0, kSinks, {.splits = 1, .heads_per_block = 2}, 83});
    expect_verified(dtype, {kMha, {2000}, 7, kBoth, {.splits = 6, .heads_per_block = 2}, 84});
  }
}

// Head dims below 128 run on the head-dim-128 twin with the tail masked.
TEST(DecodeVariantsCudaCoreGpu, HeadDimsOfTheCompiledKernel) {
  DB_REQUIRE_GPU();
  for (int d : {80, 96, 112})
    expect_verified(DType::fp16, {{32, 32, d}, {700, 90}, 16, {.window = 300, .sinks = true, .logits_soft_cap = 20.0}});
}

// The routing as run: DECODE_BENCH_FD_VARIANT_PATH=tensor_core sends the same point to the row family
// (which verifies too); q_len 2 and group 4 stay there; plain MHA stays on the CUDA cores.
TEST(DecodeVariantsCudaCoreGpu, RoutingAsRun) {
  DB_REQUIRE_GPU();
  DecodeVariantCase c{kMha, {1013, 77}, 16, kBoth};
  expect_verified(DType::fp16, c, DecodePath::cuda_core);
  c.options.tuning.fd_variant_path = VariantPathOverride::tensor_core;
  expect_verified(DType::fp16, c, DecodePath::tensor_core);
  expect_verified(DType::fp16, {kMha, {1013, 77}, 16, {.q_len = 2, .sinks = true}}, DecodePath::tensor_core);
  expect_verified(DType::fp16, {{32, 8, 128}, {1013, 77}, 16, kBoth}, DecodePath::tensor_core);
}

// A few small cases of every path the twins add, for the sanitizer tier (memcheck and racecheck):
// unsplit (the epilogue's sink), fused and separate merges (the merge's sink), a window on pages of 7,
// the work list, the short tiling.
TEST(DecodeVariantsCudaCoreGpu, Small) {
  DB_REQUIRE_GPU();
  const AttentionVariant all{.window = 100, .sinks = true, .logits_soft_cap = 20.0};
  for (int splits : {1, 5}) {
    expect_verified(DType::fp16, {kMha, {300, 40}, 7, all, {.splits = splits}, 21});
    expect_verified(DType::bf16, {kGroup2, {300}, 0, all, {.splits = splits}, 22});
  }
  expect_verified(DType::fp16, {kMha, {500}, 16, kBoth, {.splits = 4, .fused_merge = false}, 23});
  expect_verified(DType::fp16, {kMha, {300, 17, 1, 129}, 16, all, {}, 24});
  expect_verified(DType::fp16, {kMha, std::vector<std::int32_t>(40, 100), 16, kBoth, {}, 25});
}

}  // namespace
}  // namespace decode_bench
