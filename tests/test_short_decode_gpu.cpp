// The short-sequence decode kernel's first stage (DecodePath::short_seq, kernels/short_decode.cuh;
// 65-128 tokens: tests/test_short_decode_long_gpu.cpp) against the float64 reference: ragged
// batches holding every boundary of its token mappings (the scores' warp passes of 8 tokens up to
// 32 and 16 tokens up to 64, P V's 4-token steps, the 64-token stage),
// every length from 0 to 64 in one batch, a batch whose longest sequence is not a multiple of 4
// (staged rows past it), contiguous and over shuffled pages of 1, 7 and 16 tokens, FP16 / BF16 /
// FP8 E4M3 / E5M2 (per-KV-head scales), MHA and groups 2-8 and 13 (every compile-time head bound:
// 1, 2, 4, 8, 16), MQA 32 / 1 and 71 / 1 (the group split over blocks, the last one short), head
// dims 64 to 256 (80: a masked tail at 2-byte storage, 96). Outputs are poisoned before each of
// two launches (tests/decode_case.hpp), so any element the kernel leaves unwritten fails.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/decode_launch.hpp"  // kRowAttentionMinGroup
#include "tests/gpu_test_support.hpp"
#include "tests/ragged_lengths.hpp"
#include "tests/short_decode_case.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;

const std::vector<std::int32_t> kBoundaryLengths{0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64};

// Runs `c` on `dtype`: it must plan on the short path, succeed and match the reference.
DecodePlan expect_short_verified(DType dtype, const DecodeCase& c) {
  const std::string what = testing::describe_ragged_case(dtype, c) + " path " + std::string(decode_path_name(c.path));
  const auto r = testing::run_decode_case_as(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
  EXPECT_EQ(r.plan.path, DecodePath::short_seq) << what;
  EXPECT_EQ(r.plan.num_splits, 1) << what;
  EXPECT_EQ(r.plan.workspace_bytes, 0u) << what;
  EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
  // The plan carries the layout the launch uses: sized for its heads and every staged token.
  EXPECT_EQ(r.plan.short_layout.heads, r.plan.query_heads_per_block) << what;
  EXPECT_GE(r.plan.short_layout.rows, r.plan.tile_tokens) << what;
  EXPECT_EQ(r.plan.short_layout.chunks * 16, c.shape.head_dim * static_cast<int>(dtype_bytes(dtype))) << what;
  return r.plan;
}

DecodeCase boundary_case(DecodeShape shape, int page, std::uint64_t seed) {
  return testing::short_decode_case(shape, kBoundaryLengths, page, seed);
}

// Every storage type, layout and group at d 128: the planner choosing the path at every group.
TEST(ShortDecodeGpu, BoundaryLengthsEveryLayoutStorageAndGroup) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 900;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int page : {0, 1, 7, 16})
      for (int group : {1, 2, 3, 4, 5, 7, 8, 13}) {
        DecodeCase c = boundary_case({2 * group, 2, 128}, page, ++seed);
        const DecodePlan plan = expect_short_verified(dtype, c);
        // Group 13 over 10 x 2 (sequence, KV head) pairs: split over three blocks of 5, 5 and 3
        // heads (each block but the last at least a head a warp).
        if (group == 13) {
          EXPECT_EQ(plan.query_heads_per_block, 5);
        }
      }
}

// Head dims 64 to 256 (80: a masked tail at 2-byte storage and 5 chunks a row at FP8; 96; 256: two
// columns a thread in P V), GQA 32 / 8 and MHA 8 / 8.
TEST(ShortDecodeGpu, HeadDims) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 950;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (int d : {64, 80, 96, 128, 256})
      for (int page : {0, 7}) {
        expect_short_verified(dtype, boundary_case({32, 8, d}, page, ++seed));
        expect_short_verified(dtype, boundary_case({8, 8, d}, page, ++seed));
      }
}

// Every length from 0 to 64 in one batch (each block picks its scores' warp passes and P V's steps
// from its own length), at MHA, groups 2, 4 and 8 (heads bounds 1, 2, 4, 8), every storage type,
// contiguous and over shuffled pages of 16; and a batch whose longest sequence, 33, is not a
// multiple of 4 or 16 (the staged rows run to 36, or 48 in FP16, the V rows past each length zeroed
// by the block).
TEST(ShortDecodeGpu, EveryLengthAndRaggedCapacity) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 1200;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (int page : {0, 16})
      for (int group : {1, 2, 4, 8}) {
        expect_short_verified(dtype, testing::short_decode_case({4 * group, 4, 128},
                                                                testing::every_length_to(kShortFirstStageLen), page, ++seed));
        const DecodePlan plan =
            expect_short_verified(dtype, testing::short_decode_case({4 * group, 4, 64}, {33, 31, 5, 1, 0, 2, 30}, page, ++seed));
        EXPECT_EQ(plan.tile_tokens, 33);
        EXPECT_EQ(plan.short_layout.rows, dtype == DType::fp16 || dtype == DType::bf16 ? 48 : 36);  // tensor-core P V: 16 rows a step
      }
}

