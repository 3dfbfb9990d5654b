// Grouped decode of MQA and odd GQA groups on the tensor-core row attention, through plan_decode /
// run_decode, against the float64 reference: Falcon-7B's 71 query heads on one KV head at d 64 and
// groups 5, 7 and 8 at d 128, at split counts up to more splits than tiles, with the split merge
// fused (the last split block) and separate (a second kernel, one block per row), pinned by
// DECODE_BENCH_ROW_MERGE and chosen by the model (kernels/row_merge_model.hpp); and one 128-row
// block an item for short MQA items too (kernels/row_block_rows.hpp): the wide mma.sync tiling, or
// for FP16 on compute capability 9.0 the warpgroup-MMA kernel (kernels/row_attention_wgmma.cuh,
// two warpgroups, the second holding 7 rows, over 64- or 128-token tiles); its splits merged in a
// thread-block cluster; its twin that takes equal host lengths as an argument. Every case
// launches twice on one workspace (the counters reset) with poisoned outputs and partials.
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/row_attention_wgmma.hpp"
#include "kernels/tuning_policy.hpp"
#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

const char* merge_name(RowMergeMode m) {
  return m == RowMergeMode::fused ? "fused" : m == RowMergeMode::separate ? "separate" : "auto";
}

std::string describe(DType dtype, const testing::DecodeCase& c) {
  std::string s = std::string(dtype_name(dtype)) + " Hq=" + std::to_string(c.shape.heads_q) +
                  " Hkv=" + std::to_string(c.shape.heads_kv) + " D=" + std::to_string(c.shape.head_dim) +
                  " page=" + std::to_string(c.page_size) + " splits=" + std::to_string(c.splits) +
                  " merge=" + merge_name(c.tuning.row_merge) + (c.tuning.merge_pdl ? "" : " pdl=off") + " lengths";
  for (int len : c.lengths) s += " " + std::to_string(len);
  return s;
}

// A tensor-core decode case launched twice on one workspace; the knobs are the caller's.
testing::DecodeCase row_case(DecodeShape shape, std::vector<std::int32_t> lengths, int page, int splits,
                             std::uint64_t seed) {
  testing::DecodeCase c;
  c.shape = shape;
  c.lengths = std::move(lengths);
  c.page_size = page;
  c.splits = splits;
  c.path = DecodePath::tensor_core;
  c.launches = 2;
  c.seed = seed;
  return c;
}

// Falcon's 71 rows on one KV head take 128-row blocks: of the warpgroup-MMA kernel for FP16 where
// it runs (its split rule counting one block an SM, though two fit), of the wide mma.sync tiling
// otherwise.
void expect_mqa_block(DType dtype, const testing::DecodeCase& c, const DecodePlan& plan) {
  const bool wgmma = dtype == DType::fp16 && wgmma_row_kernel_runs_on(0);
  EXPECT_EQ(plan.rows.wgmma, wgmma) << describe(dtype, c);
  EXPECT_EQ(plan.rows.wide, !wgmma) << describe(dtype, c);
  EXPECT_EQ(plan.rows.rows_per_block, 128) << describe(dtype, c);
  if (wgmma) {
    int dev = 0, sms = 0;
    ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
    ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
    EXPECT_GE(plan.rows.blocks_per_sm, plan.rows.tile_tokens == 64 ? 2 : 1) << describe(dtype, c);
    EXPECT_EQ(plan.rows.slots, sms) << describe(dtype, c);
  }
}

