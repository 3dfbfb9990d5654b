// The warpgroup-MMA MLA decode kernel (kernels/mla/mla_decode_wgmma.hpp) against the float64
// reference (tests/mla_decode_case.hpp: q representable in the MMA's type, o and lse poisoned,
// every row within 2u sum_t w_t |v_t| plus the FP32 score sums' bound), every case in both
// tilings (64-token tiles in 2 stages, 32-token tiles in 4) against one reference: h_q 64 and 128
// (DeepSeek-V3 at tensor parallel 2 and 1), 96 (rows not a multiple of 128; at q_len 1 its second
// row block is half padding), 1, 8, 16, 24 and 32 (one block of 1 to 64 rows, the rest padding), q_len
// 1 and 2, lengths 1, 31, 32, 33, 63, 64, 65, 4097 and 100003 (both tiles' edges; 4097 = 64 tiles
// of 64 + 1 token), pages of 1, 7 and 64 tokens in order and shuffled, contiguous caches, a batch
// with an empty sequence, FP16 and BF16, one split and several (the mma.sync kernel's LSE merge
// over this kernel's partials). Skipped with the reason where the kernel cannot run (no sm_90a
// code in the build, or a GPU other than compute capability 9.0); the host tests of its planner
// run anywhere.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_decode_wgmma.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/mla_decode_case.hpp"

