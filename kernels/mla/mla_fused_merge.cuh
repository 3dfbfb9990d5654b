#pragma once
// The split merge folded into the warpgroup-MMA MLA kernel (MlaDecodePlan::fused_merge, 2 to
// kMlaMergeFewMax splits): each split block counts itself done on its row block's counter once its
// partials are visible device-wide, and the block that counts last folds the row block's splits
// into the answer, as the split-K kernels' fused merge does (kernels/flash_decode.cuh,
// merge_if_last_split). It saves the merge kernel's launch and the wait for it; the partials it
// reads were just written and sit in L2. But one block a row block reads them all, where the merge
// kernel spreads them over the device: opt-in (DECODE_BENCH_MLA_FUSED_MERGE=on), measured and
// weighed in docs/decisions/mla-fused-merge.md. Where every block of the grid is resident, the
// spread merge below folds the same partials over all of a row block's split blocks instead.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/last_split.cuh"        // last_split_to_arrive
#include "kernels/mla/mla_args.hpp"     // MlaArgs
#include "kernels/mla/mla_decode.hpp"   // kMlaMergeFewMax
#include "kernels/store_converted.cuh"  // store_quad

namespace decode_bench::device {

// Shared memory the fold needs (the caller's, no longer in use): the last-block flag and each
// row's normalised split weights, kMlaMergeFewMax x 64 floats.
inline constexpr int kMlaFusedMergeRows = 64;
inline constexpr std::size_t kMlaFusedMergeScratchBytes = (4 + kMlaMergeFewMax * kMlaFusedMergeRows) * sizeof(float);

// The o phase of the fold at exactly Splits splits, over the 4-column chunks [c_begin, c_end) of
// every row: items of (row, 4 columns), a batch of kItems a thread at a time, every load of a
// batch (kItems x Splits float4 from L2) issued before the first store, so that one batch is one
// trip to L2. A loop over items with their stores in it would make each item a trip of its own:
// the compiler cannot move a load above a store to o, which may alias the partials.
template <class Io, int Threads, int Splits>
__device__ __forceinline__ void fold_split_partials_at(const MlaArgs& args, int tid, std::int64_t first,
                                                       int block_rows, std::int64_t rows_total, const float* weight,
                                                       int c_begin, int c_end) {
  constexpr int kVd = 512;
  constexpr int kItems = Splits <= 4 ? 16 / Splits : 2;  // 16 float4 loads in flight up to 4 splits
  const float* const part_o = args.partial_o();
  Io* const o = static_cast<Io*>(args.final_o);
  const int cols = c_end - c_begin;
  const int items = block_rows * cols;
  for (int i0 = tid; i0 < items; i0 += kItems * Threads) {
    float4 x[kItems][Splits];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = min(i0 + k * Threads, items - 1);  // past the end: a repeat of the last item, not stored
      const int r = i / cols, c = c_begin + i % cols;
#pragma unroll
      for (int s = 0; s < Splits; ++s)
        x[k][s] = __ldcg(reinterpret_cast<const float4*>(part_o + (s * rows_total + first + r) * kVd) + c);
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = i0 + k * Threads;
      if (i >= items) break;
      const int r = i / cols, c = c_begin + i % cols;
      float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int s = 0; s < Splits; ++s) {
        const float w = weight[s * kMlaFusedMergeRows + r];
        acc.x = fmaf(w, x[k][s].x, acc.x);
        acc.y = fmaf(w, x[k][s].y, acc.y);
        acc.z = fmaf(w, x[k][s].z, acc.z);
        acc.w = fmaf(w, x[k][s].w, acc.w);
      }
      store_quad(o + (first + r) * kVd + 4 * c, acc);
    }
  }
}

// The o phase at gridDim.y splits (2 to kMlaMergeFewMax), each count compiled.
template <class Io, int Threads>
__device__ __forceinline__ void fold_split_partials(const MlaArgs& args, int tid, std::int64_t first,
                                                    int block_rows, std::int64_t rows_total, const float* weight,
                                                    int c_begin = 0, int c_end = 512 / 4) {
  static_assert(kMlaMergeFewMax == 8, "a case a split count");
#define DB_FOLD_AT(N) \
  fold_split_partials_at<Io, Threads, N>(args, tid, first, block_rows, rows_total, weight, c_begin, c_end)
  switch (gridDim.y) {
    case 2: return DB_FOLD_AT(2);
    case 3: return DB_FOLD_AT(3);
    case 4: return DB_FOLD_AT(4);
    case 5: return DB_FOLD_AT(5);
    case 6: return DB_FOLD_AT(6);
    case 7: return DB_FOLD_AT(7);
    default: return DB_FOLD_AT(8);
  }
#undef DB_FOLD_AT
}