testing::DecodeCaseResult expect_verified(DType dtype, const testing::DecodeCase& c) {
  const auto r = testing::run_decode_case_as(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  if (r.status != cudaSuccess) return r;
  EXPECT_EQ(r.plan.path, DecodePath::tensor_core) << describe(dtype, c);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
  // The plan says where it merged, and the knob is honoured wherever there is a merge.
  const bool split = r.plan.rows.splits > 1;
  EXPECT_EQ(r.plan.fused_merge, split && !r.plan.rows.separate_merge) << describe(dtype, c);
  const bool pinned_separate = c.tuning.row_merge == RowMergeMode::separate;
  if (!split || c.tuning.row_merge == RowMergeMode::fused) {
    EXPECT_FALSE(r.plan.rows.separate_merge) << describe(dtype, c);
  } else if (pinned_separate) {
    EXPECT_TRUE(r.plan.rows.separate_merge) << describe(dtype, c);
  }
  // A separate merge launches as a programmatic dependent on compute capability 9.0 and later,
  // unless DECODE_BENCH_MERGE_PDL=off (kernels/dependent_launch.cuh).
  int dev = 0, major = 0;
  EXPECT_EQ(cudaGetDevice(&dev), cudaSuccess);
  EXPECT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), cudaSuccess);
  EXPECT_EQ(r.plan.rows.dependent_merge, r.plan.rows.separate_merge && c.tuning.merge_pdl && major >= 9)
      << describe(dtype, c);
  return r;
}

// Falcon-7B's shape: 71 query heads on one KV head, d 64 (a 128-row block: the wide tiling with a
// warp row of padding, or two warpgroups). 128 splits of 8229 tokens are 64-65 tokens each; 300 leave most splits
// empty (their partials weigh nothing). A short and an empty sequence beside the long one.
TEST(RowAttentionMqaGpu, FalconShapeAtLargeSplitCounts) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 7100;
  for (DType dtype : {DType::fp16, DType::bf16})
    for (int page : {0, 16})
      for (int splits : {0, 8, 128, 300})
        // The merge by the model, fused, separate, and separate stream-ordered (DECODE_BENCH_MERGE_PDL=off).
        for (const auto& [merge, pdl] : {std::pair{RowMergeMode::automatic, true}, std::pair{RowMergeMode::fused, true},
                                         std::pair{RowMergeMode::separate, true}, std::pair{RowMergeMode::separate, false}}) {
          testing::DecodeCase c = row_case({71, 1, 64}, {8229, 5, 0}, page, splits, ++seed);
          c.tuning.row_merge = merge;
          c.tuning.merge_pdl = pdl;
          const auto r = expect_verified(dtype, c);
          if (r.status != cudaSuccess) continue;
          expect_mqa_block(dtype, c, r.plan);  // 129 tiles: the long-range block
          // 71 rows x 128 splits: about a hundred fused round trips against a handful.
          if (merge == RowMergeMode::automatic && splits == 128) {
            EXPECT_TRUE(r.plan.rows.separate_merge) << describe(dtype, c);
          }
        }
}

// Groups 5, 7 and 8 at d 128 (narrow 16-row blocks: 160, 224 and 256 (row, float4 column) pairs on
// 128 threads, the fused merge's two-pairs-a-thread fold) at the split counts of the models
// preset's Qwen2.5-7B plans (33 contiguous, 64 paged) and more splits than tiles.
TEST(RowAttentionMqaGpu, OddGroupsAtManySplits) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 7200;
  for (DType dtype : {DType::fp16, DType::bf16})
    for (int group : {5, 7, 8})
      for (int page : {0, 16})
        for (int splits : {0, 2, 33, 64, 200})
          for (RowMergeMode merge : {RowMergeMode::automatic, RowMergeMode::fused, RowMergeMode::separate}) {
            testing::DecodeCase c = row_case({4 * group, 4, 128}, {4133, 77}, page, splits, ++seed);
            c.tuning.row_merge = merge;
            expect_verified(dtype, c);
          }
}