namespace decode_bench {
namespace {

using testing::MlaDecodeCase;

// Skips unless device 0 runs the kernel (the reason names what is missing).
#define DB_REQUIRE_MLA_WGMMA()                                                                           \
  do {                                                                                                   \
    DB_REQUIRE_GPU();                                                                                    \
    int db_major_ = 0, db_minor_ = 0;                                                                    \
    ASSERT_EQ(cudaDeviceGetAttribute(&db_major_, cudaDevAttrComputeCapabilityMajor, 0), cudaSuccess);    \
    ASSERT_EQ(cudaDeviceGetAttribute(&db_minor_, cudaDevAttrComputeCapabilityMinor, 0), cudaSuccess);    \
    MlaShape db_shape_;                                                                                  \
    db_shape_.heads_q = 64;                                                                              \
    if (const std::string db_why_ =                                                                      \
            mla_decode_wgmma_unsupported_reason(db_shape_, DType::bf16, db_major_, db_minor_);           \
        !db_why_.empty())                                                                                \
      GTEST_SKIP() << "warpgroup-MMA MLA test skipped: " << db_why_;                                     \
  } while (0)

// The kernel's two tilings: tokens per tile and the stages each takes.
constexpr int kTiles[] = {64, 32};
constexpr int kStagesOfTile[] = {2, 4};

testing::MlaPlanner wgmma_planner(int tile) {
  return [tile](const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sms, int splits) {
    return plan_mla_decode_wgmma(shape, dtype, batch, max_len, sms, splits, tile);
  };
}

// Runs the case on the warpgroup-MMA kernel in both tilings (one reference) and checks that each
// plan was that kernel's in the tiling asked for.
void run(const MlaDecodeCase& c) {
  const std::vector<MlaDecodePlan> plans = testing::run_mla_decode_case(c, {wgmma_planner(64), wgmma_planner(32)});
  ASSERT_EQ(plans.size(), 2u);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    EXPECT_EQ(plans[i].kernel, MlaKernel::wgmma);
    EXPECT_EQ(plans[i].to_json()["kernel"], "mla_decode_wgmma");
    EXPECT_EQ(plans[i].tile_tokens, kTiles[i]);
    EXPECT_EQ(plans[i].stages, kStagesOfTile[i]);
  }
}

TEST(MlaDecodeWgmmaGpu, EveryHeadCountAndQueryLength) {
  DB_REQUIRE_MLA_WGMMA();
  for (const int h : {1, 8, 16, 24, 32, 64, 96, 128})
    for (const int q_len : {1, 2}) {
      MlaDecodeCase c;
      c.heads_q = h;
      c.q_len = q_len;
      c.lengths = {1, 31, 32, 33, 63, 64, 65, 4097};
      c.shuffle = true;
      run(c);
    }
}

TEST(MlaDecodeWgmmaGpu, PageSizesOrdersAndStorage) {
  DB_REQUIRE_MLA_WGMMA();
  for (const int page : {1, 7, 64})
    for (const bool shuffle : {false, true}) {
      MlaDecodeCase c;
      c.heads_q = 64;
      c.q_len = 2;
      c.lengths = {1, 31, 32, 33, 63, 64, 65, 129};
      c.page_size = page;
      c.shuffle = shuffle;
      c.dtype = page == 7 ? DType::fp16 : DType::bf16;
      run(c);
    }
  MlaDecodeCase contiguous;
  contiguous.heads_q = 128;
  contiguous.lengths = {65, 1, 200};
  contiguous.storage = LatentStorage::contiguous;
  run(contiguous);
}

TEST(MlaDecodeWgmmaGpu, EmptySequenceAndBothStorageTypes) {
  DB_REQUIRE_MLA_WGMMA();
  for (const DType dtype : {DType::fp16, DType::bf16})
    for (const int splits : {1, 3, 0}) {
      MlaDecodeCase c;
      c.heads_q = 64;
      c.q_len = 2;
      c.dtype = dtype;
      c.lengths = {100, 0, 1, 257};
      c.page_size = 7;
      c.shuffle = true;
      c.splits = splits;
      c.q_amplitude = 4.f;  // sharper softmax: the reference max moves, O is rescaled
      run(c);
    }
}

TEST(MlaDecodeWgmmaGpu, SplitsMergeByLogSumExp) {
  DB_REQUIRE_MLA_WGMMA();
  for (const int splits : {1, 2, 5, 64}) {
    MlaDecodeCase c;
    c.heads_q = 128;
    c.lengths = {2048, 777};
    c.splits = splits;
    run(c);
  }
  // q_len 2 over a split boundary: the first position sees one token fewer, in the last split.
  MlaDecodeCase edge;
  edge.heads_q = 64;
  edge.q_len = 2;
  edge.lengths = {4097, 129};
  edge.splits = 4;
  edge.dtype = DType::fp16;
  run(edge);
}

// Long sequences: thousands of tiles through the stages (the 32-token tiling's 4 wrap around
// every 4 tiles), the planner's 64 splits and one split over all 100,003 tokens, q_len 2's causal
// cut in the last tile.
TEST(MlaDecodeWgmmaGpu, LongSequence) {
  DB_REQUIRE_MLA_WGMMA();
  MlaDecodeCase c;
  c.heads_q = 16;
  c.q_len = 2;
  c.lengths = {100003, 33};
  c.shuffle = true;
  run(c);
  MlaDecodeCase one_split;
  one_split.heads_q = 24;
  one_split.lengths = {100003};
  one_split.dtype = DType::fp16;
  one_split.splits = 1;
  run(one_split);
}

// A few small cases for compute-sanitizer (memcheck and racecheck, scripts/gpu_check.sh), both
// tilings: both storage types, pages of 7 tokens shuffled, an empty sequence, splits, rows past
// the last head (h_q 96's second block half padding; h_q 8 one block of 8 rows and 56 zero ones);
// 330 tokens in 2 splits give the 32-token tiling 6 and 5 tiles a split, so its 4 stages are
// refilled (not only the prologue's 3 tiles).
TEST(MlaDecodeWgmmaGpu, Small) {
  DB_REQUIRE_MLA_WGMMA();
  MlaDecodeCase few_rows;
  few_rows.heads_q = 8;
  few_rows.lengths = {65, 0, 200};
  few_rows.page_size = 7;
  few_rows.shuffle = true;
  few_rows.splits = 2;
  run(few_rows);
  for (const DType dtype : {DType::fp16, DType::bf16}) {
    MlaDecodeCase c;
    c.heads_q = 96;
    c.lengths = {1, 0, 130, 330};
    c.page_size = 7;
    c.shuffle = true;
    c.dtype = dtype;
    c.splits = 2;
    run(c);
  }
}

// The in-kernel merges' cases (the fused merge's, the cluster merge's): a plan of each merge from
// `merged(tile)` beside the merge kernel's from `kernel_merge(tile)`, against one reference, at
// every split count 2 to 8 at 16 rows a block, some at 48 and at two row blocks a sequence, over
// lengths that leave splits empty beside an empty sequence, shuffled pages of 7, both tilings.
// The longest sequence, 2047 tokens, is 32 tiles of 64, so each split count asked for is the
// count planned; check(merged plan, merge-kernel plan) follows each case.
template <class Merged, class KernelMerge, class Check>
void run_few_split_merge_cases(const Merged& merged, const KernelMerge& kernel_merge, const Check& check) {
  struct Shape {
    int heads, q_len;
    std::vector<int> splits;
  };
  const std::vector<Shape> shapes{{16, 1, {2, 3, 4, 5, 6, 7, 8}}, {24, 2, {3, 6}}, {128, 1, {2, 4, 8}}};
  for (const int tile : kTiles)
    for (const Shape& shape : shapes)
      for (const int splits : shape.splits) {
        MlaDecodeCase c;
        c.heads_q = shape.heads;
        c.q_len = shape.q_len;
        c.lengths = {2047, 0, 70, 1000};
        c.splits = splits;
        c.shuffle = true;
        c.page_size = 7;
        const std::vector<MlaDecodePlan> plans = testing::run_mla_decode_case(c, {merged(tile), kernel_merge(tile)});
        ASSERT_EQ(plans.size(), 2u);
        EXPECT_EQ(plans[0].num_splits, splits) << tile;
        check(plans[0], plans[1]);
      }
}

// run_few_split_merge_cases's planner of a tiling: plan_mla_decode_wgmma at `tile`, then `mark`
// (set_mla_cluster_merge, set_mla_spread_merge), or, where mark is null, the merge kernel's plan.
auto marked_planner(void (*mark)(MlaDecodePlan&)) {
  return [mark](int tile) -> testing::MlaPlanner {
    return [tile, mark](const MlaShape& s, DType d, int batch, std::int64_t len, int sms, int splits) {
      MlaDecodePlan p = plan_mla_decode_wgmma(s, d, batch, len, sms, splits, tile);
      if (mark != nullptr) mark(p);
      return p;
    };
  };
}

// The fused merge (MlaDecodePlan::fused_merge: each row block's last split folds its splits) beside
// the merge kernel (run_few_split_merge_cases: every split count it takes, each compiled on its
// own: fold_split_partials_at). run_mla_decode_case launches a fused plan twice, so the counters
// the last blocks reset are checked too. More than 8 splits are never fused, and nothing is unless
// asked for (DECODE_BENCH_MLA_FUSED_MERGE=on).
TEST(MlaDecodeWgmmaGpu, FusedMergeAtFewSplits) {
  DB_REQUIRE_MLA_WGMMA();
  const auto planner = [](bool fused) {
    return [fused](int tile) -> testing::MlaPlanner {
      return [tile, fused](const MlaShape& s, DType d, int batch, std::int64_t len, int sms, int splits) {
        return plan_mla_decode_wgmma(s, d, batch, len, sms, splits, tile, fused);
      };
    };
  };
  run_few_split_merge_cases(planner(true), planner(false), [](const MlaDecodePlan& fused, const MlaDecodePlan& kernel) {
    EXPECT_TRUE(fused.fused_merge) << fused.num_splits;
    EXPECT_FALSE(fused.dependent_merge);
    EXPECT_EQ(fused.workspace_bytes, kernel.workspace_bytes + 4u * 4 * fused.row_blocks);
    EXPECT_FALSE(kernel.fused_merge);
  });
  MlaShape h16;
  h16.heads_q = 16;
  EXPECT_FALSE(plan_mla_decode_wgmma(h16, DType::bf16, 1, 32768, 132, 9, 64).fused_merge);
  EXPECT_FALSE(plan_mla_decode_wgmma(h16, DType::bf16, 1, 32768, 132, 1, 64).fused_merge);
  // Asked for (DECODE_BENCH_MLA_FUSED_MERGE=on), not by default: 4 splits either way.
  const MlaDecodePlan asked = plan_mla_decode_for_device(h16, DType::bf16, 32, 4096, 0, 0, 0, true, std::nullopt, true);
  EXPECT_TRUE(asked.fused_merge);
  EXPECT_FALSE(asked.dependent_merge);
  // By default the merge is folded in only as the spread merge (its own test below).
  const MlaDecodePlan by_default = plan_mla_decode_for_device(h16, DType::bf16, 32, 4096, 0);
  EXPECT_EQ(by_default.fused_merge, by_default.spread_merge);
  EXPECT_FALSE(asked.spread_merge);
  EXPECT_EQ(by_default.num_splits, asked.num_splits);
  const MlaDecodePlan merge_kernel =
      plan_mla_decode_for_device(h16, DType::bf16, 32, 4096, 0, 0, 0, true, std::nullopt, false, false, false);
  EXPECT_FALSE(merge_kernel.fused_merge);
  EXPECT_EQ(asked.workspace_bytes, merge_kernel.workspace_bytes + 4u * 32 * asked.row_blocks);
}

// The cluster merge (MlaDecodePlan::cluster_merge: each row block's splits one cluster, folded over
// distributed shared memory) beside the merge kernel (run_few_split_merge_cases); a cluster plan
// has no workspace. The device planner takes it where every row block's cluster is resident at
// once, not when asked not to (DECODE_BENCH_MLA_CLUSTER_MERGE=off), and never beside a fused merge.
TEST(MlaDecodeWgmmaGpu, ClusterMergeAtFewSplits) {
  DB_REQUIRE_MLA_WGMMA();
  run_few_split_merge_cases(marked_planner(set_mla_cluster_merge), marked_planner(nullptr),
                            [](const MlaDecodePlan& cluster, const MlaDecodePlan& kernel) {
                              EXPECT_TRUE(cluster.cluster_merge) << cluster.num_splits;
                              EXPECT_EQ(cluster.workspace_bytes, 0u);
                              EXPECT_FALSE(kernel.cluster_merge);
                            });
  MlaShape h16, h128;
  h16.heads_q = 16;
  // Eight sequences of 4 splits (32K tokens: this kernel's at 16 rows): eight clusters, resident on
  // any Hopper GPU.
  const MlaDecodePlan four = plan_mla_decode_for_device(h16, DType::bf16, 8, 4096, 0, 4);
  ASSERT_EQ(four.kernel, MlaKernel::wgmma);
  ASSERT_EQ(four.num_splits, 4);
  EXPECT_TRUE(four.cluster_merge);
  EXPECT_FALSE(four.dependent_merge);
  EXPECT_EQ(four.workspace_bytes, 0u);
  EXPECT_EQ(four.to_json()["cluster_merge"], true);
  // The planner's own splits at 32 x 4K: a cluster plan exactly where every row block's cluster is
  // resident (the GPCs decide how many are: docs/kernels/mla.md, "The split merge in a cluster").
  for (const MlaShape& shape : {h16, h128}) {
    const MlaDecodePlan p = plan_mla_decode_for_device(shape, DType::bf16, 32, 4096, 0);
    ASSERT_EQ(p.kernel, MlaKernel::wgmma);
    int clusters = 0;
    ASSERT_EQ(mla_decode_wgmma_resident_clusters(p.tile_tokens, p.num_splits, &clusters), cudaSuccess);
    const bool few_splits = p.num_splits >= 2 && p.num_splits <= 8;
    EXPECT_EQ(p.cluster_merge, few_splits && clusters >= 32 * p.row_blocks) << shape.heads_q << ": " << clusters;
    EXPECT_EQ(p.workspace_bytes == 0, p.cluster_merge) << shape.heads_q;
  }
  const MlaDecodePlan off =
      plan_mla_decode_for_device(h16, DType::bf16, 8, 4096, 0, 4, 0, true, std::nullopt, false, false, false);
  EXPECT_FALSE(off.cluster_merge);
  EXPECT_FALSE(off.fused_merge);
  EXPECT_TRUE(off.dependent_merge);
  EXPECT_GT(off.workspace_bytes, 0u);
  const MlaDecodePlan fused = plan_mla_decode_for_device(h16, DType::bf16, 8, 4096, 0, 4, 0, true, std::nullopt, true);
  EXPECT_TRUE(fused.fused_merge);
  EXPECT_FALSE(fused.cluster_merge);
  // 64 splits at 1 x 32K: no cluster of that many.
  EXPECT_FALSE(plan_mla_decode_for_device(h16, DType::bf16, 1, 32768, 0).cluster_merge);
  int clusters = -1;
  EXPECT_EQ(mla_decode_wgmma_resident_clusters(64, 9, &clusters), cudaErrorInvalidValue);
  EXPECT_EQ(clusters, 0);
  EXPECT_EQ(mla_decode_wgmma_resident_clusters(48, 4, &clusters), cudaErrorInvalidValue);
}

// The spread merge (MlaDecodePlan::spread_merge: the grid launched cooperatively, every split block
// of a row block folding a share of its columns once all have written their partials) beside the
// merge kernel (run_few_split_merge_cases; run_mla_decode_case launches a fused plan, as a spread
// plan is, twice, so the counters the last block to leave resets are checked too). The device
// planner takes it where a plan of 2 to 8 splits has neither a cluster nor an asked-for fused
// merge and every block is resident at once, not when asked not to (DECODE_BENCH_MLA_SPREAD_MERGE=off).
TEST(MlaDecodeWgmmaGpu, SpreadMergeAtFewSplits) {
  DB_REQUIRE_MLA_WGMMA();
  run_few_split_merge_cases(marked_planner(set_mla_spread_merge), marked_planner(nullptr),
                            [](const MlaDecodePlan& spread, const MlaDecodePlan& kernel) {
                              EXPECT_TRUE(spread.spread_merge) << spread.num_splits;
                              EXPECT_TRUE(spread.fused_merge);
                              EXPECT_FALSE(spread.dependent_merge);
                              // Two counters a row block of the case's four sequences.
                              EXPECT_EQ(spread.workspace_bytes,
                                        kernel.workspace_bytes + 2u * 4 * 4 * spread.row_blocks);
                              EXPECT_FALSE(kernel.spread_merge);
                            });
  MlaShape h16;
  h16.heads_q = 16;
  int resident = 0;
  ASSERT_EQ(mla_decode_wgmma_resident_blocks(64, &resident), cudaSuccess);
  EXPECT_GE(resident, 8 * 4);
  // Eight sequences of 4 splits with the cluster merge off: 32 blocks, resident on any Hopper GPU.
  const auto eight = [&](bool fused, bool spread) {
    return plan_mla_decode_for_device(h16, DType::bf16, 8, 4096, 0, 4, 0, true, std::nullopt, fused, false, spread);
  };
  EXPECT_TRUE(eight(false, true).spread_merge);
  EXPECT_TRUE(eight(false, true).fused_merge);
  EXPECT_FALSE(eight(false, true).dependent_merge);
  EXPECT_EQ(eight(false, true).to_json()["spread_merge"], true);
  EXPECT_FALSE(eight(false, false).spread_merge);
  EXPECT_FALSE(eight(false, false).fused_merge);
  EXPECT_FALSE(eight(true, true).spread_merge);  // asked to fuse: the last block folds
  EXPECT_TRUE(eight(true, true).fused_merge);
  // The planner's own splits at 32 x 4K: a spread plan exactly where no cluster plan is taken and
  // every block is resident.
  const MlaDecodePlan p = plan_mla_decode_for_device(h16, DType::bf16, 32, 4096, 0);
  ASSERT_EQ(p.kernel, MlaKernel::wgmma);
  const bool fits = static_cast<std::int64_t>(resident) >= 32LL * p.row_blocks * p.num_splits;
  EXPECT_EQ(p.spread_merge, p.num_splits >= 2 && p.num_splits <= 8 && !p.cluster_merge && fits) << resident;
  // 64 splits at 1 x 32K: past the fold's 8.
  EXPECT_FALSE(plan_mla_decode_for_device(h16, DType::bf16, 1, 32768, 0).spread_merge);
  EXPECT_EQ(mla_decode_wgmma_resident_blocks(48, &resident), cudaErrorInvalidValue);
  EXPECT_EQ(resident, 0);
}

// The split merge as a programmatic dependent launch of the attention kernel and stream-ordered
// (MlaDecodePlan::dependent_merge, DECODE_BENCH_MERGE_PDL), on this kernel and on the narrow one:
// both verify, at split counts that leave splits empty, beside an empty sequence. The device
// planner sets the flag only for split plans, and not when asked not to.
TEST(MlaDecodeWgmmaGpu, DependentAndStreamOrderedMerge) {
  DB_REQUIRE_MLA_WGMMA();
  const auto planner = [](bool wgmma, bool dependent) {
    return [wgmma, dependent](const MlaShape& s, DType d, int batch, std::int64_t len, int sms, int splits) {
      MlaDecodePlan p = wgmma ? plan_mla_decode_wgmma(s, d, batch, len, sms, splits, 64)
                              : plan_mla_decode(s, d, batch, len, sms, splits);
      p.dependent_merge = dependent && p.num_splits > 1;
      return p;
    };
  };
  for (const bool wgmma : {true, false})
    for (const int splits : {2, 7, 64}) {
      MlaDecodeCase c;
      c.heads_q = 16;
      c.lengths = {4100, 0, 65};
      c.splits = splits;
      const std::vector<MlaDecodePlan> plans =
          testing::run_mla_decode_case(c, {planner(wgmma, true), planner(wgmma, false)});
      ASSERT_EQ(plans.size(), 2u);
      EXPECT_EQ(plans[0].kernel, wgmma ? MlaKernel::wgmma : MlaKernel::mma_narrow);
      EXPECT_TRUE(plans[0].dependent_merge) << splits;
      EXPECT_FALSE(plans[1].dependent_merge) << splits;
      EXPECT_EQ(plans[0].to_json()["dependent_merge"], true);
    }
  MlaShape h16;
  h16.heads_q = 16;
  EXPECT_TRUE(plan_mla_decode_for_device(h16, DType::bf16, 1, 32768, 0).dependent_merge);
  EXPECT_FALSE(plan_mla_decode_for_device(h16, DType::bf16, 1, 32768, 0, 0, 0, false).dependent_merge);
  EXPECT_FALSE(plan_mla_decode_for_device(h16, DType::bf16, 1, 32768, 0, 1).dependent_merge);  // one split
}

// plan_mla_decode_for_device takes this kernel where it runs and is preferred: Hopper, FP16 or
// BF16, more than 16 rows, or 16 or fewer over 32K tokens or more; the mma.sync kernels otherwise
// (fewer tokens: the narrow one; FP8: by rows). Both plans run through run_mla_decode.
TEST(MlaDecodeWgmmaGpu, DispatchTakesTheKernelWhereItRuns) {
  DB_REQUIRE_MLA_WGMMA();
  MlaShape h128, h8, h16, h16q2, h24q2, h32q2;
  h8.heads_q = 8;
  h16.heads_q = 16;
  h16q2.heads_q = 16;
  h16q2.q_len = 2;
  h24q2.heads_q = 24;
  h24q2.q_len = 2;
  h32q2.heads_q = 32;
  h32q2.q_len = 2;
  EXPECT_EQ(plan_mla_decode_for_device(h128, DType::bf16, 4, 4096, 0).kernel, MlaKernel::wgmma);
  EXPECT_EQ(plan_mla_decode_for_device(h128, DType::fp16, 4, 4096, 0).kernel, MlaKernel::wgmma);
  EXPECT_EQ(plan_mla_decode_for_device(h32q2, DType::bf16, 4, 4096, 0).kernel, MlaKernel::wgmma);  // 64 rows
  EXPECT_EQ(plan_mla_decode_for_device(h24q2, DType::bf16, 4, 4096, 0).kernel, MlaKernel::wgmma);  // 48 rows
  EXPECT_EQ(plan_mla_decode_for_device(h16q2, DType::fp16, 4, 4096, 0).kernel, MlaKernel::wgmma);  // 32 rows
  EXPECT_EQ(plan_mla_decode_for_device(h16, DType::bf16, 8, 4096, 0).kernel, MlaKernel::wgmma);  // 16 rows, 32K tokens
  EXPECT_EQ(plan_mla_decode_for_device(h16, DType::bf16, 4, 4096, 0).kernel, MlaKernel::mma_narrow);  // 16K tokens
  EXPECT_EQ(plan_mla_decode_for_device(h8, DType::bf16, 4, 4096, 0).kernel, MlaKernel::mma_narrow);  // 16K tokens
  EXPECT_EQ(plan_mla_decode_for_device(h8, DType::bf16, 32, 4096, 0).kernel, MlaKernel::wgmma);  // 8 rows, 128K tokens
  EXPECT_EQ(plan_mla_decode_for_device(h16q2, DType::fp8_e4m3, 4, 4096, 0).kernel, MlaKernel::mma_narrow);
  EXPECT_EQ(plan_mla_decode_for_device(h128, DType::fp8_e4m3, 4, 4096, 0).kernel, MlaKernel::mma);
  // The tile (DECODE_BENCH_MLA_TILE) reaches the warpgroup-MMA plan; 0 is auto: 64.
  EXPECT_EQ(plan_mla_decode_for_device(h128, DType::bf16, 4, 4096, 0).tile_tokens, 64);
  EXPECT_EQ(plan_mla_decode_for_device(h128, DType::bf16, 4, 4096, 0, 0, 32).tile_tokens, 32);
  EXPECT_EQ(plan_mla_decode_for_device(h128, DType::bf16, 4, 4096, 0, 0, 64).tile_tokens, 64);
  const auto device_planner = [](const MlaShape& s, DType d, int batch, std::int64_t len, int, int splits) {
    return plan_mla_decode_for_device(s, d, batch, len, 0, splits);
  };
  MlaDecodeCase c;
  c.heads_q = 64;
  c.lengths = {300, 65};
  EXPECT_EQ(testing::run_mla_decode_case(c, device_planner).kernel, MlaKernel::wgmma);
  c.heads_q = 8;  // 2 x 300 tokens: the narrow kernel
  EXPECT_EQ(testing::run_mla_decode_case(c, device_planner).kernel, MlaKernel::mma_narrow);
  c.heads_q = 16;
  EXPECT_EQ(testing::run_mla_decode_case(c, device_planner).kernel, MlaKernel::mma_narrow);
  c.heads_q = 48;
  EXPECT_EQ(testing::run_mla_decode_case(c, device_planner).kernel, MlaKernel::wgmma);
  c.dtype = DType::fp8_e4m3;
  EXPECT_EQ(testing::run_mla_decode_case(c, device_planner).kernel, MlaKernel::mma);
}

// DECODE_BENCH_MLA_KERNEL's pin (plan_mla_decode_for_device's `pinned`): each kernel planned where
// it computes the point, and run against the reference; the pins it cannot honour refused with the
// reason (FP8 on this kernel; more than 32 rows on the narrow one).
TEST(MlaDecodeWgmmaGpu, PinnedKernelPlannedOrRefusedWithTheReason) {
  DB_REQUIRE_MLA_WGMMA();
  for (const MlaKernel k : {MlaKernel::wgmma, MlaKernel::mma_narrow, MlaKernel::mma}) {
    MlaDecodeCase c;
    c.heads_q = 8;
    c.lengths = {300, 65};
    c.splits = 0;
    const auto pinned = [k](const MlaShape& s, DType d, int batch, std::int64_t len, int, int splits) {
      return plan_mla_decode_for_device(s, d, batch, len, 0, splits, 0, true, k);
    };
    EXPECT_EQ(testing::run_mla_decode_case(c, pinned).kernel, k);
  }
  MlaShape h8, h64;
  h8.heads_q = 8;
  h64.heads_q = 64;
  try {
    plan_mla_decode_for_device(h8, DType::fp8_e4m3, 4, 4096, 0, 0, 0, true, MlaKernel::wgmma);
    ADD_FAILURE() << "FP8 planned on the warpgroup-MMA kernel";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mla_decode_wgmma does not compute this point"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("fp16 or bf16"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_mla_decode_for_device(h64, DType::bf16, 4, 4096, 0, 0, 0, true, MlaKernel::mma_narrow),
               std::invalid_argument);
  // Unpinned: the dispatch.
  EXPECT_EQ(plan_mla_decode_for_device(h8, DType::bf16, 4, 4096, 0).kernel, MlaKernel::mma_narrow);
}

// Host-side: the dispatch's preference. More than 16 rows always; 16 or fewer from 32K tokens of
// batch x max_len on (the narrow kernel below: its 16-row block does a quarter of the MMA work).
TEST(MlaDecodeWgmmaPlan, SixteenRowsOrFewerPreferTheKernelFromThirtyTwoKTokens) {
  MlaShape h16, h8, h1, h16q2, h128, h17;
  h1.heads_q = 1;
  h16.heads_q = 16;
  h8.heads_q = 8;
  h17.heads_q = 17;
  h16q2.heads_q = 16;
  h16q2.q_len = 2;
  EXPECT_TRUE(mla_prefers_wgmma(h16, 128, 4096));
  EXPECT_TRUE(mla_prefers_wgmma(h16, 1, 32768));
  EXPECT_TRUE(mla_prefers_wgmma(h16, 8, 4096));
  EXPECT_FALSE(mla_prefers_wgmma(h16, 8, 4095));
  EXPECT_FALSE(mla_prefers_wgmma(h16, 8, 1024));
  EXPECT_FALSE(mla_prefers_wgmma(h16, 1, 32767));
  EXPECT_TRUE(mla_prefers_wgmma(h16q2, 1, 1));
  EXPECT_TRUE(mla_prefers_wgmma(h128, 1, 1));
  EXPECT_TRUE(mla_prefers_wgmma(h17, 1, 1));
  EXPECT_TRUE(mla_prefers_wgmma(h8, 32, 4096));
  EXPECT_TRUE(mla_prefers_wgmma(h8, 1024, 1 << 20));
  EXPECT_FALSE(mla_prefers_wgmma(h8, 8, 4095));
  EXPECT_TRUE(mla_prefers_wgmma(h1, 1, 32768));
  EXPECT_FALSE(mla_prefers_wgmma(h1, 1, 32767));
}

// Host-side: plan_mla_decode plans the mma.sync kernel it is asked for, and refuses with the
// reason the narrow kernel above 32 rows and the warpgroup-MMA kernel (whose planner is another).
TEST(MlaDecodeWgmmaPlan, MmaSyncKernelsPinnedOrRefusedWithTheReason) {
  MlaShape h8, h64;
  h8.heads_q = 8;
  h64.heads_q = 64;
  EXPECT_EQ(plan_mla_decode(h8, DType::bf16, 4, 4096, 132, 0, MlaKernel::mma).kernel, MlaKernel::mma);
  EXPECT_EQ(plan_mla_decode(h8, DType::bf16, 4, 4096, 132, 0, MlaKernel::mma_narrow).kernel, MlaKernel::mma_narrow);
  EXPECT_EQ(plan_mla_decode(h64, DType::fp8_e4m3, 4, 4096, 132, 0, MlaKernel::mma).kernel, MlaKernel::mma);
  try {
    plan_mla_decode(h64, DType::bf16, 4, 4096, 132, 0, MlaKernel::mma_narrow);
    ADD_FAILURE() << "64 rows planned on the narrow kernel";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mla_decode_mma_narrow does not compute this point"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("64 is over its 32 rows"), std::string::npos) << e.what();
  }
  EXPECT_THROW(plan_mla_decode(h8, DType::bf16, 4, 4096, 132, 0, MlaKernel::wgmma), std::invalid_argument);
}

// Host-side: the plan's shape and split rule (the 64-token tiling, pinned), its JSON, and the refusals.
TEST(MlaDecodeWgmmaPlan, BlocksSplitsAndJson) {
  MlaShape h128;
  const MlaDecodePlan big = plan_mla_decode_wgmma(h128, DType::bf16, 128, 4096, 132, 0, 64);
  EXPECT_EQ(big.kernel, MlaKernel::wgmma);
  EXPECT_EQ(big.row_blocks, 2);
  EXPECT_EQ(big.num_splits, 1);  // 256 blocks: 2 waves of 64 tiles; 2 splits would be 4 waves of 32, no better
  EXPECT_EQ(big.workspace_bytes, 0u);
  EXPECT_EQ(big.threads, 256);
  EXPECT_EQ(big.warpgroups, 2);
  // 1 KiB alignment slack, Q and 2 stages of 64 x 576 BF16, P's fragments, the rows' factors.
  EXPECT_EQ(big.shared_bytes, 1024u + 3u * 64 * 576 * 2 + 16u * 128 * 4 + 2u * (2u * 128 * 4));
  EXPECT_LE(big.shared_bytes, 227u * 1024);
  // 32 x 4K at q_len 1: 64 blocks fill half the SMs; 2 splits fill 128 of 132 with 32 tiles each.
  const MlaDecodePlan mid = plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 0, 64);
  EXPECT_EQ(mid.num_splits, 2);
  EXPECT_EQ(mid.split_tiles, 32);
  EXPECT_FALSE(mid.fused_merge);  // the merge kernel unless asked for
  EXPECT_EQ(mid.workspace_bytes, 2u * 32 * 128 * 513 * 4);
  // Asked for: the partials, then the fused merge's counters, one a row block.
  const MlaDecodePlan mid_fused = plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 0, 64, true);
  EXPECT_TRUE(mid_fused.fused_merge);
  EXPECT_EQ(mid_fused.num_splits, 2);
  EXPECT_EQ(mid_fused.workspace_bytes, 2u * 32 * 128 * 513 * 4 + 32u * 2 * 4);
  MlaShape h128q2 = h128;
  h128q2.q_len = 2;
  EXPECT_EQ(plan_mla_decode_wgmma(h128q2, DType::bf16, 32, 4096, 132).num_splits, 1);  // 128 blocks already
  // 1 x 32K: 2 blocks; the most splits (64) of 8 tiles each.
  const MlaDecodePlan one = plan_mla_decode_wgmma(h128, DType::bf16, 1, 32768, 132, 0, 64);
  EXPECT_EQ(one.num_splits, 64);
  EXPECT_EQ(one.split_tiles, 8);
  // One row block (16 rows) takes the higher cap, 128 splits of 4 tiles: their merge runs over
  // quarters of rows (mla_wgmma_split_cap; docs/kernels/mla.md, "The split merge").
  MlaShape h16;
  h16.heads_q = 16;
  EXPECT_EQ(plan_mla_decode_wgmma(h16, DType::bf16, 1, 32768, 132, 0, 64).num_splits, 128);
  // Forced splits are taken, clamped to the tiles, none left empty.
  const MlaDecodePlan forced = plan_mla_decode_wgmma(h128, DType::bf16, 1, 100, 132, 3, 64);
  EXPECT_EQ(forced.num_splits, 2);  // 2 tiles of 64
  EXPECT_EQ(forced.split_tiles, 1);
  // rows 96: two blocks of 64 rows.
  MlaShape h96;
  h96.heads_q = 96;
  EXPECT_EQ(plan_mla_decode_wgmma(h96, DType::fp16, 1, 100, 132).row_blocks, 2);
  const nlohmann::json j = mid.to_json();
  EXPECT_EQ(j["kernel"], "mla_decode_wgmma");
  EXPECT_EQ(j["rows_per_block"], 64);
  EXPECT_EQ(j["tile_tokens"], 64);
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["warpgroups"], 2);
  EXPECT_EQ(j["num_splits"], 2);
  EXPECT_EQ(j["shared_bytes"], mid.shared_bytes);
  EXPECT_EQ(j["fused_merge"], false);
  EXPECT_EQ(mid_fused.to_json()["fused_merge"], true);
  EXPECT_FALSE(big.to_json().contains("fused_merge"));  // no splits
  // The mma.sync plans name their kernels and carry no warpgroups.
  const nlohmann::json mma = plan_mla_decode(h128, DType::bf16, 32, 4096, 132).to_json();
  EXPECT_EQ(mma["kernel"], "mla_decode_mma");
  EXPECT_FALSE(mma.contains("warpgroups"));
  EXPECT_EQ(plan_mla_decode(h16, DType::bf16, 32, 4096, 132).to_json()["kernel"], "mla_decode_mma_narrow");
}

