// The attention variants (sinks, logit soft-cap, sliding window, q_len > 1) on FP8 K/V (E4M3 and
// E5M2) through plan_decode / run_decode, on the tensor-core row kernel's FP8 twins
// (kernels/instantiate/row_attention_variant_fp8.cu, the narrow tiling only), against the float64
// variant reference on the generator's FP8 bytes and per-head scales (tests/decode_variant_case.hpp:
// o, lse and the workspace poisoned first). GQA groups 1, 4, 7 and MQA, contiguous K/V and shuffled
// pages of 16 and 7, soft-caps of 50 and 5 (a cap of 5 bends the larger FP8 logits well away from
// the uncapped ones, so a cap applied before the K scale would fail), windows of 1, a page minus one,
// a page, T - 1 and T, with q_len 1, 3 and 8, unsplit and over forced splits (the merge adds the
// sinks). Points with a cap are held to 4e-3, the others to 1e-5 (harness/verify.hpp). Every case
// asserts the family that ran: FP8 variants take the row kernel at every group, also 1 and 4 where
// the plain FP8 point runs on the CUDA cores. Skipped with the reason where no GPU exists.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/decode_variant_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

using testing::DecodeVariantCase;
using testing::DecodeVariantResult;

constexpr DecodeShape kGroup1{32, 32, 128};
constexpr DecodeShape kGroup4{32, 8, 128};
constexpr DecodeShape kGroup7{28, 4, 128};
constexpr DecodeShape kMqa{8, 1, 128};
constexpr DType kFp8[] = {DType::fp8_e4m3, DType::fp8_e5m2};

// Runs the case, asserts that it ran on the row kernel's narrow tiling (FP8 has no wide one) with
// the tolerance of its variant, and that it verified; returns its plan.
DecodePlan expect_verified(DType dtype, const DecodeVariantCase& c) {
  const DecodeVariantResult r = testing::run_decode_variant_case(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << testing::describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  if (r.status != cudaSuccess) return r.plan;
  EXPECT_EQ(r.plan.path, DecodePath::tensor_core) << testing::describe(dtype, c);
  EXPECT_FALSE(r.plan.rows.wide) << testing::describe(dtype, c);
  EXPECT_EQ(r.verification.tolerance, c.variant.logits_soft_cap > 0 ? 4e-3 : 1e-5) << testing::describe(dtype, c);
  EXPECT_TRUE(r.verification.passed) << testing::describe(dtype, c) << ": " << r.verification.summary();
  return r.plan;
}

// Sinks, soft-cap 50 and 5, and sinks with a cap, at groups 1, 4, 7 and MQA, contiguous and over
// shuffled pages of 16 and 7, one query token and three.
TEST(DecodeVariantsFp8Gpu, SinksAndSoftCap) {
  DB_REQUIRE_GPU();
  const AttentionVariant variants[] = {{.sinks = true},
                                       {.logits_soft_cap = 50.0},
                                       {.logits_soft_cap = 5.0},
                                       {.sinks = true, .logits_soft_cap = 5.0},
                                       {.q_len = 3, .sinks = true, .logits_soft_cap = 50.0}};
  std::uint64_t seed = 100;
  for (DType dtype : kFp8)
    for (const DecodeShape& shape : {kGroup1, kGroup4, kGroup7, kMqa})
      for (const AttentionVariant& v : variants)
        for (int page : {0, 16, 7}) expect_verified(dtype, {shape, {1013, 77}, page, v, {}, ++seed});
}

// Windows of 1, a page minus one, a page, T - 1 and T (page 16 for contiguous K/V), each with q_len
// 1, 3 and 8 (every token its own window; the item's range starts at the first token's), at group 4
// and MQA, E4M3 over every layout and E5M2 over pages of 7; some with sinks and a cap of 5 on top.
TEST(DecodeVariantsFp8Gpu, WindowsWithQueryLengths) {
  DB_REQUIRE_GPU();
  constexpr std::int32_t T = 1013;
  std::uint64_t seed = 200;
  for (DType dtype : kFp8)
    for (int page : {0, 16, 7}) {
      if (dtype == DType::fp8_e5m2 && page != 7) continue;
      const std::int64_t pg = page == 0 ? 16 : page;
      for (std::int64_t window : {std::int64_t{1}, pg - 1, pg, std::int64_t{T - 1}, std::int64_t{T}})
        for (int q_len : {1, 3, 8})
          for (const DecodeShape& shape : {kGroup4, kMqa}) {
            ++seed;
            const bool extras = seed % 3 == 0;  // a third of them with sinks and a cap of 5 as well
            const AttentionVariant v{.q_len = q_len, .window = window, .sinks = extras,
                                     .logits_soft_cap = extras ? 5.0 : 0.0};
            expect_verified(dtype, {shape, {T, 200, 64}, page, v, {}, seed});
          }
    }
}

// Query lengths 1, 3 and 8 at groups 1, 4, 7 and MQA: group x q_len rows an item, from one 16-row
// block to items of more rows than a 64-row narrow block holds (MQA 32 / 1 at q_len 3 and 8: 96 and
// 256 rows, several row blocks an item, since FP8 has no wide tiling).
TEST(DecodeVariantsFp8Gpu, QueryLengthsAndGroups) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 300;
  for (DType dtype : kFp8)
    for (const DecodeShape& shape : {kGroup1, kGroup4, kGroup7, kMqa, DecodeShape{32, 1, 128}})
      for (int q_len : {1, 3, 8})
        for (int page : {0, 16}) {
          if (q_len == 1) {  // plain decode is not a variant: sinks make it one
            expect_verified(dtype, {shape, {1013, 16, 300}, page, {.sinks = true}, {}, ++seed});
            continue;
          }
          const DecodePlan plan = expect_verified(dtype, {shape, {1013, 16, 300}, page, {.q_len = q_len}, {}, ++seed});
          if (shape.group() * q_len > 64) {
            EXPECT_EQ(plan.rows.rows_per_block, 64) << dtype_name(dtype) << " q_len " << q_len;
          }
        }
}

