#pragma once
// Compile-time tiling of the split-K flash-decode kernel, per (storage type, head dim, GQA group).
// A KV row is D elements; threads read it as 16-byte vectors. A "row group" of kLanesPerRow lanes
// owns one token row at a time, so a warp covers kRowsPerWarp consecutive rows per load
// instruction (512 contiguous bytes when kVecsPerLane == 1).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

namespace decode_bench::device {

// UNROLL and WARPS of 0 and STAGES of -1 pick the tuned values below; explicit values exist for
// tuning probes.
template <class T, int D, int GROUP, int UNROLL = 0, int WARPS = 0, int STAGES = -1>
struct FlashDecodeTraits {
  using Elem = T;
  static constexpr int kHeadDim = D;
  static constexpr int kGroup = GROUP;
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));  // elements per 16-byte load
  static constexpr int kRowVecs = D / kVec;                        // 16-byte vectors per row
  static constexpr int kLanesPerRow = kRowVecs < 32 ? kRowVecs : 32;
  static constexpr int kVecsPerLane = kRowVecs / kLanesPerRow;
  static constexpr int kElemsPerLane = kVecsPerLane * kVec;
  static constexpr int kRowsPerWarp = 32 / kLanesPerRow;
  // GQA groups 1-2: one block of 8 warps per SM with a 2-stage pipeline (128 KiB of stages) was
  // the best of 9 tilings, or within 0.5% of it, in every column of the H100 probe table (commit
  // e3c7a78, aligned stages, against 4 warps x 3 stages; docs/history/kernel-notes.md, "Commit
  // bd98083: fused merge, and a shared-memory alignment defect"). Those tables measured group 1
  // only, so groups 4-8 keep the choice of commit 69ee5ad, 4 warps and 3 stages (2 blocks per SM).
  static constexpr int kWarps = WARPS > 0 ? WARPS : (GROUP <= 2 ? 8 : 4);
  static constexpr int kThreads = kWarps * 32;
  // Rows each row group handles per tile (16-byte vectors of K and V per thread per stage); fewer
  // at large GQA groups, whose per-row arithmetic (GROUP dot products) already keeps the warp
  // busy and whose registers are scarce.
  static constexpr int kUnrollBase = GROUP <= 2 ? 8 : 4;
  static constexpr int kUnrollAuto = kUnrollBase / kVecsPerLane > 0 ? kUnrollBase / kVecsPerLane : 1;
  static constexpr int kUnroll = UNROLL > 0 ? UNROLL : kUnrollAuto;
  static constexpr int kTileTokens = kWarps * kRowsPerWarp * kUnroll;
  // Pipeline depth: 0 loads each tile into registers and then uses it; S >= 2 stages tiles through
  // shared memory with cp.async, S - 1 tiles in flight while one is used.
  static constexpr int kStages = STAGES >= 0 ? STAGES : (GROUP <= 2 ? 2 : 3);
  // Per-thread 16-byte slots of one stage (K and V), and the block's dynamic shared memory: the
  // stages plus kSharedAlign bytes of slack, so the kernel can start them on a 128-byte boundary.
  static constexpr int kStageSlots = kUnroll * kVecsPerLane * 2;
  static constexpr int kSharedAlign = 128;
  static constexpr int kSharedBytes = kStages == 0 ? 0 : kStages * kStageSlots * kThreads * 16 + kSharedAlign;

  static_assert(D % kVec == 0, "a row must be a whole number of 16-byte vectors");
  static_assert(32 % kLanesPerRow == 0, "row groups must tile a warp");
  static_assert(kRowVecs % kLanesPerRow == 0, "every lane of a row group holds the same number of vectors");
  static_assert(GROUP >= 1 && GROUP <= 8, "GQA group sizes 1..8");
  static_assert(kStages == 0 || kStages >= 2, "a pipeline needs one stage in use and at least one in flight");
};

// The short tiling (plans take it for GQA group 1 when blocks are many and short, or batches ragged,
// and for group 2 on a wide bus: kernels/decode_balance.hpp): 4 warps, 4 rows per row group (fewer
// when a lane holds several vectors of a row). FP16, d = 128: 32-token tiles, 16 KiB a stage, so
// several blocks share an SM and their load latencies overlap, where the standard tiling at groups
// 1-2 (8 warps, 128 KiB) fits one. Group 1: 2 stages, compiled for every storage type and head dim.
// Group 2: 3 stages, compiled for FP16 and BF16 plain decodes at head dim 128 only (Gemma-3-27B's
// 32 / 16 heads, the one group-2 family measured: 3 stages were faster than 2 at 1K tokens and
// within a few percent at 512, one kernel for both; docs/kernels/splitk_cuda_core.md).
template <class T, int D>
constexpr int short_tiling_unroll() {
  constexpr int row_vecs = D / (16 / static_cast<int>(sizeof(T)));
  constexpr int vecs_per_lane = row_vecs < 32 ? 1 : row_vecs / 32;
  return 4 / vecs_per_lane > 0 ? 4 / vecs_per_lane : 1;
}
template <class T, int D, int GROUP>
using ShortFlashDecodeTraits = FlashDecodeTraits<T, D, GROUP, short_tiling_unroll<T, D>(), 4, GROUP == 1 ? 2 : 3>;
template <class T, int D, int GROUP, bool kVariant>
inline constexpr bool has_short_tiling =
    GROUP == 1 ||
    (GROUP == 2 && !kVariant && D == 128 && (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>));

// The deep tiling (plans take it for a head dim below the compiled one at GQA group 1 in a paged
// cache on a wide bus: kernels/decode_balance.hpp, choose_decode_tiling): the standard tiling's 8
// warps and 128 KiB of stages cut into four stages of half the rows, so three tiles are in flight
// where the standard one keeps one. A masked row's lanes past the head dim load nothing, so the
// standard tiling's one tile in flight holds that fraction fewer bytes; three shorter ones hold
// more. Compiled for FP16 and BF16 at head dim 128 (80-112 masked) and group 1 only, the one family
// measured (docs/kernels/splitk_cuda_core.md, "Head dims below the compiled one").
template <class T, int D, int GROUP>
using DeepFlashDecodeTraits = FlashDecodeTraits<T, D, GROUP, 4, 8, 4>;
template <class T, int D, int GROUP>
inline constexpr bool has_deep_tiling =
    GROUP == 1 && D == 128 && (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>);

}  // namespace decode_bench::device