// Host-side: the many-splits merge takes a quarter of a row a block where rows x 4 is at most two
// blocks an SM, a whole row otherwise, and the plans of all three kernels carry the choice (in
// their JSON only with splits). The points are those the choice was measured at (1 x 32K at 16, 64
// and 128 rows; 8 x 1K at 8 and 16 rows on the narrow kernel): docs/kernels/mla.md, "The split merge".
TEST(MlaDecodeWgmmaPlan, ManySplitsMergeOverQuartersOfRowsWhereAtMostTwoBlocksAnSm) {
  EXPECT_EQ(mla_merge_column_blocks(64, 16, 132), kMlaMergeQuarterBlocks);
  EXPECT_EQ(mla_merge_column_blocks(64, 66, 132), kMlaMergeQuarterBlocks);  // 264 blocks: two an SM
  EXPECT_EQ(mla_merge_column_blocks(64, 67, 132), 1);
  EXPECT_EQ(mla_merge_column_blocks(9, 16, 132), kMlaMergeQuarterBlocks);
  EXPECT_EQ(mla_merge_column_blocks(8, 16, 132), 1);  // the few-splits kernel: a row a block
  EXPECT_EQ(mla_merge_column_blocks(1, 1, 132), 1);
  EXPECT_EQ(mla_merge_column_blocks(64, 16, 8), 1);  // a small device: 64 blocks would be 8 an SM
  const auto wgmma = [](int heads_q, int batch, std::int64_t len) {
    MlaShape s;
    s.heads_q = heads_q;
    return plan_mla_decode_wgmma(s, DType::bf16, batch, len, 132, 0, 64);
  };
  // The split cap follows: 128 where 128 splits' merge would run over quarters, else 64.
  EXPECT_EQ(mla_wgmma_split_cap(1, 16, 132), 128);
  EXPECT_EQ(mla_wgmma_split_cap(1, 66, 132), 128);
  EXPECT_EQ(mla_wgmma_split_cap(1, 67, 132), 64);
  EXPECT_EQ(mla_wgmma_split_cap(2, 64, 132), 64);
  const MlaDecodePlan h16 = wgmma(16, 1, 32768), h64 = wgmma(64, 1, 32768), h128 = wgmma(128, 1, 32768);
  EXPECT_EQ(h16.num_splits, 128);
  EXPECT_EQ(h64.num_splits, 128);
  EXPECT_EQ(h128.num_splits, 64);  // two row blocks: 64 splits fill the SMs once, as before
  EXPECT_EQ(wgmma(16, 2, 32768).num_splits, 64);  // 128 blocks already; 128 splits would be 2 waves
  EXPECT_EQ(h16.merge_column_blocks, kMlaMergeQuarterBlocks);
  EXPECT_EQ(h64.merge_column_blocks, kMlaMergeQuarterBlocks);
  EXPECT_EQ(h128.merge_column_blocks, 1);
  EXPECT_EQ(h16.to_json()["merge_column_blocks"], kMlaMergeQuarterBlocks);
  EXPECT_EQ(h128.to_json()["merge_column_blocks"], 1);
  EXPECT_FALSE(wgmma(128, 128, 4096).to_json().contains("merge_column_blocks"));  // one split: no merge
  MlaShape n8, n16;
  n8.heads_q = 8;
  n16.heads_q = 16;
  const MlaDecodePlan narrow8 = plan_mla_decode(n8, DType::bf16, 8, 1024, 132);
  const MlaDecodePlan narrow16 = plan_mla_decode(n16, DType::bf16, 8, 1024, 132);
  ASSERT_EQ(narrow8.kernel, MlaKernel::mma_narrow);
  EXPECT_EQ(narrow8.num_splits, 16);
  EXPECT_EQ(narrow8.merge_column_blocks, kMlaMergeQuarterBlocks);  // 64 rows
  EXPECT_EQ(narrow16.num_splits, 16);
  EXPECT_EQ(narrow16.merge_column_blocks, 1);  // 128 rows
  const MlaDecodePlan fp8 = plan_mla_decode(n16, DType::fp8_e4m3, 1, 32768, 132);
  EXPECT_EQ(fp8.num_splits, 128);
  EXPECT_EQ(fp8.merge_column_blocks, kMlaMergeQuarterBlocks);
  MlaShape h128s;
  const MlaDecodePlan wide = plan_mla_decode(h128s, DType::fp8_e4m3, 1, 32768, 132);
  ASSERT_EQ(wide.kernel, MlaKernel::mma);
  EXPECT_EQ(wide.num_splits, 64);
  EXPECT_EQ(wide.merge_column_blocks, 1);  // 128 rows
}