// The warpgroup-MMA kernel's cluster merge (kernels/row_cluster_merge.cuh): the splits of each
// (item, row block) launched as one cluster of 2-8 blocks that merge through shared memory. Both
// compiled head dims and block sizes (71 rows at d 64 and 48 in one block of two warpgroups, and in
// two blocks of one warpgroup, the second of 7 rows; 48 rows at d 128 over 8K tokens, one
// warpgroup; 128 rows at d 128, two), contiguous and paged, odd split counts, a 5-token and an
// empty sequence whose splits hold no token. Where the kernel runs and every cluster fits the GPU
// at once, the plan takes the cluster merge unless DECODE_BENCH_ROW_CLUSTER_MERGE=off or a pinned
// merge; 9 splits are past a portable cluster.
TEST(RowAttentionMqaGpu, ClusterMergeOfTwoToEightSplits) {
  DB_REQUIRE_GPU();
  const bool wgmma = wgmma_row_kernel_runs_on(0);
  std::uint64_t seed = 7400;
  int clustered = 0;
  for (const auto& [shape, block_rows] : {std::pair{DecodeShape{71, 1, 64}, 0}, std::pair{DecodeShape{71, 1, 64}, 64},
                                          std::pair{DecodeShape{71, 1, 48}, 0}, std::pair{DecodeShape{48, 1, 128}, 0},
                                          std::pair{DecodeShape{128, 1, 128}, 0}})
    for (int page : {0, 16})
      for (int splits : {2, 3, 5, 8, 9})
        for (const auto& [cluster, merge] : {std::pair{true, RowMergeMode::automatic}, std::pair{false, RowMergeMode::automatic},
                                             std::pair{true, RowMergeMode::fused}}) {
          testing::DecodeCase c = row_case(shape, {8229, 5, 0}, page, splits, ++seed);
          c.tuning.row_cluster_merge = cluster;
          c.tuning.row_merge = merge;
          c.tuning.row_wgmma_rows = block_rows;
          const auto r = expect_verified(DType::fp16, c);
          if (r.status != cudaSuccess) continue;
          const std::string what = describe(DType::fp16, c) + (cluster ? "" : " cluster=off") +
                                   (block_rows > 0 ? " wgmma_rows=64" : "");
          EXPECT_EQ(r.plan.rows.wgmma, wgmma) << what;
          EXPECT_EQ(r.plan.rows.splits, splits) << what;
          if (!wgmma || !cluster || merge != RowMergeMode::automatic || splits > kClusterMergeMaxSplits) {
            EXPECT_FALSE(r.plan.rows.cluster_merge) << what;
          } else if (r.plan.rows.cluster_merge) {  // 3 x row blocks clusters: every one fits an H100
            ++clustered;
            EXPECT_FALSE(r.plan.rows.separate_merge) << what;
            EXPECT_EQ(r.plan.rows.partial_states, 0) << what;  // no partials in global memory
          }
        }
  if (wgmma) {
    EXPECT_EQ(clustered, 5 * 2 * 4) << "every case of 2-8 splits clustered";
  }
}

// The cluster merge in a few small cases, for the sanitizers (tests/test_tiers.cmake): each
// warpgroup-MMA block shape (two warpgroups at d 64, one at d 64 in two row blocks, one at d 128
// with the tiling pinned), 3 splits of 300 tokens beside a 5-token and an empty sequence.
TEST(RowAttentionMqaGpu, ClusterMergeSmall) {
  DB_REQUIRE_GPU();
  if (!wgmma_row_kernel_runs_on(0)) GTEST_SKIP() << "no warpgroup-MMA row kernel on GPU 0 (compute capability 9.0, sm_90a build)";
  std::uint64_t seed = 7500;
  for (const auto& [shape, block_rows] : {std::pair{DecodeShape{71, 1, 64}, 0}, std::pair{DecodeShape{71, 1, 64}, 64},
                                          std::pair{DecodeShape{40, 1, 128}, 0}})
    for (int page : {0, 16}) {
      testing::DecodeCase c = row_case(shape, {300, 5, 0}, page, 3, ++seed);
      c.tuning.row_tiling = RowAttentionTiling::wgmma;
      c.tuning.row_wgmma_rows = block_rows;
      const auto r = expect_verified(DType::fp16, c);
      if (r.status != cudaSuccess) continue;
      EXPECT_TRUE(r.plan.rows.wgmma) << describe(DType::fp16, c);
      EXPECT_TRUE(r.plan.rows.cluster_merge) << describe(DType::fp16, c);
    }
}

