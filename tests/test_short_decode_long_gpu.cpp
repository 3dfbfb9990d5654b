// The short-sequence decode kernel's long stage (65-128 tokens: blocks of kShortLongWarps warps,
// rows of at most kShortLongMaxRowBytes, P V's 4-token steps shared by two threads a column;
// kernels/short_decode.cuh) against the float64 reference: ragged batches holding its boundaries
// (1, 63, 64, 65, 100, 127, 128 and an empty sequence: the scores' 8- and 16-token warp passes, a
// longest sequence that is not a multiple of 4), every length 0-128 in one batch, contiguous and
// over shuffled pages of 1, 3, 16 and 128 tokens, FP16 / BF16 / FP8 E4M3 / E5M2 (per-KV-head
// scales), MHA, groups 4 and 8, MQA 32 / 1 and 71 / 1 (the group over several blocks, the last one
// short), groups 11 and 16 whole in one block, head dims 64, 80, 128 and (FP8) 256. Most cases run
// under DECODE_BENCH_FD_SHORT_MAX_LEN=128 (the planner's knob), so the plan is the planner's own;
// the automatic rule's point (16 x 128 tokens, 32 / 8 heads, pages of 16) runs without it. Outputs
// are poisoned before each of two launches (tests/decode_case.hpp): any element left unwritten fails.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/decode_launch.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/ragged_lengths.hpp"
#include "tests/short_decode_case.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;

const std::vector<std::int32_t> kLongBoundaryLengths{1, 63, 64, 65, 100, 127, 128, 0};

// Runs `c` on `dtype`: it must plan on the short path's long stage, succeed and match the reference.
DecodePlan expect_long_verified(DType dtype, const DecodeCase& c) {
  const std::string what = testing::describe_ragged_case(dtype, c) + " path " + std::string(decode_path_name(c.path));
  const auto r = testing::run_decode_case_as(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
  EXPECT_EQ(r.plan.path, DecodePath::short_seq) << what;
  EXPECT_GT(r.plan.tile_tokens, kShortFirstStageLen) << what;  // the long stage
  EXPECT_EQ(r.plan.num_splits, 1) << what;
  EXPECT_EQ(r.plan.workspace_bytes, 0u) << what;
  EXPECT_GE(r.plan.blocks_per_sm, 1) << what;
  EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
  EXPECT_EQ(r.plan.short_layout.heads, r.plan.query_heads_per_block) << what;
  EXPECT_GE(r.plan.short_layout.rows, r.plan.tile_tokens) << what;
  EXPECT_LE(r.plan.short_layout.chunks * 16, kShortLongMaxRowBytes) << what;
  return r.plan;
}

// The first stage's case (tests/short_decode_case.hpp) under DECODE_BENCH_FD_SHORT_MAX_LEN=128.
DecodeCase long_case(DecodeShape shape, std::vector<std::int32_t> lengths, int page, std::uint64_t seed) {
  DecodeCase c = testing::short_decode_case(shape, std::move(lengths), page, seed);
  c.tuning.fd_short_max_len = 128;  // every region, not only the automatic rule's
  return c;
}

// Every storage type, layout and page size at MHA, groups 4 and 8 and MQA 32 / 1, d 128.
TEST(ShortDecodeLongGpu, BoundaryLengthsEveryLayoutStorageAndGroup) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 2000;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (int page : {0, 1, 3, 16, 128})
      for (DecodeShape shape : {DecodeShape{2, 2, 128}, DecodeShape{8, 2, 128}, DecodeShape{16, 2, 128},
                                DecodeShape{32, 1, 128}}) {
        const DecodePlan plan = expect_long_verified(dtype, long_case(shape, kLongBoundaryLengths, page, ++seed));
        // 8 sequences x 2 KV heads leave most SMs idle: group 4 whole, group 8 in two blocks of 4
        // (on GPUs of at least 32 SMs), MQA 32 / 1 over 8 pairs in eight of 4 (at least 64 SMs).
        if (shape.group() >= 4) {
          EXPECT_EQ(plan.query_heads_per_block, 4);
        }
      }
}

// Head dims 64 and 80 (a row of 8 or 10 chunks at 2 bytes: threads of the copies idle, a row's
// last chunk alone) and 128, and 256 at FP8 (16 chunks; at 2 bytes the path refuses it beyond 64
// tokens), GQA 32 / 8 and MHA 8 / 8, contiguous and pages of 3.
TEST(ShortDecodeLongGpu, HeadDims) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 2100;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2}) {
    std::vector<int> dims{64, 80, 128};
    if (dtype_is_fp8(dtype)) dims.push_back(256);
    for (int d : dims)
      for (int page : {0, 3}) {
        expect_long_verified(dtype, long_case({32, 8, d}, kLongBoundaryLengths, page, ++seed));
        expect_long_verified(dtype, long_case({8, 8, d}, kLongBoundaryLengths, page, ++seed));
      }
  }
  // d 256 at 2 bytes beyond 64 tokens: the knob cannot take it there, and a pinned path is refused.
  DecodeCase wide = long_case({8, 2, 256}, {100, 3}, 16, ++seed);
  const auto r = testing::run_decode_case_as(DType::fp16, wide);
  ASSERT_EQ(r.status, cudaSuccess);
  EXPECT_NE(r.plan.path, DecodePath::short_seq);
  EXPECT_TRUE(r.verification.passed) << r.verification.summary();
  wide.path = DecodePath::short_seq;
  EXPECT_EQ(testing::run_decode_case_as(DType::fp16, wide).status, cudaErrorInvalidValue);
}