// Host-side: the 32-token tiling's plan (4 stages, its shared memory, its JSON), its splits counted
// in tokens as the 64-token tiling's (the same split counts at the sweep's shapes, at least 256
// tokens a split), forced splits clamped to its own tiles, and a tile the kernel lacks refused.
TEST(MlaDecodeWgmmaPlan, ThirtyTwoTokenTilesSplitInTokensAsSixtyFour) {
  MlaShape h128, h16, h128q2;
  h16.heads_q = 16;
  h128q2.q_len = 2;
  const MlaDecodePlan p32 = plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 0, 32);
  EXPECT_EQ(p32.kernel, MlaKernel::wgmma);
  EXPECT_EQ(p32.tile_tokens, 32);
  EXPECT_EQ(p32.stages, 4);
  EXPECT_EQ(p32.threads, 256);
  // 1 KiB alignment slack, Q and 4 stages of 32 x 576 BF16, P's fragments (8 words a thread), the
  // rows' factors: within the 227 KiB an H100 block may take.
  EXPECT_EQ(p32.shared_bytes, 1024u + (64u + 4u * 32) * 576 * 2 + 8u * 128 * 4 + 2u * (2u * 128 * 4));
  EXPECT_LE(p32.shared_bytes, 227u * 1024);
  EXPECT_EQ(p32.num_splits, 2);  // as the 64-token plan: 2 splits of 2048 tokens
  EXPECT_EQ(p32.split_tiles, 64);
  const nlohmann::json j = p32.to_json();
  EXPECT_EQ(j["tile_tokens"], 32);
  EXPECT_EQ(j["stages"], 4);
  EXPECT_EQ(j["shared_bytes"], p32.shared_bytes);
  // Auto (0, the default): 64-token tiles at every row count (heads_q x q_len).
  MlaShape h64q2;  // 128 rows at q_len 2
  h64q2.heads_q = 64;
  h64q2.q_len = 2;
  for (const MlaShape& shape : {h16, h128, h64q2, h128q2}) {
    EXPECT_EQ(plan_mla_decode_wgmma(shape, DType::bf16, 32, 4096, 132).tile_tokens, 64) << shape.rows();
    EXPECT_EQ(plan_mla_decode_wgmma(shape, DType::bf16, 32, 4096, 132).stages, 2) << shape.rows();
  }

  // At the mla preset's shapes both tilings take the same split count, and the finer tile's
  // longest split is no longer than the coarser's (less than one 64-token tile shorter).
  for (const MlaShape& shape : {h16, h128, h128q2})
    for (const auto& [batch, len] : {std::pair{128, 4096}, std::pair{128, 16384}, std::pair{32, 4096},
                                     std::pair{1, 32768}, std::pair{1, 4097}, std::pair{3, 1000}}) {
      SCOPED_TRACE("rows " + std::to_string(shape.rows()) + " " + std::to_string(batch) + " x " + std::to_string(len));
      const MlaDecodePlan a = plan_mla_decode_wgmma(shape, DType::bf16, batch, len, 132, 0, 64);
      const MlaDecodePlan b = plan_mla_decode_wgmma(shape, DType::bf16, batch, len, 132, 0, 32);
      EXPECT_EQ(a.tile_tokens, 64);
      EXPECT_EQ(b.tile_tokens, 32);
      EXPECT_EQ(b.num_splits, a.num_splits);
      EXPECT_LE(b.split_tiles * 32, a.split_tiles * 64);
      EXPECT_GT(b.split_tiles * 32, a.split_tiles * 64 - 64);
      EXPECT_GE(static_cast<std::int64_t>(b.split_tiles) * 32 * b.num_splits, len);  // every token in a split
      EXPECT_EQ(b.workspace_bytes, a.workspace_bytes);
    }
  // 1 x 32K: 64 splits of 512 tokens (16 tiles of 32).
  const MlaDecodePlan one = plan_mla_decode_wgmma(h128, DType::bf16, 1, 32768, 132, 0, 32);
  EXPECT_EQ(one.num_splits, 64);
  EXPECT_EQ(one.split_tiles, 16);
  // At least 256 tokens a split, counted in tokens: 480 tokens (15 tiles of 32, under 8 tiles' 256
  // tokens twice) take 2 splits in both tilings, as 8 units of 64 allow 2 splits of 4.
  const MlaDecodePlan short32 = plan_mla_decode_wgmma(h128, DType::bf16, 1, 480, 132, 0, 32);
  EXPECT_EQ(short32.num_splits, 2);
  EXPECT_EQ(short32.split_tiles, 8);
  EXPECT_EQ(plan_mla_decode_wgmma(h128, DType::bf16, 1, 480, 132, 0, 64).num_splits, 2);
  // Under 512 tokens rounded up to 64: one split (no split of fewer than 256 tokens).
  EXPECT_EQ(plan_mla_decode_wgmma(h128, DType::bf16, 1, 448, 132, 0, 32).num_splits, 1);
  EXPECT_EQ(plan_mla_decode_wgmma(h128, DType::bf16, 1, 448, 132, 0, 64).num_splits, 1);
  // Forced splits are taken, clamped to this tiling's tiles, none left empty.
  const MlaDecodePlan forced = plan_mla_decode_wgmma(h128, DType::bf16, 1, 100, 132, 64, 32);
  EXPECT_EQ(forced.num_splits, 4);  // 4 tiles of 32 (the 64-token tiling: 2)
  EXPECT_EQ(forced.split_tiles, 1);
  const MlaDecodePlan three = plan_mla_decode_wgmma(h128, DType::bf16, 1, 100, 132, 3, 32);
  EXPECT_EQ(three.num_splits, 2);  // 3 over 4 tiles: 2 tiles a split, so 2 splits
  EXPECT_EQ(three.split_tiles, 2);
  EXPECT_EQ(three.workspace_bytes, 2u * 1 * 128 * 513 * 4);
  // A tile the kernel lacks: refused, naming it.
  for (const int bad : {16, 48, 128, -32}) {
    try {
      (void)plan_mla_decode_wgmma(h128, DType::bf16, 1, 4096, 132, 0, bad);
      ADD_FAILURE() << "tile " << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("not " + std::to_string(bad)), std::string::npos) << e.what();
    }
  }
}

