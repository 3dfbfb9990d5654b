#pragma once
// Where row attention merges its split partials, and the cost model that decides (pure host
// functions, so host tests check every choice; the device code reads the shared constants).
//
// Fused: the last split block of an (item, row block) to finish folds all the block's rows over
// all splits (merge_if_last / merge_rows, kernels/row_attention_common.cuh), alone on one SM after
// the stream has ended. Separate: the attention kernel only writes partials and a second kernel
// folds them, one block per row (kernels/row_attention_merge.cuh), spread over the GPU.
//
// The merge reads partials other SMs wrote a moment before: they sit in L2, and what a merging
// block pays is dependent L2 round trips (each batch of loads waits for the one before), not
// bandwidth. The model counts those round trips on the critical path, from the code:
//   fused:    the counter's acquiring add, then merge_rows' batches:
//             pairs = rows x head_dim / 4 (row, float4 column) pairs;
//             pairs <= threads:     ceil(n / kMergeFoldLoads)                 (one pair a thread)
//             pairs <= 2 threads:   ceil(n / (kMergeFoldLoads / 2))           (two pairs a thread;
//                                   only 128-thread blocks at a compiled D >= 128 have this fold)
//             else, per pass of the LSE scratch (rows_per_pass = scratch / (n + 2)):
//                   ceil(ceil(pass rows x n / threads) / kMergeLseBatch)      (LSEs to shared memory)
//                 + ceil(pass pairs / (2 threads)) x ceil(n / 4)              (two pairs, 4 splits a batch)
//   separate: one block per row (merge_split_states, kernels/split_merge.cuh) of
//             separate_merge_threads(n, D) threads:
//             the LSE max, then ceil(ceil(n / lanes) / 8) batches, lanes = threads / (compiled D / 4);
//             plus the kernel boundary (the second kernel starts after the first drains), counted
//             as kRowMergeLaunchRoundTrips.
// The separate merge is taken where its round trips plus the boundary are fewer than the fused
// merge's. The grouped decodes of few rows per block and few splits stay fused (a few round trips
// either way); an MQA block of 71 rows over 128 splits (Falcon-7B, 1 x 32K) is about a hundred
// fused round trips on one SM against a handful spread over 71 blocks.
#include <cstdint>

namespace decode_bench {

// merge_rows (kernels/row_attention_common.cuh): loads in flight per thread in the few-row fold
// (split LSEs and float4 partials of kMergeFoldLoads splits of one pair, or of half as many of
// each of two pairs), and LSEs per thread staged to shared memory at once in the many-row fold.
inline constexpr int kMergeFoldLoads = 16;
inline constexpr int kMergeLseBatch = 8;
// The many-row fold's per-row statistics (max, weights, sum): a thread per row up to this many
// splits, a warp per row above (merge_rows). Not a round trip either way: the model ignores it.
inline constexpr int kMergeRowStatsThreadMaxSplits = 16;
// The separate merge kernel's blocks (kernels/row_attention_merge.cuh) and merge_split_states' batch:
// 128 threads, or 512 where a 128-thread block would fold more than 4 splits a thread (n x D / 4 >
// 4 x 128). Falcon-7B's 128 splits at d 64 were 16 a thread on 128 threads: one block per row, a
// few blocks per SM, each warp's serial chain of loads and exponentials was the merge's time
// (ncu; docs/kernels/rows_mma.md, "MQA at d 64").
inline constexpr int kSeparateMergeThreadsFew = 128;
inline constexpr int kSeparateMergeThreadsMany = 512;
inline constexpr int kSeparateMergeBatch = 8;
constexpr int separate_merge_threads(int n, int kernel_head_dim) {
  return static_cast<long long>(n) * (kernel_head_dim / 4) > 4LL * kSeparateMergeThreadsFew ? kSeparateMergeThreadsMany
                                                                                           : kSeparateMergeThreadsFew;
}

enum class RowMergeMode { automatic, fused, separate };  // DECODE_BENCH_ROW_MERGE

// The kernel boundary of the separate merge in round-trip units: the merge kernel's blocks start
// only once the attention kernel has drained, and their first loads find nothing in flight. A
// model parameter (the boundary guessed as a few round trips' time), not a measurement of this
// kernel; the measured choices it makes are in docs/kernels/rows_mma.md and rows_wgmma.md.
inline constexpr int kRowMergeLaunchRoundTrips = 3;
// The same boundary when the merge kernel is a programmatic dependent launch of the attention
// kernel (kernels/dependent_launch.cuh): its blocks are resident and waiting before the attention
// kernel ends, so the boundary is counted as nothing. Fitted, not derived: with it the model picks
// what the H100 measured faster at the 1 x 32K grouped decodes of groups 4, 7, 8 and 16
// (docs/kernels/rows_wgmma.md, "Empty splits, and the merge after a dependent launch").
inline constexpr int kRowMergeDependentLaunchRoundTrips = 0;

// Dependent L2 round trips of the fused merge of one row block: rows rows (at most the block's)
// over n splits at the run's head dim, by a block of `threads` of the kernel compiled for
// kernel_head_dim, with scratch_floats floats of shared memory for the LSEs. n <= 1: 0 (no merge).
std::int64_t fused_merge_round_trips(int rows, int n, int head_dim, int kernel_head_dim, int threads,
                                     std::int64_t scratch_floats);
// Whether merge_rows compiles the two-pairs-a-thread fold for this block (kernels/row_attention_common.cuh).
constexpr bool merge_folds_two_pairs(int threads, int kernel_head_dim) { return threads == 128 && kernel_head_dim >= 128; }
// Round trips of the separate merge kernel's block for one row (the boundary not included).
// kernel_head_dim: the compiled D (64, 128, 256) of the merge kernel, which sets its lanes.
std::int64_t separate_merge_round_trips(int n, int kernel_head_dim);

struct RowMergeChoice {
  bool separate = false;
  std::int64_t fused_round_trips = 0;
  std::int64_t separate_round_trips = 0;  // with the boundary's
};
// The merge of a uniform grid's split items: separate when its round trips (boundary included:
// kRowMergeDependentLaunchRoundTrips where the merge kernel would be a dependent launch,
// kRowMergeLaunchRoundTrips where stream-ordered) are fewer than the fused merge's (a tie stays
// fused); mode fused / separate pins it. n <= 1: neither (separate false).
RowMergeChoice choose_row_merge(RowMergeMode mode, int rows, int n, int head_dim, int kernel_head_dim, int threads,
                                std::int64_t scratch_floats, bool dependent_launch);

}  // namespace decode_bench
