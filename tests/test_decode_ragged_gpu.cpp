// Short and ragged batches on the CUDA-core flash-decode against the float64 reference: the short
// tiling (GQA group 1) at every head dim and storage type, and the load-balanced work list on zipf
// batches that hold the extremes (length 0, 1, and 100x the median), contiguous and over shuffled
// pages, several launches on one workspace (the fused merge's counters must come back to zero).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/tuning_policy.hpp"
#include "pools/length_distribution.hpp"
#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/ragged_lengths.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;
using testing::DecodeCaseResult;
using testing::run_decode_case;
using testing::zipf_batch_with_extremes;

DecodeCaseResult run_any(DType dtype, const DecodeCase& c) { return testing::run_decode_case_as(dtype, c); }
std::string describe(DType dtype, const DecodeCase& c) { return testing::describe_ragged_case(dtype, c); }

DecodePlan expect_verified(DType dtype, const DecodeCase& c) {
  const auto r = run_any(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
  return r.plan;
}

// The short batch at a tenth of the batch (enough blocks to fill a wave of the standard
// tiling on any GPU with up to 256 SMs): the CUDA-core plan takes the short tiling, unsplit.
// (Automatic plans run such batches on the short-sequence kernel, tests/test_short_decode_gpu.cpp;
// DECODE_BENCH_FD_SHORT_SEQ=off keeps them here.)
TEST(DecodeShortBatchGpu, ShortTilingAtEveryHeadDimAndStorageType) {
  DB_REQUIRE_GPU();
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp32, DType::fp8_e4m3})
    for (int d : {64, 128, 256})
      for (int page : {0, 16}) {
        DecodeCase c{DecodeKernel::flash_decode, {32, 32, d}, std::vector<std::int32_t>(8, 32), page, 0,
                     static_cast<std::uint64_t>(d + page)};
        c.tuning.fd_short_seq = false;
        const DecodePlan plan = expect_verified(dtype, c);
        EXPECT_EQ(plan.tiling, DecodeTiling::short_batch) << describe(dtype, c);
      }
  // Group 2 has no short tiling; the same batch stays on the standard one.
  const DecodePlan g2 = expect_verified(DType::fp32, {DecodeKernel::flash_decode, {32, 16, 128},
                                                      std::vector<std::int32_t>(8, 32), 0, 0, 3});
  EXPECT_EQ(g2.tiling, DecodeTiling::standard);
}

// The short tiling with 2 and 4 KV heads per block (its 4 warps split among them), on the short
// batch and on a zipf batch through the work list (the tiling pinned: paged ragged batches would
// take the standard one), contiguous and paged.
TEST(DecodeShortBatchGpu, ShortTilingWithSeveralHeadsPerBlock) {
  DB_REQUIRE_GPU();
  for (int heads : {2, 4}) {
    TuningPolicy pinned;
    pinned.fd_tiling = TilingOverride::short_batch;
    pinned.fd_short_heads = heads;
    for (int page : {0, 16}) {
      DecodeCase c{DecodeKernel::flash_decode, {32, 32, 128}, std::vector<std::int32_t>(8, 32), page, 0, 64};
      c.tuning = pinned;
      const DecodePlan plan = expect_verified(DType::fp16, c);
      EXPECT_EQ(plan.tiling, DecodeTiling::short_batch);
      EXPECT_EQ(plan.heads_per_block, heads);
      DecodeCase z{DecodeKernel::flash_decode, {8, 8, 128}, zipf_batch_with_extremes(64, 65, 16), page, 0, 66};
      z.host_lengths = true;
      z.launches = 2;
      z.tuning = pinned;
      EXPECT_EQ(expect_verified(DType::bf16, z).heads_per_block, heads);
    }
  }
}

// The short tiling pinned on shapes the planner would not give it: split long sequences (the fused
// merge), lengths that end mid-tile, a ragged batch with empty sequences, several launches.
TEST(DecodeShortBatchGpu, PinnedShortTilingOnSplitAndRaggedShapes) {
  DB_REQUIRE_GPU();
  TuningPolicy pinned;
  pinned.fd_tiling = TilingOverride::short_batch;
  for (int page : {0, 1, 7}) {
    DecodeCase c{DecodeKernel::flash_decode, {2, 2, 128}, {4099}, page, 0, 61};
    c.launches = 3;
    c.tuning = pinned;
    EXPECT_GT(expect_verified(DType::fp16, c).num_splits, 1);
    DecodeCase ragged{DecodeKernel::flash_decode, {1, 1, 256}, {1013, 0, 33, 255}, page, 7, 62};
    ragged.tuning = pinned;
    expect_verified(DType::fp32, ragged);
    DecodeCase short_tails{DecodeKernel::flash_decode, {4, 4, 64}, {0, 1, 2, 31, 32, 33}, page, 0, 63};
    short_tails.tuning = pinned;
    expect_verified(DType::bf16, short_tails);
  }
}