// The fused merge's refusals, none of which touches a GPU: a fused plan's workspace needs a pointer
// for its counters (a plan without them needs nothing), and only the warpgroup-MMA kernel folds its
// merge, so an mma.sync plan marked fused is refused before any launch (every other field of it is
// the planner's and valid: unmarked, it would launch).
// run_mla_decode of a BF16 plan the launch must refuse before any CUDA call: a cache with nothing
// but its head dim, no q or o, and a workspace pointer never read.
cudaError_t refused_launch(const MlaShape& shape, const MlaDecodePlan& plan) {
  ContiguousKV<__nv_bfloat16> kv{};
  kv.head_dim = shape.key_dim();
  std::vector<unsigned char> workspace(plan.workspace_bytes);
  return run_mla_decode(shape, kv, nullptr, nullptr, nullptr, nullptr, workspace.data(), plan, nullptr);
}

TEST(MlaDecodeWgmmaPlan, FusedMergeRefusedWhereItCannotRun) {
  MlaShape h128;
  const MlaDecodePlan fused = plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 0, 64, true);
  ASSERT_TRUE(fused.fused_merge);
  EXPECT_EQ(init_mla_workspace(fused, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(init_mla_workspace(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 0, 64), nullptr, nullptr),
            cudaSuccess);
  MlaDecodePlan mma = plan_mla_decode(h128, DType::bf16, 32, 4096, 132, 2);
  ASSERT_EQ(mma.kernel, MlaKernel::mma);
  ASSERT_EQ(mma.num_splits, 2);
  mma.fused_merge = true;
  EXPECT_EQ(refused_launch(h128, mma), cudaErrorInvalidValue);
}

