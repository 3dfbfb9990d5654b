#pragma once
// decode-bench's own MLA decode kernels, as callers see them: the plan (which kernel, how the
// sequence is split, the launch shape, the workspace) and the launch.
//
// A block holds query rows of one sequence (rows = heads_q x q_len, row r = position r / heads_q,
// head r % heads_q) and streams one token range of the sequence's latent cache through shared
// memory, each tile read once for all its rows. Three kernels:
//   mla_decode_mma         (kernels/mla/mla_decode.cuh) 64 rows per block, 32-token tiles; a
//                          sequence's row blocks are neighbours in the grid, so with more than 64
//                          rows the second block reads the tiles the first just brought into L2
//   mla_decode_mma_narrow  (kernels/mla/mla_decode_narrow.cuh) rows <= 32: 16 or 32 rows per
//                          block, 64-token tiles, the scores split over the warps by token
//   mla_decode_wgmma       (kernels/mla/mla_decode_wgmma.hpp) rows >= 64, FP16 / BF16, sm_90a: 64
//                          rows per block on warpgroup MMA, 64-token tiles; planned by
//                          plan_mla_decode_wgmma, launched through run_mla_decode like the others
// plan_mla_decode picks between the two mma.sync kernels; plan_mla_decode_for_device
// (mla_decode_wgmma.hpp) adds the wgmma kernel where the device runs it.
// Short batches split each sequence's tokens over several blocks and a merge kernel combines the
// splits by their log-sum-exp.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "kernels/dtype.hpp"
#include "kernels/mla/mla_kernel.hpp"  // MlaKernel
#include "kernels/mla/mla_shape.hpp"

