// The short-sequence decode kernel (DecodePath::short_seq, kernels/short_decode.cuh) against the
// float64 reference: one ragged batch holding every boundary of the 32-token score slices and the
// 64-token limit (0, 1, 15, 16, 17, 31, 32, 33, 63, 64), contiguous and over shuffled pages of 1, 7
// and 16 tokens, FP16 / BF16 / FP8 (per-KV-head scales), GQA groups whose blocks split a head's
// tokens over warps (1, 2), give a warp a head (4, 8) or more (5, 7), split the group over blocks
// (13; MQA 71 / 1, whose last block of a pair has one head), head dims 64 to 256 with masked tails (80). Outputs are poisoned before each of
// two launches (tests/decode_case.hpp), so any element the kernel leaves unwritten fails.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/decode_launch.hpp"  // kRowAttentionMinGroup
#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/ragged_lengths.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;

const std::vector<std::int32_t> kBoundaryLengths{0, 1, 15, 16, 17, 31, 32, 33, 63, 64};

// Runs `c` on `dtype`: it must plan on the short path, succeed and match the reference.
DecodePlan expect_short_verified(DType dtype, const DecodeCase& c) {
  const std::string what = testing::describe_ragged_case(dtype, c) + " path " + std::string(decode_path_name(c.path));
  const auto r = testing::run_decode_case_as(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
  EXPECT_EQ(r.plan.path, DecodePath::short_seq) << what;
  EXPECT_EQ(r.plan.num_splits, 1) << what;
  EXPECT_EQ(r.plan.workspace_bytes, 0u) << what;
  EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
  return r.plan;
}

DecodeCase boundary_case(DecodeShape shape, int page, std::uint64_t seed) {
  DecodeCase c{DecodeKernel::flash_decode, shape, kBoundaryLengths, page, 0, seed};
  c.launches = 2;
  return c;
}

// Every storage type, layout and group at d 128: the planner choosing the path from group 3 on,
// groups 1 and 2 asking for it (the planner keeps the CUDA-core split-K kernel there).
TEST(ShortDecodeGpu, BoundaryLengthsEveryLayoutStorageAndGroup) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 900;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int page : {0, 1, 7, 16})
      for (int group : {1, 2, 4, 5, 7, 8, 13}) {
        DecodeCase c = boundary_case({2 * group, 2, 128}, page, ++seed);
        if (group < kRowAttentionMinGroup) c.path = DecodePath::short_seq;
        const DecodePlan plan = expect_short_verified(dtype, c);
        // Group 13 over 10 x 2 (sequence, KV head) pairs: split over three blocks of 5, 5 and 3
        // heads (each block but the last at least a head a warp).
        if (group == 13) {
          EXPECT_EQ(plan.query_heads_per_block, 5);
        }
      }
}

// Head dims 64 to 256 (80: a masked tail at 2-byte storage, and 5 chunks a row at FP8), GQA 32 / 8.
TEST(ShortDecodeGpu, HeadDims) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 950;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (int d : {64, 80, 128, 256})
      for (int page : {0, 7}) expect_short_verified(dtype, boundary_case({32, 8, d}, page, ++seed));
}

// MQA as Falcon-7B has it, 71 query heads on one KV head at d 64: the group runs over several
// blocks (the last one short), each pair's K/V staged by each of them.
TEST(ShortDecodeGpu, MqaSplitsTheGroupOverBlocks) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 980;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (int page : {0, 16}) {
      const DecodePlan plan = expect_short_verified(dtype, boundary_case({71, 1, 64}, page, ++seed));
      EXPECT_LT(plan.query_heads_per_block, 71);
      EXPECT_LE(plan.query_heads_per_block, kShortMaxBlockHeads);
    }
}

// The path pinned explicitly runs the same batches; pinned where it cannot run, plan_decode
// refuses (decode_short_unsupported_reason names why); a batch one token past the limit, or one
// with pinned splits, plans on the other paths.
TEST(ShortDecodeGpu, PinnedPathAndTheLimit) {
  DB_REQUIRE_GPU();
  DecodeCase pinned = boundary_case({8, 2, 128}, 16, 990);
  pinned.path = DecodePath::short_seq;
  expect_short_verified(DType::bf16, pinned);

  DecodeCase longer{DecodeKernel::flash_decode, {8, 2, 128}, {65, 3, 0}, 16, 0, 991};
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
}

}  // namespace
}  // namespace decode_bench