// The decode-bench MHA point's shape (32 / 32, d 128, 64 sequences of 32 tokens) with ragged
// lengths around 32, paged 16 and contiguous: one query
// head a block, 2048 blocks.
TEST(ShortDecodeGpu, MhaPointShape) {
  DB_REQUIRE_GPU();
  std::vector<std::int32_t> lengths;
  for (int i = 0; i < 64; ++i) lengths.push_back(i % 8 == 7 ? 0 : 24 + i % 17);  // 0 and 24-40
  std::uint64_t seed = 1300;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int page : {0, 16}) {
      DecodeCase c = testing::short_decode_case({32, 32, 128}, lengths, page, ++seed);
      const DecodePlan plan = expect_short_verified(dtype, c);
      EXPECT_EQ(plan.query_heads_per_block, 1);
      // DECODE_BENCH_FD_SHORT_SEQ=off: the CUDA-core split-K kernel, verified on the same case.
      c.tuning.fd_short_seq = false;
      const auto r = testing::run_decode_case_as(dtype, c);
      ASSERT_EQ(r.status, cudaSuccess);
      EXPECT_NE(r.plan.path, DecodePath::short_seq);
      EXPECT_TRUE(r.verification.passed) << r.verification.summary();
    }
}

// MQA as Falcon-7B has it, 71 query heads on one KV head at d 64, and 32 / 1 at d 128: the group
// runs over several blocks (the last one short at 71), each pair's K/V staged by each of them.
TEST(ShortDecodeGpu, MqaSplitsTheGroupOverBlocks) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 980;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int page : {0, 16})
      for (DecodeShape shape : {DecodeShape{71, 1, 64}, DecodeShape{32, 1, 128}}) {
        const DecodePlan plan = expect_short_verified(dtype, boundary_case(shape, page, ++seed));
        EXPECT_LT(plan.query_heads_per_block, shape.heads_q);
        EXPECT_LE(plan.query_heads_per_block, kShortMaxBlockHeads);
      }
}

// Groups of 9-16 heads in one block (the head bound 16, with 11 of them predicated and all 16 used):
// 64 KV heads over the boundary batch are enough (sequence, KV head) pairs that the planner keeps
// each group whole on GPUs of up to 256 SMs. BF16 at 16 heads takes P's lo parts as a second A
// operand (no free rows to pack them in).
TEST(ShortDecodeGpu, WholeLargeGroupsInOneBlock) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 1400;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int group : {11, 16})
      for (int page : {0, 7}) {
        const DecodePlan plan = expect_short_verified(dtype, boundary_case({64 * group, 64, 64}, page, ++seed));
        EXPECT_EQ(plan.query_heads_per_block, group);
      }
}

// The path pinned explicitly runs the same batches; pinned where it cannot run, plan_decode
// refuses (decode_short_unsupported_reason names why); a batch one token past the limit (128), or
// one with pinned splits, plans on the other paths.
TEST(ShortDecodeGpu, PinnedPathAndTheLimit) {
  DB_REQUIRE_GPU();
  DecodeCase pinned = boundary_case({8, 2, 128}, 16, 990);
  pinned.path = DecodePath::short_seq;
  expect_short_verified(DType::bf16, pinned);

  DecodeCase longer{DecodeKernel::flash_decode, {8, 2, 128}, {129, 3, 0}, 16, 0, 991};
  const auto r = testing::run_decode_case_as(DType::fp16, longer);
  ASSERT_EQ(r.status, cudaSuccess);
  EXPECT_NE(r.plan.path, DecodePath::short_seq);
  EXPECT_TRUE(r.verification.passed) << r.verification.summary();
  longer.path = DecodePath::short_seq;
  EXPECT_EQ(testing::run_decode_case_as(DType::fp16, longer).status, cudaErrorInvalidValue);

  DecodeCase split = boundary_case({8, 2, 128}, 0, 992);
  split.splits = 2;
  const auto s = testing::run_decode_case_as(DType::fp16, split);
  ASSERT_EQ(s.status, cudaSuccess);
  EXPECT_NE(s.plan.path, DecodePath::short_seq);
  EXPECT_TRUE(s.verification.passed) << s.verification.summary();
  split.path = DecodePath::short_seq;
  EXPECT_EQ(testing::run_decode_case_as(DType::fp16, split).status, cudaErrorInvalidValue);
}

// A small case for compute-sanitizer (memcheck, racecheck): shuffled 7-token pages, the boundary
// lengths, a block whose warps share one head (group 1, d 80) and one whose warps each take heads
// (group 5, FP8).
TEST(ShortDecodeGpu, Small) {
  DB_REQUIRE_GPU();
  DecodeCase one_head = boundary_case({2, 2, 80}, 7, 995);
  one_head.path = DecodePath::short_seq;  // group 1: asked for (the planner keeps split-K there)
  expect_short_verified(DType::fp16, one_head);
  expect_short_verified(DType::fp8_e4m3, boundary_case({10, 2, 64}, 7, 996));
  expect_short_verified(DType::bf16, boundary_case({16, 2, 64}, 7, 997));  // BF16's split q and P on tensor cores
}

}  // namespace
}  // namespace decode_bench