// Forced splits (the merge adds the sinks: 16-row items take the merge's few-rows branch, 64-row
// items, q_len 16 at group 4, its many-rows branch), with windows and a cap.
TEST(DecodeVariantsFp8Gpu, Splits) {
  DB_REQUIRE_GPU();
  const AttentionVariant variants[] = {{.sinks = true, .logits_soft_cap = 50.0},
                                       {.q_len = 4, .window = 100, .sinks = true, .logits_soft_cap = 5.0},
                                       {.q_len = 16, .window = 300, .sinks = true}};
  std::uint64_t seed = 400;
  for (DType dtype : kFp8)
    for (const AttentionVariant& v : variants)
      for (int splits : {1, 7, 40}) {
        const DecodePlan plan = expect_verified(dtype, {kGroup4, {1013, 77}, 16, v, {.splits = splits}, ++seed});
        EXPECT_EQ(plan.num_splits, splits);
      }
  // Every split of an item but one empty for some rows (window 1 at q_len 4 over 40 splits).
  expect_verified(DType::fp8_e4m3, {kGroup4, {1013}, 0, {.q_len = 4, .window = 1, .sinks = true}, {.splits = 40}, 499});
}

// Head dims 80, 96 and 112 run on the head-dim-128 twin with the tail masked.
TEST(DecodeVariantsFp8Gpu, HeadDimsOfTheCompiledKernel) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 500;
  for (DType dtype : kFp8)
    for (int d : {80, 96, 112})
      expect_verified(dtype, {{32, 8, d}, {700}, 16, {.q_len = 2, .window = 300, .sinks = true, .logits_soft_cap = 20.0},
                              {}, ++seed});
}

// A few small cases for the sanitizer tier (memcheck and racecheck): every variant at once on pages
// of 7, unsplit and split, and MQA at q_len 8 over two 64-row blocks an item.
TEST(DecodeVariantsFp8Gpu, Small) {
  DB_REQUIRE_GPU();
  const AttentionVariant all{.q_len = 3, .window = 16, .sinks = true, .logits_soft_cap = 20.0};
  for (int splits : {1, 5}) {
    expect_verified(DType::fp8_e4m3, {kGroup4, {300, 40}, 7, all, {.splits = splits}, 61});
    expect_verified(DType::fp8_e5m2, {{16, 1, 128}, {200}, 7, {.q_len = 8, .window = 50, .sinks = true}, {.splits = splits}, 62});
  }
}

}  // namespace
}  // namespace decode_bench
