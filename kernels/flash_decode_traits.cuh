#pragma once
// Compile-time tiling of the split-K flash-decode kernel, per (storage type, head dim, GQA group).
// A KV row is D elements; threads read it as 16-byte vectors. A "row group" of kLanesPerRow lanes
// owns one token row at a time, so a warp covers kRowsPerWarp consecutive rows per load
// instruction (512 contiguous bytes when kVecsPerLane == 1).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace decode_bench::device {

// UNROLL and WARPS of 0 pick the tuned values below; explicit values exist for tuning probes.
template <class T, int D, int GROUP, int UNROLL = 0, int WARPS = 0>
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
  // 8 warps x 8 rows in flight measured ~1% above 4 x 8 at groups 1-2 on the H100
  // (docs/kernel-notes.md); larger groups keep 4 warps for their registers.
  static constexpr int kWarps = WARPS > 0 ? WARPS : (GROUP <= 2 ? 8 : 4);
  static constexpr int kThreads = kWarps * 32;
  // Rows each row group keeps in flight: enough independent 16-byte loads per thread (2 x 8 for
  // K and V at small groups) to cover DRAM latency; fewer at large GQA groups, whose per-row
  // arithmetic (GROUP dot products) already keeps the warp busy and whose registers are scarce.
  static constexpr int kUnrollBase = GROUP <= 2 ? 8 : 4;
  static constexpr int kUnrollAuto = kUnrollBase / kVecsPerLane > 0 ? kUnrollBase / kVecsPerLane : 1;
  static constexpr int kUnroll = UNROLL > 0 ? UNROLL : kUnrollAuto;
  static constexpr int kTileTokens = kWarps * kRowsPerWarp * kUnroll;

  static_assert(D % kVec == 0, "a row must be a whole number of 16-byte vectors");
  static_assert(32 % kLanesPerRow == 0, "row groups must tile a warp");
  static_assert(kRowVecs % kLanesPerRow == 0, "every lane of a row group holds the same number of vectors");
  static_assert(GROUP >= 1 && GROUP <= 8, "GQA group sizes 1..8");
};

}  // namespace decode_bench::device
