// Where row attention merges its split partials (kernels/row_merge_model.hpp) and the row-block
// size of the wide tiling (kernels/row_block_rows.hpp), host-side: the round trips each merge
// costs in closed form, the choice at the model preset's shapes, and the rows of a block by the
// item's rows and range.
#include <gtest/gtest.h>

#include "kernels/row_block_rows.hpp"
#include "kernels/row_merge_model.hpp"

namespace decode_bench {
namespace {

// The blocks the planner merges in (kernels/row_attention_mma.cuh): narrow 128 threads, wide 256.
constexpr int kNarrow = 128, kWide = 256;
constexpr std::int64_t kScratch = 70 * 1024 / 4;  // floats of a wide D 64 block's shared memory

TEST(RowMergeModel, NoSplitsNoMerge) {
  EXPECT_EQ(fused_merge_round_trips(71, 1, 64, 64, kWide, kScratch), 0);
  EXPECT_EQ(fused_merge_round_trips(0, 8, 64, 64, kWide, kScratch), 0);
  EXPECT_EQ(separate_merge_round_trips(1, 64), 0);
  for (RowMergeMode mode : {RowMergeMode::automatic, RowMergeMode::fused, RowMergeMode::separate}) {
    const RowMergeChoice c = choose_row_merge(mode, 71, 1, 64, 64, kWide, kScratch, false);
    EXPECT_FALSE(c.separate);
    EXPECT_EQ(c.fused_round_trips, 0);
    EXPECT_EQ(c.separate_round_trips, 0);
  }
}

// One (row, float4 column) pair a thread: the counter, then ceil(n / 16) batches.
TEST(RowMergeModel, FusedOnePairAThread) {
  // GQA group 4 at d 128 (32 / 8 heads): 4 rows x 32 columns = 128 pairs on 128 threads.
  EXPECT_EQ(fused_merge_round_trips(4, 2, 128, 128, kNarrow, kScratch), 2);
  EXPECT_EQ(fused_merge_round_trips(4, 16, 128, 128, kNarrow, kScratch), 2);
  EXPECT_EQ(fused_merge_round_trips(4, 17, 128, 128, kNarrow, kScratch), 3);
  EXPECT_EQ(fused_merge_round_trips(4, 32, 128, 128, kNarrow, kScratch), 3);
}

// Two pairs a thread (groups 5-8 at d 128 on 128 threads): ceil(n / 8) batches. Only 128-thread
// blocks at a compiled head dim of at least 128 have that fold; the others take the many-row one.
TEST(RowMergeModel, FusedTwoPairsAThread) {
  EXPECT_TRUE(merge_folds_two_pairs(128, 128));
  EXPECT_TRUE(merge_folds_two_pairs(128, 256));
  EXPECT_FALSE(merge_folds_two_pairs(128, 64));
  EXPECT_FALSE(merge_folds_two_pairs(256, 128));
  // Groups 9-16 at d 64 on the narrow tiling (16 rows x 16 columns = 256 pairs): the many-row fold,
  // 2 LSEs a thread (1 batch) and one pass of 2 pairs a thread, 4 splits a batch.
  EXPECT_EQ(fused_merge_round_trips(16, 16, 64, 64, kNarrow, kScratch), 1 + 1 + 1 * 4);
  EXPECT_EQ(fused_merge_round_trips(7, 33, 128, 128, kNarrow, kScratch), 1 + 5);   // Qwen2.5-7B 1 x 32K
  EXPECT_EQ(fused_merge_round_trips(7, 64, 128, 128, kNarrow, kScratch), 1 + 8);   // its paged plan
  EXPECT_EQ(fused_merge_round_trips(8, 16, 128, 128, kNarrow, kScratch), 1 + 2);   // Llama-3-70B
  EXPECT_EQ(fused_merge_round_trips(5, 2, 128, 128, kNarrow, kScratch), 1 + 1);
}

// Many rows: per pass of the LSE scratch, the staged LSEs (8 a thread a round trip), then two pairs a
// thread, 4 splits a round trip.
TEST(RowMergeModel, FusedManyRows) {
  // Falcon-7B (71 rows, d 64, wide): 1136 pairs; 128 splits: 36 LSEs a thread (5 batches), 3 x 32.
  EXPECT_EQ(fused_merge_round_trips(71, 128, 64, 64, kWide, kScratch), 1 + 5 + 3 * 32);
  // 8 splits: 3 LSEs a thread (1 batch), 3 x 2.
  EXPECT_EQ(fused_merge_round_trips(71, 8, 64, 64, kWide, kScratch), 1 + 1 + 3 * 2);
  // A scratch of 1000 floats holds 7 rows of 128 splits: 11 passes (10 of 7 rows, 1 of 1), each
  // 1 LSE batch and 1 x 32.
  EXPECT_EQ(fused_merge_round_trips(71, 128, 64, 64, kWide, 1000), 1 + 11 * (1 + 32));
  // No row fits the scratch: merge_split_states row after row, 1 + ceil(n / 8) each.
  EXPECT_EQ(fused_merge_round_trips(71, 128, 64, 64, kWide, 10), 1 + 71 * (1 + 16));
}

// One block per row: the LSE max, then ceil(ceil(n / lanes) / 8) batches, lanes = threads / (D / 4),
// threads 512 where 128 would fold more than 4 splits a thread (n x D / 4 > 512), else 128.
TEST(RowMergeModel, SeparateOneBlockPerRow) {
  EXPECT_EQ(separate_merge_threads(8, 64), 128);     // 128 (split, float4 column) pairs
  EXPECT_EQ(separate_merge_threads(32, 64), 128);    // 512: 4 a thread
  EXPECT_EQ(separate_merge_threads(33, 64), 512);
  EXPECT_EQ(separate_merge_threads(128, 64), 512);
  EXPECT_EQ(separate_merge_threads(16, 128), 128);
  EXPECT_EQ(separate_merge_threads(17, 128), 512);
  EXPECT_EQ(separate_merge_threads(8, 256), 128);
  EXPECT_EQ(separate_merge_threads(9, 256), 512);
  EXPECT_EQ(separate_merge_round_trips(128, 64), 1 + 1);  // 32 lanes: 4 splits each, 1 batch
  EXPECT_EQ(separate_merge_round_trips(8, 64), 1 + 1);    // 8 lanes of 128 threads: 1 split each
  EXPECT_EQ(separate_merge_round_trips(512, 64), 1 + 2);  // 32 lanes: 16 splits each
  EXPECT_EQ(separate_merge_round_trips(33, 128), 1 + 1);  // 16 lanes: 3 splits each
  EXPECT_EQ(separate_merge_round_trips(16, 128), 1 + 1);  // 4 lanes of 128 threads: 4 each
  EXPECT_EQ(separate_merge_round_trips(300, 128), 1 + 3);  // 16 lanes: 19 splits each
  EXPECT_EQ(separate_merge_round_trips(16, 256), 1 + 1);  // 8 lanes: 2 splits each
  EXPECT_EQ(separate_merge_round_trips(8, 256), 1 + 1);   // 2 lanes of 128 threads: 4 each
}

// The choice at the model preset's split plans with a stream-ordered merge kernel
// (DECODE_BENCH_MERGE_PDL=off, or no dependent launch on the GPU): separate only where its round
// trips plus the kernel boundary are fewer; a tie stays fused.
TEST(RowMergeModel, ChoiceAtTheModelPresetShapes) {
  const auto pick = [](int rows, int n, int d, int threads) {
    return choose_row_merge(RowMergeMode::automatic, rows, n, d, d, threads, kScratch, false);
  };
  const RowMergeChoice falcon_32k = pick(71, 128, 64, kWide);
  EXPECT_TRUE(falcon_32k.separate);
  EXPECT_EQ(falcon_32k.fused_round_trips, 102);
  EXPECT_EQ(falcon_32k.separate_round_trips, 2 + kRowMergeLaunchRoundTrips);
  EXPECT_TRUE(pick(71, 8, 64, kWide).separate);       // Falcon 16 x 4K: 8 against 5 (128 threads)
  EXPECT_FALSE(pick(4, 16, 128, kNarrow).separate);   // Llama-3-8B 1 x 32K: 2 against 5
  EXPECT_FALSE(pick(4, 32, 128, kNarrow).separate);   // its paged plan: 3 against 5 (512 threads)
  EXPECT_FALSE(pick(8, 16, 128, kNarrow).separate);   // Llama-3-70B: 3 against 5
  EXPECT_FALSE(pick(8, 32, 128, kNarrow).separate);   // its paged plan: 5 against 5 (a tie)
  EXPECT_TRUE(pick(7, 33, 128, kNarrow).separate);    // Qwen2.5-7B 1 x 32K: 6 against 5 (512 threads)
  EXPECT_TRUE(pick(7, 64, 128, kNarrow).separate);    // its paged plan: 9 against 5
  EXPECT_FALSE(pick(7, 2, 128, kNarrow).separate);    // 16 x 4K: 2 against 5
  // The knob pins either.
  EXPECT_FALSE(choose_row_merge(RowMergeMode::fused, 71, 128, 64, 64, kWide, kScratch, false).separate);
  EXPECT_TRUE(choose_row_merge(RowMergeMode::separate, 4, 2, 128, 128, kNarrow, kScratch, false).separate);
}

// With the merge kernel a dependent launch, the boundary counts kRowMergeDependentLaunchRoundTrips:
// group 8 and Qwen2.5-7B's group 7 at 32 splits take the second kernel, group 4 stays fused (a tie).
TEST(RowMergeModel, ChoiceWithADependentLaunch) {
  const auto pick = [](int rows, int n, int d, int threads) {
    return choose_row_merge(RowMergeMode::automatic, rows, n, d, d, threads, kScratch, true);
  };
  const RowMergeChoice qwen = pick(7, 32, 128, kNarrow);  // Qwen2.5-7B 1 x 32K, 32 splits
  EXPECT_TRUE(qwen.separate);
  EXPECT_EQ(qwen.fused_round_trips, 1 + 4);
  EXPECT_EQ(qwen.separate_round_trips, 2 + kRowMergeDependentLaunchRoundTrips);
  EXPECT_FALSE(choose_row_merge(RowMergeMode::automatic, 7, 32, 128, 128, kNarrow, kScratch, false).separate);
  EXPECT_TRUE(pick(8, 16, 128, kNarrow).separate);    // Llama-3-70B, Qwen3-32B 1 x 32K: 3 against 2
  EXPECT_FALSE(pick(4, 16, 128, kNarrow).separate);   // Llama-3-8B, Mistral-7B 1 x 32K: 2 against 2
  EXPECT_FALSE(pick(4, 2, 128, kNarrow).separate);    // two splits of 4 rows: 2 against 2
  EXPECT_FALSE(pick(7, 2, 128, kNarrow).separate);    // Qwen2.5-7B 16 x 4K: 2 against 2
  EXPECT_TRUE(pick(16, 16, 128, kNarrow).separate);   // Llama-3.1-405B 1 x 32K, as without
  EXPECT_TRUE(pick(71, 128, 64, kWide).separate);     // Falcon-7B, as without
  EXPECT_FALSE(choose_row_merge(RowMergeMode::fused, 8, 16, 128, 128, kNarrow, kScratch, true).separate);
}

// Falcon-7B's 71 rows: one 128-row block an item at any range (64-row blocks would be two, each
// streaming the item's K/V); other items keep 64-row blocks over short ranges.
TEST(WideRowBlockRows, DecodeItemsOf65To128RowsTakeOneBlock) {
  EXPECT_EQ(wide_row_block_rows(71, 8, true), 128);     // 128 x 512
  EXPECT_EQ(wide_row_block_rows(71, 16, true), 128);    // 64 x 1K
  EXPECT_EQ(wide_row_block_rows(71, 512, true), 128);   // 1 x 32K
  EXPECT_EQ(wide_row_block_rows(128, 1, true), 128);
  EXPECT_EQ(wide_row_block_rows(129, 8, true), 64);     // two or more blocks either way: short range
  EXPECT_EQ(wide_row_block_rows(129, 32, true), 256);
  EXPECT_EQ(wide_row_block_rows(64, 8, true), 64);
  EXPECT_EQ(wide_row_block_rows(33, 512, true), 64);
  // Shared-prefix items (explicit items): 64 rows under 32 tiles, whatever their rows.
  EXPECT_EQ(wide_row_block_rows(71, 31, false), 64);
  EXPECT_EQ(wide_row_block_rows(71, 32, false), 128);
  EXPECT_EQ(wide_row_block_rows(256, 16, false), 64);
  EXPECT_EQ(wide_row_block_rows(256, 32, false), 256);
}

}  // namespace
}  // namespace decode_bench