// What `mark` (set_mla_cluster_merge, set_mla_spread_merge) refuses a plan with: its message, or
// empty where it takes the plan.
std::string refusal_of(void (*mark)(MlaDecodePlan&), MlaDecodePlan p) {
  try {
    mark(p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

// set_mla_cluster_merge takes a warpgroup-MMA plan of 2 to 8 splits that is not fused, and names
// what is wrong with any other; the mma.sync launch refuses a cluster plan before any launch.
TEST(MlaDecodeWgmmaPlan, ClusterMergeRefusedWhereItCannotRun) {
  MlaShape h128;
  const auto refusal = [](const MlaDecodePlan& p) { return refusal_of(set_mla_cluster_merge, p); };
  MlaDecodePlan four = plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 4, 64);
  ASSERT_EQ(four.num_splits, 4);
  ASSERT_GT(four.workspace_bytes, 0u);
  set_mla_cluster_merge(four);
  EXPECT_TRUE(four.cluster_merge);
  EXPECT_EQ(four.workspace_bytes, 0u);
  EXPECT_EQ(four.to_json()["cluster_merge"], true);
  EXPECT_EQ(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 4, 64).to_json()["cluster_merge"], false);
  EXPECT_EQ(refusal(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 1, 64)),
            "the cluster merge takes 2 to 8 splits, not 1");
  EXPECT_EQ(refusal(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 16, 64)),
            "the cluster merge takes 2 to 8 splits, not 16");
  EXPECT_EQ(refusal(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 4, 64, true)),
            "a fused-merge plan has no cluster merge");
  MlaDecodePlan mma = plan_mla_decode(h128, DType::bf16, 32, 4096, 132, 2);
  ASSERT_EQ(mma.kernel, MlaKernel::mma);
  EXPECT_EQ(refusal(mma), "the cluster merge is the warpgroup-MMA mla kernel's, not mla_decode_mma's");
  mma.cluster_merge = true;
  EXPECT_EQ(refused_launch(h128, mma), cudaErrorInvalidValue);
  // The residency query refuses a cluster it has no kernel for before asking the device (a build
  // without the kernel has none to ask about).
  const cudaError_t refused = mla_decode_wgmma_compiled() ? cudaErrorInvalidValue : cudaErrorNotSupported;
  int clusters = -1;
  EXPECT_EQ(mla_decode_wgmma_resident_clusters(64, 9, &clusters), refused);
  EXPECT_EQ(clusters, 0);
  EXPECT_EQ(mla_decode_wgmma_resident_clusters(64, 0, &clusters), refused);
  EXPECT_EQ(mla_decode_wgmma_resident_clusters(48, 4, &clusters), refused);
}