namespace decode_bench {

// The kernel's compiled shape: DeepSeek-V3's and Kimi K2's latent row.
inline constexpr int kMlaKernelRank = 512;
inline constexpr int kMlaKernelRope = 64;

// q and o of the kernels over a latent cache of type T: the MMA's 16-bit type (T itself; FP16 for
// FP8 E4M3, which is widened to FP16 exactly). A server holds q and o in that type, and FP32 ones
// would move twice their bytes at every point (kernels/mla/mla_shape.hpp counts q and o so).
template <class T>
using MlaIo = std::conditional_t<std::is_same_v<T, __nv_fp8_e4m3>, __half, T>;
// The same as a DType: fp16 for fp16 and fp8_e4m3 caches, bf16 for bf16 (std::invalid_argument for others).
DType mla_io_dtype(DType latent_dtype);

// The narrow kernel takes points of at most this many rows per sequence.
inline constexpr int kMlaNarrowMaxRows = 32;

const char* mla_kernel_name(MlaKernel kernel);

struct MlaDecodePlan {
  MlaKernel kernel = MlaKernel::mma;
  int batch = 0;
  int rows = 0;            // heads_q x q_len per sequence
  int rows_per_block = 0;  // mma and wgmma: 64; mma_narrow: 16 or 32
  int row_blocks = 0;      // ceil(rows / rows_per_block)
  int tile_tokens = 0;     // tokens per shared-memory tile (mma: 32; mma_narrow and wgmma: 64)
  int stages = 0;          // cp.async stages of tiles
  int num_splits = 1;      // token ranges per sequence (1: no merge)
  int split_tiles = 0;     // tiles per split of the longest sequence (the split's length rule)
  int threads = 0;
  std::size_t shared_bytes = 0;
  std::size_t workspace_bytes = 0;  // split partials (o and lse per split and row), then fused_merge's
                                    // counters (one a row block); 0 without splits
  int warpgroups = 0;               // wgmma: 128-thread warpgroups per block; 0 for the mma.sync kernels
  // The split merge launched as a programmatic dependent of the attention kernel
  // (kernels/dependent_launch.cuh): splits > 1 on compute capability 9.0 and later, unless
  // DECODE_BENCH_MERGE_PDL=off. Set by plan_mla_decode_for_device; the other planners leave it false.
  bool dependent_merge = false;
  // Blocks a row of the many-splits merge (splits > 8) spreads over: 1 (the whole row) or
  // kMlaMergeQuarterBlocks (a quarter of the columns each): mla_merge_column_blocks.
  int merge_column_blocks = 1;
  // The split merge folded into the attention kernel (mla_decode_wgmma only, 2 to
  // kMlaMergeFewMax splits, where DECODE_BENCH_MLA_FUSED_MERGE=on asks for it): the block of a row block that
  // finishes its split last merges the row block's splits, counted on a counter after the partials
  // in the workspace (zeroed by init_mla_workspace before the first launch; the last block leaves
  // it zero), and no merge kernel runs. Set by plan_mla_decode_wgmma.
  bool fused_merge = false;
  // The splits of each row block launched as one thread-block cluster (mla_decode_wgmma only, 2 to
  // kClusterMergeMaxSplits splits, where every cluster is resident at once): each block leaves its
  // rows' o and lse in its shared memory and the cluster folds them over distributed shared memory
  // (kernels/row_cluster_merge.cuh), so no partials, workspace or merge kernel. Set by
  // plan_mla_decode_for_device (set_mla_cluster_merge) unless DECODE_BENCH_MLA_CLUSTER_MERGE=off.
  bool cluster_merge = false;
  // The fused merge (fused_merge is true) spread over every split block of a row block: the grid
  // launched cooperatively, so all of its blocks are resident at once, and each split block waits
  // for its row block's others and folds a share of the rows' columns (mla_merge_spread,
  // kernels/mla/mla_fused_merge.cuh), where the fused merge leaves the whole fold to the last one.
  // Set by plan_mla_decode_for_device (set_mla_spread_merge) where a plan of 2 to kMlaMergeFewMax
  // splits has neither a cluster nor an asked-for fused merge and every block fits at once, unless
  // DECODE_BENCH_MLA_SPREAD_MERGE=off.
  bool spread_merge = false;
  nlohmann::json to_json() const;
};

// Every MLA planner's last step, given the plan's batch and rows and a split count (at least 1):
// the count clamped to `tiles` (the longest sequence's) with none left empty by rounding,
// split_tiles, the workspace of the split partials, and merge_column_blocks (mla_merge_column_blocks
// below) on sm_count SMs.
void set_mla_splits(MlaDecodePlan& p, int splits, std::int64_t tiles, int sm_count);

// Empty when the kernel computes this point, else why not (compiled latent shape, storage type:
// fp16, bf16, fp8_e4m3).
std::string mla_decode_unsupported_reason(const MlaShape& shape, DType dtype);

// The kernel by rows (rows <= kMlaNarrowMaxRows: mma_narrow, else mma), then the splits; splits = 0
// picks, any other value is taken as given (clamped to the tiles of max_len). The picks:
//   mma         about two waves of blocks over the device (at least 4 tiles per split, at most 64)
//   mma_narrow  one block per SM fits; the split count s (at most 128) that minimizes, in tiles'
//               times, waves(s) x (tiles per split + the block's split partials in tiles) + 1 (the
//               merge), partials and merge only when s > 1; the fewest splits among equals
// dtype: the latent cache's storage type (FP8 stages bytes and widens them: other shared memory).
// kernel: the mma.sync kernel to plan instead of the pick by rows (std::invalid_argument with the
// reason for mma_narrow above kMlaNarrowMaxRows rows, and for wgmma, whose plan is
// plan_mla_decode_wgmma's).
MlaDecodePlan plan_mla_decode(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sm_count,
                              int splits = 0, std::optional<MlaKernel> kernel = std::nullopt);

// cache: ContiguousKV<T> or PagedKV<T> of one head, head_dim 576, K and V the same array (device
// memory), T = __half, __nv_bfloat16 or __nv_fp8_e4m3 (then k_scale = v_scale = the cache's one
// scale in device memory, or nullptr for 1). seq_lens: (batch) device int32. q: (batch, rows, 576)
// and o: (batch, rows, 512) in MlaIo<T> (o rounded to it from the FP32 accumulators); lse: (batch,
// rows) FP32 natural log (-inf where no token is visible, o then 0). workspace:
// plan.workspace_bytes of device memory (FP32 split partials).
template <class KV>
cudaError_t run_mla_decode(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens,
                           const MlaIo<typename KV::value_type>* q, MlaIo<typename KV::value_type>* o, float* lse,
                           void* workspace, const MlaDecodePlan& plan, cudaStream_t stream);

// fused_merge's counters in the workspace, after the partials: one a row block, two with
// spread_merge (arrivals and departures).
inline std::size_t mla_split_counter_bytes(const MlaDecodePlan& plan) {
  return plan.fused_merge
             ? static_cast<std::size_t>(plan.batch) * plan.row_blocks * (plan.spread_merge ? 2 : 1) * sizeof(unsigned)
             : 0;
}

// Readies a plan's workspace before its first launch: zeroes fused_merge's counters (a
// cudaMemsetAsync on `stream`); nothing for other plans. The launches leave it ready for the next.
cudaError_t init_mla_workspace(const MlaDecodePlan& plan, void* workspace, cudaStream_t stream);

// The split merge of run_mla_decode alone: combines plan.num_splits partials in `workspace` (the
// layout run_mla_decode writes) into o (Io: __half or __nv_bfloat16) and lse by their log-sum-exp.
// The warpgroup-MMA kernel's launch shares it.
template <class Io>
cudaError_t run_mla_merge_splits(const MlaDecodePlan& plan, void* workspace, Io* o, float* lse, cudaStream_t stream);
// The merge's block size: 128 threads of 4 columns each walking every split up to 8 splits; 512
// above, in groups folding splits side by side over a row or a quarter of it
// (kernels/mla/mla_decode.cuh).
inline constexpr int kMlaMergeThreadsFew = 128;
inline constexpr int kMlaMergeThreadsMany = 512;
inline constexpr int kMlaMergeFewMax = 8;  // the few-splits merge's (and the fused merge's) most splits
constexpr int mla_merge_threads(int splits) {
  return splits > kMlaMergeFewMax ? kMlaMergeThreadsMany : kMlaMergeThreadsFew;
}
// The many-splits merge over quarters of rows where that keeps it to at most two blocks an SM
// (rows_total x 4 <= 2 x SMs: a long sequence of few rows, which a block a row left on a few SMs);
// a whole row a block otherwise, where the rows alone fill the device and each quarter would
// repeat the row's lse for nothing.
inline constexpr int kMlaMergeQuarterBlocks = 4;
constexpr int mla_merge_column_blocks(int splits, std::int64_t rows_total, int sm_count) {
  return mla_merge_threads(splits) == kMlaMergeThreadsMany &&
                 rows_total * kMlaMergeQuarterBlocks <= 2 * static_cast<std::int64_t>(sm_count)
             ? kMlaMergeQuarterBlocks
             : 1;
}

}  // namespace decode_bench