// Every length from 0 to 128 in one batch (each block picks its scores' warp passes and P V's
// steps from its own length), at MHA and groups 4 and 8, every storage type, contiguous and over
// shuffled pages of 16; and a batch whose longest sequence, 97, is not a multiple of 4 or 16 (the
// staged rows run to 100, or 112 in FP16 and BF16, the V rows past each length zeroed by the block).
TEST(ShortDecodeLongGpu, EveryLengthAndRaggedCapacity) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 2200;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (int page : {0, 16})
      for (int group : {1, 4, 8}) {
        expect_long_verified(dtype, long_case({4 * group, 4, 128}, testing::every_length_to(kShortMaxLen), page, ++seed));
        const DecodePlan plan = expect_long_verified(dtype, long_case({4 * group, 4, 64}, {97, 31, 65, 1, 0, 96, 66}, page, ++seed));
        EXPECT_EQ(plan.tile_tokens, 97);
        EXPECT_EQ(plan.short_layout.rows, dtype == DType::fp16 || dtype == DType::bf16 ? 112 : 100);  // tensor-core P V: 16 rows a step
      }
}

// MQA as Falcon-7B has it, 71 query heads on one KV head at d 64: the group over several blocks
// (the last one short); and groups 11 and 16 whole in one block (the head bound 16, 11 of its heads
// predicated), 32 KV heads over the boundary batch being enough pairs to keep each group whole on
// GPUs of up to 256 SMs.
TEST(ShortDecodeLongGpu, MqaAndLargeGroups) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 2300;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int page : {0, 16}) {
      const DecodePlan mqa = expect_long_verified(dtype, long_case({71, 1, 64}, kLongBoundaryLengths, page, ++seed));
      EXPECT_LT(mqa.query_heads_per_block, 71);
      EXPECT_NE(71 % mqa.query_heads_per_block, 0);  // the last block short
      for (int group : {11, 16}) {
        const DecodePlan plan = expect_long_verified(dtype, long_case({32 * group, 32, 64}, kLongBoundaryLengths, page, ++seed));
        EXPECT_EQ(plan.query_heads_per_block, group);
      }
    }
}

// The automatic rule without the knob: the variants point's shape (16 sequences, 32 / 8 heads,
// d 128, pages of 16) with ragged lengths up to 128 takes the long stage; the same batch over
// contiguous K/V, and DECODE_BENCH_FD_SHORT_MAX_LEN=64, keep the row-attention path, verified too.
TEST(ShortDecodeLongGpu, AutomaticRuleAtTheVariantsPoint) {
  DB_REQUIRE_GPU();
  std::vector<std::int32_t> lengths;
  for (int i = 0; i < 16; ++i) lengths.push_back(i == 3 ? 0 : 128 - 5 * i);  // 128 down to 53, one empty
  std::uint64_t seed = 2400;
  for (DType dtype : {DType::fp16, DType::bf16}) {
    DecodeCase c = testing::short_decode_case({32, 8, 128}, lengths, 16, ++seed);
    const DecodePlan plan = expect_long_verified(dtype, c);
    EXPECT_EQ(plan.query_heads_per_block, 4);
    for (int variant = 0; variant < 2; ++variant) {
      DecodeCase other = c;
      if (variant == 0) other.page_size = 0;
      else other.tuning.fd_short_max_len = 64;
      const auto r = testing::run_decode_case_as(dtype, other);
      ASSERT_EQ(r.status, cudaSuccess);
      EXPECT_EQ(r.plan.path, DecodePath::tensor_core) << variant;
      EXPECT_TRUE(r.verification.passed) << r.verification.summary();
    }
  }
}

// A small case for compute-sanitizer (memcheck, racecheck): the long stage's P V barrier and the
// q region reused for its partial sums, pages of 3, group 4 and FP8 d 256 (two columns a thread).
TEST(ShortDecodeLongGpu, Small) {
  DB_REQUIRE_GPU();
  DecodeCase gqa = long_case({8, 2, 128}, kLongBoundaryLengths, 3, 2500);
  gqa.path = DecodePath::short_seq;
  expect_long_verified(DType::fp16, gqa);
  expect_long_verified(DType::fp8_e4m3, long_case({6, 2, 256}, {128, 65, 1}, 3, 2501));
  expect_long_verified(DType::bf16, long_case({16, 2, 64}, {128, 65, 1}, 3, 2502));  // BF16's split q and P
}

}  // namespace
}  // namespace decode_bench