// Zipf batches with the extremes through the work-list plan: MHA in every storage type (the
// short tiling contiguous, the standard one paged), GQA groups 2, 4 and 8 in FP32 (the standard
// tiling), contiguous and shuffled pages.
TEST(DecodeRaggedBatchGpu, ZipfBatchesWithExtremeLengths) {
  DB_REQUIRE_GPU();
  const auto lengths = zipf_batch_with_extremes(64, 71);
  for (int page : {0, 1, 16}) {
    for (DType dtype : {DType::fp16, DType::bf16, DType::fp32, DType::fp8_e5m2}) {
      DecodeCase c{DecodeKernel::flash_decode, {4, 4, 128}, lengths, page, 0, 72};
      c.host_lengths = true;
      c.launches = 2;
      const DecodePlan plan = expect_verified(dtype, c);
      EXPECT_FALSE(plan.work_items.empty()) << describe(dtype, c);
      EXPECT_GT(plan.num_splits, 1) << describe(dtype, c) << ": the 100x-median sequence must be split";
      EXPECT_TRUE(plan.interleaved) << describe(dtype, c);
      EXPECT_EQ(plan.tiling, page == 0 ? DecodeTiling::short_batch : DecodeTiling::standard) << describe(dtype, c);
    }
    for (int group : {2, 4, 8}) {
      DecodeCase c{DecodeKernel::flash_decode, {2 * group, 2, 64}, lengths, page, 0, static_cast<std::uint64_t>(73 + group)};
      c.host_lengths = true;
      c.launches = 2;
      const DecodePlan plan = expect_verified(DType::fp32, c);
      EXPECT_FALSE(plan.work_items.empty());
      EXPECT_EQ(plan.tiling, DecodeTiling::standard);
    }
  }
}

// Long sequences among short ones, both tilings and both ways of sharing a sequence among its
// splits pinned (MHA, one KV head, d = 256): dozens of splits for the longest, several for others,
// none for the rest.
TEST(DecodeRaggedBatchGpu, LongAndShortSequencesOnBothTilings) {
  DB_REQUIRE_GPU();
  const std::vector<std::int32_t> lengths{0, 12000, 1, 3, 3000, 129, 0, 700, 17};
  for (const char* tiling : {"standard", "short"})
    for (const char* chunks : {"tiles", "ranges"}) {
      TuningPolicy pinned;
      pinned.fd_tiling = std::string(tiling) == "short" ? TilingOverride::short_batch : TilingOverride::standard;
      pinned.fd_work_chunks = std::string(chunks) == "tiles" ? WorkChunksOverride::tiles : WorkChunksOverride::ranges;
      SCOPED_TRACE(std::string(tiling) + " tiling, work chunks " + chunks);
      for (int page : {0, 16}) {
        DecodeCase c{DecodeKernel::flash_decode, {1, 1, 256}, lengths, page, 0, 81};
        c.host_lengths = true;
        c.launches = 3;
        c.tuning = pinned;
        const DecodePlan plan = expect_verified(DType::fp16, c);
        EXPECT_GT(plan.num_splits, 1) << tiling;
        EXPECT_EQ(plan.interleaved, std::string(chunks) == "tiles");
        EXPECT_EQ(plan.chunk, std::string(chunks) == "tiles" ? plan.tile_tokens : plan.chunk_bound);
        EXPECT_EQ(plan.tiling, std::string(tiling) == "short" ? DecodeTiling::short_batch : DecodeTiling::standard);
      }
    }
  // Without host lengths, or with the balance off, the same batch runs on the uniform plan.
  DecodeCase c{DecodeKernel::flash_decode, {1, 1, 256}, lengths, 16, 0, 82};
  c.host_lengths = true;
  c.tuning.fd_balance = false;
  EXPECT_TRUE(expect_verified(DType::fp16, c).work_items.empty());
}

}  // namespace
}  // namespace decode_bench