// set_mla_spread_merge takes a warpgroup-MMA plan of 2 to 8 splits with neither a fused nor a
// cluster merge, and names what is wrong with any other; it makes the plan fused, with two counters
// a row block after the partials; the launches refuse a spread plan of the mma.sync kernel and one
// that is not fused.
TEST(MlaDecodeWgmmaPlan, SpreadMergeRefusedWhereItCannotRun) {
  MlaShape h128;
  const auto refusal = [](const MlaDecodePlan& p) { return refusal_of(set_mla_spread_merge, p); };
  const MlaDecodePlan plain = plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 4, 64);
  MlaDecodePlan four = plain;
  set_mla_spread_merge(four);
  EXPECT_TRUE(four.spread_merge);
  EXPECT_TRUE(four.fused_merge);
  EXPECT_FALSE(four.dependent_merge);
  EXPECT_EQ(four.workspace_bytes, plain.workspace_bytes + 2u * 4 * 32 * four.row_blocks);
  EXPECT_EQ(mla_split_counter_bytes(four), 2u * 4 * 32 * four.row_blocks);
  EXPECT_EQ(four.to_json()["spread_merge"], true);
  EXPECT_EQ(plain.to_json()["spread_merge"], false);
  EXPECT_EQ(refusal(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 1, 64)),
            "the spread merge takes 2 to 8 splits, not 1");
  EXPECT_EQ(refusal(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 16, 64)),
            "the spread merge takes 2 to 8 splits, not 16");
  EXPECT_EQ(refusal(plan_mla_decode_wgmma(h128, DType::bf16, 32, 4096, 132, 4, 64, true)),
            "a fused-merge plan has no spread merge");
  MlaDecodePlan cluster = plain;
  set_mla_cluster_merge(cluster);
  EXPECT_EQ(refusal(cluster), "a cluster-merge plan has no spread merge");
  EXPECT_EQ(refusal(four), "a fused-merge plan has no spread merge");
  MlaDecodePlan mma = plan_mla_decode(h128, DType::bf16, 32, 4096, 132, 2);
  ASSERT_EQ(mma.kernel, MlaKernel::mma);
  EXPECT_EQ(refusal(mma), "the spread merge is the warpgroup-MMA mla kernel's, not mla_decode_mma's");
  mma.spread_merge = true;
  EXPECT_EQ(refused_launch(h128, mma), cudaErrorInvalidValue);
  // A build without the kernel refuses every plan of it.
  MlaDecodePlan unfused = plain;
  unfused.spread_merge = true;
  EXPECT_EQ(refused_launch(h128, unfused), mla_decode_wgmma_compiled() ? cudaErrorInvalidValue : cudaErrorNotSupported);
  int blocks = -1;
  EXPECT_EQ(mla_decode_wgmma_resident_blocks(48, &blocks),
            mla_decode_wgmma_compiled() ? cudaErrorInvalidValue : cudaErrorNotSupported);
  EXPECT_EQ(blocks, 0);
}