// Each row's normalised split weights (weight[s x kMlaFusedMergeRows + r]) and, where write_lse, its
// lse = L + log W over the splits' lse (L their max, W = sum exp(lse_s - L); -inf where no split
// saw a token): a thread a row, its splits' lse in one batch of loads (L2: the other blocks'
// stores; .cg, not L1). Rows first .. first + block_rows - 1 of the partials (split s's row r at
// s x rows_total + first + r).
__device__ __forceinline__ void split_weights_of_rows(const MlaArgs& args, int splits, std::int64_t first,
                                                      int block_rows, std::int64_t rows_total, int tid,
                                                      float* weight, bool write_lse) {
  if (tid >= block_rows) return;
  float lse_s[kMlaMergeFewMax];
  float m = -INFINITY;
#pragma unroll
  for (int s = 0; s < kMlaMergeFewMax; ++s) {
    lse_s[s] = s < splits ? __ldcg(args.lse + s * rows_total + first + tid) : -INFINITY;
    m = fmaxf(m, lse_s[s]);
  }
  float w_sum = 0.f;
#pragma unroll
  for (int s = 0; s < kMlaMergeFewMax; ++s) {
    lse_s[s] = m == -INFINITY ? 0.f : expf(lse_s[s] - m);  // now the weight; exp(-inf) = 0 for an empty split
    w_sum += lse_s[s];
  }
  const float inv = w_sum > 0.f ? 1.f / w_sum : 0.f;
#pragma unroll
  for (int s = 0; s < kMlaMergeFewMax; ++s)
    if (s < splits) weight[s * kMlaFusedMergeRows + tid] = lse_s[s] * inv;
  if (write_lse) args.final_lse[first + tid] = w_sum > 0.f ? m + logf(w_sum) : -INFINITY;
}

// Called by every thread of a split block (it holds barriers) after its own partial stores: rows
// row0 .. row0 + block_rows - 1 (block_rows <= 64) of sequence b, row block `row_block` of
// `row_blocks`, gridDim.y splits. scratch: kMlaFusedMergeScratchBytes of shared memory, 16-byte
// aligned. The last block writes o (Io) and lse of those rows: lse = L + log W over the splits'
// lse (L their max, W = sum exp(lse_s - L)), o = sum_s exp(lse_s - L) o_s / W; -inf and 0 where no
// split saw a token.
template <class Io, int Threads>
__device__ __forceinline__ void mla_merge_if_last_split(const MlaArgs& args, int b, int row_block, int row_blocks,
                                                        int row0, int block_rows, int tid, float* scratch) {
  const int splits = static_cast<int>(gridDim.y);
  auto* const flag = reinterpret_cast<unsigned*>(scratch);
  float* const weight = scratch + 4;  // [split][row]
  // Captured by value: by reference, NVVM rearranged the epilogue's address arithmetic.
  const auto counter_of = [=] { return args.split_counters + static_cast<std::int64_t>(b) * row_blocks + row_block; };
  if (!last_split_to_arrive(counter_of, splits, flag, tid)) return;
  const std::int64_t rows_total = static_cast<std::int64_t>(args.batch) * args.rows;
  const std::int64_t first = static_cast<std::int64_t>(b) * args.rows + row0;  // split s's partial row r: s x rows_total + first + r
  split_weights_of_rows(args, splits, first, block_rows, rows_total, tid, weight, true);
  __syncthreads();
  // o: items of (row, 4 columns), each the weighted sum of its splits' partials.
  fold_split_partials<Io, Threads>(args, tid, first, block_rows, rows_total, weight);
}

// A load of a counter that the other blocks of the grid add to, ordered before this thread's later
// loads (PTX ld.acquire at gpu scope).
__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// The spread merge (MlaDecodePlan::spread_merge: the grid launched cooperatively, so every block is
// resident at once and may wait for the others): called as mla_merge_if_last_split is, but every
// split block of the row block waits until all of them have counted in, then folds its share of the
// 128 four-column chunks of every row (split s: chunks 128 s / splits to 128 (s + 1) / splits), so
// the row block's partials are read once, spread over its split blocks, where the fused merge reads
// them all on one block. Split 0 writes lse. Two counters a row block (arrivals, departures): the
// block that departs last zeroes both for the next launch, when no block of this one reads them.
template <class Io, int Threads>
__device__ __forceinline__ void mla_merge_spread(const MlaArgs& args, int b, int row_block, int row_blocks, int row0,
                                                 int block_rows, int tid, float* scratch) {
  const int splits = static_cast<int>(gridDim.y), split = static_cast<int>(blockIdx.y);
  float* const weight = scratch + 4;  // [split][row]
  __threadfence();  // this thread's partial stores are visible device-wide before the count below
  __syncthreads();
  unsigned* const arrivals = args.split_counters + 2 * (static_cast<std::int64_t>(b) * row_blocks + row_block);
  if (tid == 0) {
    atomicAdd(arrivals, 1u);
    while (load_acquire_gpu(arrivals) < static_cast<unsigned>(splits)) __nanosleep(32);
  }
  __syncthreads();
  __threadfence();
  const std::int64_t rows_total = static_cast<std::int64_t>(args.batch) * args.rows;
  const std::int64_t first = static_cast<std::int64_t>(b) * args.rows + row0;
  split_weights_of_rows(args, splits, first, block_rows, rows_total, tid, weight, split == 0);
  __syncthreads();
  constexpr int kChunks = 512 / 4;
  fold_split_partials<Io, Threads>(args, tid, first, block_rows, rows_total, weight, kChunks * split / splits,
                                   kChunks * (split + 1) / splits);
  if (tid == 0 && atomicAdd(arrivals + 1, 1u) == static_cast<unsigned>(splits) - 1) {
    arrivals[0] = 0;  // every block of the row block is past its wait: ready for the next launch
    arrivals[1] = 0;
  }
}

}  // namespace decode_bench::device
