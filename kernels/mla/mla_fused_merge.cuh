#pragma once
// The split merge folded into the warpgroup-MMA MLA kernel (MlaDecodePlan::fused_merge, 2 to
// kMlaMergeFewMax splits): each split block counts itself done on its row block's counter once its
// partials are visible device-wide, and the block that counts last folds the row block's splits
// into the answer, as the split-K kernels' fused merge does (kernels/flash_decode.cuh,
// merge_if_last_split). It saves the merge kernel's launch and the wait for it; the partials it
// reads were just written and sit in L2. But one block a row block reads them all, where the merge
// kernel spreads them over the device: opt-in (DECODE_BENCH_MLA_FUSED_MERGE=on), measured and
// weighed in docs/decisions/mla-fused-merge.md.
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

// The o phase of the fold at exactly Splits splits: items of (row, 4 columns), a batch of
// kItems a thread at a time, every load of a batch (kItems x Splits float4 from L2) issued before
// the first store, so that one batch is one trip to L2. A loop over items with their stores in
// it would make each item a trip of its own: the compiler cannot move a load above a store to o,
// which may alias the partials.
template <class Io, int Threads, int Splits>
__device__ __forceinline__ void fold_split_partials_at(const MlaArgs& args, int tid, std::int64_t first,
                                                       int block_rows, std::int64_t rows_total, const float* weight) {
  constexpr int kVd = 512, kCols = kVd / 4;
  constexpr int kItems = Splits <= 4 ? 16 / Splits : 2;  // 16 float4 loads in flight up to 4 splits
  const float* const part_o = args.partial_o();
  Io* const o = static_cast<Io*>(args.final_o);
  const int items = block_rows * kCols;
  for (int i0 = tid; i0 < items; i0 += kItems * Threads) {
    float4 x[kItems][Splits];
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = min(i0 + k * Threads, items - 1);  // past the end: a repeat of the last item, not stored
      const int r = i / kCols, c = i % kCols;
#pragma unroll
      for (int s = 0; s < Splits; ++s)
        x[k][s] = __ldcg(reinterpret_cast<const float4*>(part_o + (s * rows_total + first + r) * kVd) + c);
    }
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = i0 + k * Threads;
      if (i >= items) break;
      const int r = i / kCols, c = i % kCols;
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
                                                    int block_rows, std::int64_t rows_total, const float* weight) {
  static_assert(kMlaMergeFewMax == 8, "a case a split count");
  switch (gridDim.y) {
    case 2: return fold_split_partials_at<Io, Threads, 2>(args, tid, first, block_rows, rows_total, weight);
    case 3: return fold_split_partials_at<Io, Threads, 3>(args, tid, first, block_rows, rows_total, weight);
    case 4: return fold_split_partials_at<Io, Threads, 4>(args, tid, first, block_rows, rows_total, weight);
    case 5: return fold_split_partials_at<Io, Threads, 5>(args, tid, first, block_rows, rows_total, weight);
    case 6: return fold_split_partials_at<Io, Threads, 6>(args, tid, first, block_rows, rows_total, weight);
    case 7: return fold_split_partials_at<Io, Threads, 7>(args, tid, first, block_rows, rows_total, weight);
    default: return fold_split_partials_at<Io, Threads, 8>(args, tid, first, block_rows, rows_total, weight);
  }
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
  // Each row's weights and lse, a thread a row: its splits' lse in one batch of loads (L2: the
  // other blocks' stores; .cg, not L1).
  if (tid < block_rows) {
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
    args.final_lse[first + tid] = w_sum > 0.f ? m + logf(w_sum) : -INFINITY;
  }
  __syncthreads();
  // o: items of (row, 4 columns), each the weighted sum of its splits' partials.
  fold_split_partials<Io, Threads>(args, tid, first, block_rows, rows_total, weight);
}

}  // namespace decode_bench::device