TEST(MlaDecodeWgmmaPlan, UnsupportedPointsAreRefusedWithTheReason) {
  MlaShape h128, h8, rank;
  h8.heads_q = 8;
  rank.kv_lora_rank = 256;
  if (!mla_decode_wgmma_compiled()) {
    EXPECT_NE(mla_decode_wgmma_unsupported_reason(h128, DType::bf16, 9, 0).find("sm_90a"), std::string::npos);
    return;
  }
  EXPECT_EQ(mla_decode_wgmma_unsupported_reason(h128, DType::bf16, 9, 0), "");
  EXPECT_EQ(mla_decode_wgmma_unsupported_reason(h128, DType::fp16, 9, 0), "");
  EXPECT_NE(mla_decode_wgmma_unsupported_reason(h128, DType::bf16, 8, 0).find("compute capability 9.0"),
            std::string::npos);
  EXPECT_NE(mla_decode_wgmma_unsupported_reason(h128, DType::bf16, 10, 0).find("device 10.0"), std::string::npos);
  EXPECT_NE(mla_decode_wgmma_unsupported_reason(h128, DType::fp8_e4m3, 9, 0).find("not fp8_e4m3"), std::string::npos);
  EXPECT_EQ(mla_decode_wgmma_unsupported_reason(h8, DType::bf16, 9, 0), "");  // few rows: zero rows pad the block
  EXPECT_NE(mla_decode_wgmma_unsupported_reason(rank, DType::bf16, 9, 0).find("kv_lora_rank 512"), std::string::npos);
}

}  // namespace
}  // namespace decode_bench
