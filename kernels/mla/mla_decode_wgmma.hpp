#pragma once
// The MLA decode kernel on Hopper's warpgroup MMA (kernels/mla/mla_decode_wgmma.cuh) as callers see
// it: whether it runs, its plan and its launch. The kernel needs sm_90a, so it lives in a translation
// unit of its own (kernels/instantiate/mla_decode_wgmma.cu, built for 90a when the build targets
// Hopper; kernels/mla/mla_decode_wgmma_none.cpp otherwise). Its plan is an MlaDecodePlan with
// `kernel` MlaKernel::wgmma; run_mla_decode (kernels/mla/mla_decode.hpp) dispatches on that field,
// and the split partials are merged by the mma.sync kernels' merge (the same workspace layout).
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "kernels/dtype.hpp"
#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_shape.hpp"

namespace decode_bench {

// The kernel's compiled shape (kernels/mla/mla_decode_wgmma.cuh, MlaWgmmaTraits<tile>).
inline constexpr int kMlaWgmmaRows = 64;         // query rows per block
inline constexpr int kMlaWgmmaWarpgroups = 2;    // 256 threads: each owns 256 of the 512 output columns
// Two tilings of the same shared memory: 64-token tiles in 2 stages, or 32-token tiles in 4 (three
// tiles in flight ahead of the one computed). A plan names its tile (tile_tokens); 0 asks for
// mla_wgmma_auto_tile (DECODE_BENCH_MLA_TILE=auto): 64 at every row count. The 32-token tiling led
// up to 128 rows only while warpgroup 1 resolved each row's page where it copied it, which left
// the 64-token blocks waiting on their single tile in flight; with the block table read a tile
// ahead the 64-token tiling is faster at every measured point, and the 32-token one re-reads Q
// from shared memory twice as often per token (docs/kernels/mla.md, "Two tilings, measured").
constexpr int mla_wgmma_auto_tile(int /*rows*/) { return 64; }
inline constexpr std::array<int, 2> kMlaWgmmaTiles{64, 32};  // the compiled tilings
constexpr bool mla_wgmma_tile_compiled(int tile) { return tile == kMlaWgmmaTiles[0] || tile == kMlaWgmmaTiles[1]; }
constexpr int mla_wgmma_stages(int tile) { return tile == 32 ? 4 : 2; }
// A block's shared memory in either tiling: 1 KiB of alignment slack, Q (64 x 576) and the stages
// (stages x tile x 576) in the 16-bit type, P's fragments (tile / 4 words a thread of warpgroup 0),
// the rows' rescale factors and their final v_scale / l (2 floats a thread of warpgroup 0 each).
// The launch checks it against MlaWgmmaTraits<tile>::shared_bytes.
constexpr std::size_t mla_wgmma_shared_bytes(int tile) {
  return 1024 + static_cast<std::size_t>(kMlaWgmmaRows + mla_wgmma_stages(tile) * tile) * 576 * 2 +
         static_cast<std::size_t>(tile / 4) * 128 * 4 + 2 * (2 * 128 * 4);
}
// Splits are counted in tokens, not tiles, so both tilings split a point alike: the split count is
// chosen over units of kMlaWgmmaSplitUnit tokens with at least kMlaWgmmaMinSplitTokens a split.
inline constexpr int kMlaWgmmaSplitUnit = 64;
inline constexpr int kMlaWgmmaMinSplitTokens = 256;
// The most splits the planner picks: 128 where the merge of that many runs over quarters of rows
// (mla_merge_column_blocks: batch x rows x 4 at most two blocks an SM), else 64. Over whole rows
// a block, 128 splits were no faster than 64 at 16 rows and slower at 32 and 64; over quarters they
// were faster at 16 and 64 rows (docs/kernels/mla.md, "The split merge").
inline constexpr int kMlaWgmmaMaxSplits = 64;
inline constexpr int kMlaWgmmaMaxSplitsQuarterMerge = 128;
constexpr int mla_wgmma_split_cap(int batch, int rows, int sm_count) {
  return mla_merge_column_blocks(kMlaWgmmaMaxSplitsQuarterMerge, static_cast<std::int64_t>(batch) * rows, sm_count) ==
                 kMlaMergeQuarterBlocks
             ? kMlaWgmmaMaxSplitsQuarterMerge
             : kMlaWgmmaMaxSplits;
}
// Rows per sequence at or under which the dispatch weighs this kernel against the narrow one: up to
// 16 rows the narrow kernel's 16-row block does a quarter of this kernel's MMA work (a 64-row block,
// its padding rows costing MMA issue slots but no bytes) for the same bytes, so this kernel wins
// once the batch streams enough tokens (docs/kernels/mla.md, "Dispatch"), the narrow one below.
// Above 16 rows this kernel always: a memory-bound point is paced by its bytes, and this kernel read
// them closer to the DRAM ceiling than the narrow kernel's 32-row blocks.
inline constexpr int kMlaWgmmaFewRows = 16;
inline constexpr std::int64_t kMlaWgmmaFewRowsMinTokens = 32768;
// Whether the dispatch prefers this kernel for a point it can run: more than kMlaWgmmaFewRows rows,
// or fewer over a batch of at least kMlaWgmmaFewRowsMinTokens tokens (batch x max_len).
bool mla_prefers_wgmma(const MlaShape& shape, int batch, std::int64_t max_len);
static_assert(kMlaWgmmaFewRows <= kMlaNarrowMaxRows, "the narrow kernel takes the few-row points this kernel leaves");

// Whether this build carries the kernel (sm_90a code).
bool mla_decode_wgmma_compiled();

// Empty when the kernel computes this point on a device of compute capability major.minor, else why
// not: sm_90a code in the build, compute capability 9.0, the compiled latent shape, FP16 or BF16
// (FP8 stays on the mma.sync kernel). Any rows = heads_q x q_len: rows past the last of a 64-row
// block are zero.
std::string mla_decode_wgmma_unsupported_reason(const MlaShape& shape, DType dtype, int major, int minor);

// Whether the kernel computes this point on `device` (the reason above is empty there).
bool mla_decode_wgmma_available(const MlaShape& shape, DType dtype, int device);

// The kernel's plan: blocks of 64 rows, tiles of tile_tokens (64 or 32; 0: mla_wgmma_auto_tile;
// any other value throws std::invalid_argument naming it). splits = 0 picks, among the counts of at
// most mla_wgmma_split_cap with at least kMlaWgmmaMinSplitTokens tokens per split, the fewest whose
// waves of blocks x tokens per split is within a tenth of the least (each split adds its partials
// and a merge), counting tokens in kMlaWgmmaSplitUnit units for either tile; any other value is
// taken as given (clamped to the tiles of max_len). Either way each split is a whole number of
// tiles.
// fused_merge: the merge folded into the kernel where the plan has 2 to kMlaMergeFewMax splits
// (MlaDecodePlan::fused_merge; DECODE_BENCH_MLA_FUSED_MERGE=on through
// TuningPolicy::mla_fused_merge). Off by default: the merge kernel measured faster at all but one
// shape (docs/decisions/mla-fused-merge.md).
MlaDecodePlan plan_mla_decode_wgmma(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len,
                                    int sm_count, int splits = 0, int tile_tokens = 0, bool fused_merge = false);

// The plan of the kernel that computes the point on `device`: this kernel's where it is preferred
// (mla_prefers_wgmma) and available (FP16 / BF16, sm_90a on compute capability 9.0); else
// plan_mla_decode's (rows <= kMlaNarrowMaxRows the narrow kernel, else the 64-row one).
// wgmma_tile: the warpgroup-MMA kernel's tile where it is taken (plan_mla_decode_wgmma's
// tile_tokens; DECODE_BENCH_MLA_TILE through TuningPolicy::mla_tile).
// dependent_merge: whether a split plan may launch its merge as a programmatic dependent
// (MlaDecodePlan::dependent_merge; DECODE_BENCH_MERGE_PDL through TuningPolicy::merge_pdl).
// pinned: the kernel to plan instead of the dispatch's (DECODE_BENCH_MLA_KERNEL through
// TuningPolicy::mla_kernel); std::invalid_argument with the reason where it cannot compute the point.
// fused_merge: as plan_mla_decode_wgmma's (a fused plan has no merge launch to make dependent).
// cluster_merge: whether a warpgroup-MMA plan of 2 to kClusterMergeMaxSplits splits (not fused)
// merges them in a cluster (set_mla_cluster_merge) where every cluster is resident at once on
// `device` (mla_decode_wgmma_resident_clusters at least batch x row_blocks); false
// (DECODE_BENCH_MLA_CLUSTER_MERGE=off through TuningPolicy::mla_cluster_merge) keeps the merge kernel.
// spread_merge: whether such a plan that is neither fused nor a cluster plan folds its splits in the
// kernel, spread over each row block's split blocks (set_mla_spread_merge), where the device
// launches cooperatively and holds every block of the grid at once (mla_decode_wgmma_resident_blocks
// at least batch x row_blocks x splits); false (DECODE_BENCH_MLA_SPREAD_MERGE=off through
// TuningPolicy::mla_spread_merge) keeps the merge kernel there.
MlaDecodePlan plan_mla_decode_for_device(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len,
                                         int device, int splits = 0, int wgmma_tile = 0, bool dependent_merge = true,
                                         std::optional<MlaKernel> pinned = std::nullopt, bool fused_merge = false,
                                         bool cluster_merge = true, bool spread_merge = true);

// A warpgroup-MMA plan of 2 to kClusterMergeMaxSplits splits, not fused, made a cluster plan
// (MlaDecodePlan::cluster_merge): no partials, so no workspace, and no merge launch to make
// dependent. std::invalid_argument naming what is wrong for any other plan.
void set_mla_cluster_merge(MlaDecodePlan& plan);

// A warpgroup-MMA plan of 2 to kMlaMergeFewMax splits with neither a fused nor a cluster merge made a
// spread plan (MlaDecodePlan::spread_merge, with fused_merge: the partials and two counters a row
// block in the workspace, no merge launch; the kernel launched cooperatively).
// std::invalid_argument naming what is wrong for any other plan.
void set_mla_spread_merge(MlaDecodePlan& plan);

// The most blocks of the kernel at `tile` tokens resident at once on the current device (its
// occupancy, one block an SM, times the SMs): the largest grid a cooperative launch of it takes.
// cudaErrorNotSupported in a build without the kernel.
cudaError_t mla_decode_wgmma_resident_blocks(int tile, int* blocks);

// The most clusters of `splits` blocks (cluster dims (1, splits, 1)) of the kernel at `tile`
// tokens resident at once on the current device, at one block an SM (its shared memory): a
// cluster's blocks share a GPC, so this can be fewer than the SMs over `splits`.
// cudaErrorNotSupported in a build without the kernel.
cudaError_t mla_decode_wgmma_resident_clusters(int tile, int splits, int* clusters);

// As run_mla_decode (same arguments and buffers), for a plan of plan_mla_decode_wgmma; KV =
// ContiguousKV<T> or PagedKV<T>, T = __half or __nv_bfloat16. cudaErrorInvalidValue for a plan
// this kernel does not run, cudaErrorNotSupported in a build without it.
template <class KV>
cudaError_t run_mla_decode_wgmma(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens,
                                 const typename KV::value_type* q, typename KV::value_type* o, float* lse,
                                 void* workspace, const MlaDecodePlan& plan, cudaStream_t stream);

// run_mla_decode_wgmma's instances, the same in its launch's unit and in the stand-in of a build
// without sm_90a (inside namespace decode_bench, after the template's definition).
#define DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCE(KV)                                                                  \
  template cudaError_t run_mla_decode_wgmma<KV>(const MlaShape&, const KV&, const std::int32_t*,                 \
                                                const KV::value_type*, KV::value_type*, float*, void*,           \
                                                const MlaDecodePlan&, cudaStream_t);
#define DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCES                  \
  DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCE(ContiguousKV<__half>)   \
  DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCE(PagedKV<__half>)        \
  DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCE(ContiguousKV<__nv_bfloat16>) \
  DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCE(PagedKV<__nv_bfloat16>)

}  // namespace decode_bench