// 128-token tiles (DECODE_BENCH_ROW_WGMMA_TILE=128: the d 64 two-warpgroup kernel, one block an
// SM, 3 stages): Falcon's 71 rows, 71 rows at d 48 (dims past the head dim zero-filled) and a full
// 128-row block, over a long sequence and lengths at the tile's edges (1, 127, 128, 129) beside an
// empty one; unsplit, a cluster merge (3), a merge by the model and a pinned fused one (9: past a
// cluster), and more splits than tiles (128 of 66 tiles), contiguous and paged. Where the kernel
// does not run, the knob has no kernel to pick and the plan keeps the mma.sync tiling.
TEST(RowAttentionMqaGpu, Tiles128AgainstTheReference) {
  DB_REQUIRE_GPU();
  const bool wgmma = wgmma_row_kernel_runs_on(0);
  std::uint64_t seed = 7600;
  for (const DecodeShape& shape : {DecodeShape{71, 1, 64}, DecodeShape{71, 1, 48}, DecodeShape{128, 1, 64}})
    for (const std::vector<std::int32_t>& lengths : {std::vector<std::int32_t>{8229, 5, 0},
                                                     std::vector<std::int32_t>{129, 128, 127, 1, 0}})
      for (int page : {0, 16})
        for (const auto& [splits, merge] : {std::pair{0, RowMergeMode::automatic}, std::pair{1, RowMergeMode::automatic},
                                            std::pair{3, RowMergeMode::automatic}, std::pair{9, RowMergeMode::automatic},
                                            std::pair{9, RowMergeMode::fused}, std::pair{128, RowMergeMode::automatic}}) {
          testing::DecodeCase c = row_case(shape, lengths, page, splits, ++seed);
          c.tuning.row_wgmma_tile = 128;
          c.tuning.row_merge = merge;
          const auto r = expect_verified(DType::fp16, c);
          if (r.status != cudaSuccess) continue;
          const std::string what = describe(DType::fp16, c) + " tile=128";
          EXPECT_EQ(r.plan.rows.wgmma, wgmma) << what;
          EXPECT_EQ(r.plan.rows.rows_per_block, 128) << what;
          EXPECT_EQ(r.plan.rows.tile_tokens, wgmma ? 128 : 64) << what;
          if (wgmma) {
            EXPECT_EQ(r.plan.rows.stages, 3) << what;
            EXPECT_EQ(r.plan.rows.blocks_per_sm, 1) << what;
          }
          if (splits > 0) {
            EXPECT_EQ(r.plan.rows.splits, splits) << what;
          }
        }
}

// 128-token tiles in a few small cases, for the sanitizers (tests/test_tiers.cmake): unsplit and in
// a 3-block cluster, 300 tokens (two whole tiles and a partial one) beside a 5-token and an empty
// sequence, contiguous and paged.
TEST(RowAttentionMqaGpu, Tiles128Small) {
  DB_REQUIRE_GPU();
  if (!wgmma_row_kernel_runs_on(0)) GTEST_SKIP() << "no warpgroup-MMA row kernel on GPU 0 (compute capability 9.0, sm_90a build)";
  std::uint64_t seed = 7700;
  for (int page : {0, 16})
    for (int splits : {1, 3}) {
      testing::DecodeCase c = row_case({71, 1, 64}, {300, 5, 0}, page, splits, ++seed);
      c.tuning.row_wgmma_tile = 128;
      const auto r = expect_verified(DType::fp16, c);
      if (r.status != cudaSuccess) continue;
      EXPECT_EQ(r.plan.rows.tile_tokens, 128) << describe(DType::fp16, c);
      EXPECT_EQ(r.plan.rows.cluster_merge, splits == 3) << describe(DType::fp16, c);
    }
}

// The host-length twin (RowAttentionPlan::uniform_len: the d 64 two-warpgroup kernel taking the
// length of every sequence as an argument, reading no seq_lens), with the lengths given on the host
// too: Falcon's 71 rows, 71 rows at d 48 and a full 128-row block (the tensor-core decode takes
// groups over 16 on one KV head only: kernels/decode_support.cpp), one long sequence and batches
// of one length at and beside the tile's edges (1, 128, 129, 300), 64- and 128-token tiles,
// contiguous and paged, unsplit, in a cluster (3), merged by the model and fused (9), and more
// splits than tiles (128). Where the kernel runs the plan takes the twin unless
// DECODE_BENCH_ROW_HOST_LENGTH=off.
TEST(RowAttentionMqaGpu, HostLengthTwinAgainstTheReference) {
  DB_REQUIRE_GPU();
  const bool wgmma = wgmma_row_kernel_runs_on(0);
  std::uint64_t seed = 7800;
  for (const DecodeShape& shape : {DecodeShape{71, 1, 64}, DecodeShape{71, 1, 48}, DecodeShape{128, 1, 64}})
    for (const std::vector<std::int32_t>& lengths :
         {std::vector<std::int32_t>{8229}, std::vector<std::int32_t>{300, 300, 300}, std::vector<std::int32_t>(5, 129),
          std::vector<std::int32_t>(2, 128), std::vector<std::int32_t>(3, 1)})
      for (int page : {0, 16})
        for (int tile : {64, 128})
          for (const auto& [splits, merge] : {std::pair{0, RowMergeMode::automatic}, std::pair{1, RowMergeMode::automatic},
                                              std::pair{3, RowMergeMode::automatic}, std::pair{9, RowMergeMode::fused},
                                              std::pair{128, RowMergeMode::automatic}})
            for (bool host_length : {true, false}) {
              if (!host_length && (splits != 3 || lengths.size() != 3)) continue;  // the knob off: a few cases
              testing::DecodeCase c = row_case(shape, lengths, page, splits, ++seed);
              c.host_lengths = true;
              c.tuning.row_wgmma_tile = tile;
              c.tuning.row_merge = merge;
              c.tuning.row_host_length = host_length;
              const auto r = expect_verified(DType::fp16, c);
              if (r.status != cudaSuccess) continue;
              const std::string what = describe(DType::fp16, c) + " tile=" + std::to_string(tile) +
                                       (host_length ? "" : " host_length=off");
              EXPECT_EQ(r.plan.rows.wgmma, wgmma) << what;
              EXPECT_EQ(r.plan.rows.rows_per_block, 128) << what;
              EXPECT_EQ(r.plan.rows.uniform_len, wgmma && host_length ? lengths[0] : 0) << what;
              if (wgmma) {
                EXPECT_EQ(r.plan.rows.tile_tokens, tile) << what;
              }
              if (splits > 0) {
                EXPECT_EQ(r.plan.rows.splits, splits) << what;
              }
            }
}

// The host-length twin in a few small cases, for the sanitizers (tests/test_tiers.cmake): both
// tiles, unsplit and in a 3-block cluster, three sequences of 300 tokens, contiguous and paged.
TEST(RowAttentionMqaGpu, HostLengthTwinSmall) {
  DB_REQUIRE_GPU();
  if (!wgmma_row_kernel_runs_on(0)) GTEST_SKIP() << "no warpgroup-MMA row kernel on GPU 0 (compute capability 9.0, sm_90a build)";
  std::uint64_t seed = 7900;
  for (int page : {0, 16})
    for (int tile : {64, 128})
      for (int splits : {1, 3}) {
        testing::DecodeCase c = row_case({71, 1, 64}, {300, 300, 300}, page, splits, ++seed);
        c.host_lengths = true;
        c.tuning.row_wgmma_tile = tile;
        const auto r = expect_verified(DType::fp16, c);
        if (r.status != cudaSuccess) continue;
        EXPECT_EQ(r.plan.rows.uniform_len, 300) << describe(DType::fp16, c);
        EXPECT_EQ(r.plan.rows.cluster_merge, splits == 3) << describe(DType::fp16, c);
      }
}

// Short MQA items: one 128-row block an item (kernels/row_block_rows.hpp), one sequence or four
// per SM, contiguous and paged.
TEST(RowAttentionMqaGpu, ShortItemsTakeOne128RowBlock) {
  DB_REQUIRE_GPU();
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  std::uint64_t seed = 7300;
  for (DType dtype : {DType::fp16, DType::bf16})
    for (int page : {0, 16})
      for (int seqs : {1, 4 * sms}) {
        std::vector<std::int32_t> lengths(static_cast<std::size_t>(seqs), 300);
        lengths[0] = 299;  // not a whole tile or page
        testing::DecodeCase c = row_case({71, 1, 64}, std::move(lengths), page, 0, ++seed);
        const auto r = expect_verified(dtype, c);
        if (r.status != cudaSuccess) continue;
        expect_mqa_block(dtype, c, r.plan);
        EXPECT_EQ(r.plan.rows.row_blocks, 1) << describe(dtype, c);
      }
}

}  // namespace
}  // namespace decode_bench
