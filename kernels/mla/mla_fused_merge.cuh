#pragma once
// The split merge folded into the warpgroup-MMA MLA kernel (MlaDecodePlan::fused_merge, 2 to
// kMlaMergeFewMax splits): each split block counts itself done on its row block's counter once its
// partials are visible device-wide, and the block that counts last folds the row block's splits
// into the answer, as the split-K kernels' fused merge does (kernels/flash_decode.cuh,
// merge_if_last_split). It saves the merge kernel's launch and the wait for it; the partials it
// reads were just written and sit in L2.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kernels/mla/mla_args.hpp"     // MlaArgs
#include "kernels/mla/mla_decode.hpp"   // kMlaMergeFewMax
#include "kernels/store_converted.cuh"  // store_quad

namespace decode_bench::device {

// Shared memory the fold needs (the caller's, no longer in use): the last-block flag and each
// row's normalised split weights, kMlaMergeFewMax x 64 floats.
inline constexpr int kMlaFusedMergeRows = 64;
inline constexpr std::size_t kMlaFusedMergeScratchBytes = (4 + kMlaMergeFewMax * kMlaFusedMergeRows) * sizeof(float);

// Called by every thread of a split block (it holds barriers) after its own partial stores: rows
// row0 .. row0 + block_rows - 1 (block_rows <= 64) of sequence b, row block `row_block` of
// `row_blocks`, gridDim.y splits. scratch: kMlaFusedMergeScratchBytes of shared memory, 16-byte
// aligned. The last block writes o (Io) and lse of those rows: lse = L + log W over the splits'
// lse (L their max, W = sum exp(lse_s - L)), o = sum_s exp(lse_s - L) o_s / W; -inf and 0 where no
// split saw a token.
template <class Io, int Threads>
__device__ __forceinline__ void mla_merge_if_last_split(const MlaArgs& args, int b, int row_block, int row_blocks,
                                                        int row0, int block_rows, int tid, float* scratch) {
  constexpr int kVd = 512, kCols = kVd / 4;
  const int splits = static_cast<int>(gridDim.y);
  auto* const flag = reinterpret_cast<unsigned*>(scratch);
  float* const weight = scratch + 4;  // [split][row]
  __threadfence();  // this thread's partial stores are visible device-wide before the count below
  __syncthreads();
  if (tid == 0) {
    unsigned* const counter = args.split_counters + static_cast<std::int64_t>(b) * row_blocks + row_block;
    const bool last = atomicAdd(counter, 1u) == static_cast<unsigned>(splits) - 1;
    if (last) *counter = 0;  // every split of the row block has counted: ready for the next launch
    *flag = last ? 1u : 0u;
  }
  __syncthreads();
  if (*flag == 0u) return;
  __threadfence();
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
  // o: items of (row, 4 columns), each the weighted sum of its splits' partials, all splits' loads
  // of two items in flight together.
  const float* const part_o = args.partial_o();
  Io* const o = static_cast<Io*>(args.final_o);
#pragma unroll 2
  for (int i = tid; i < block_rows * kCols; i += Threads) {
    const int r = i / kCols, c = i % kCols;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
    for (int s = 0; s < kMlaMergeFewMax; ++s) {
      if (s < splits) {
        const float w = weight[s * kMlaFusedMergeRows + r];
        const float4 x = __ldcg(reinterpret_cast<const float4*>(part_o + (s * rows_total + first + r) * kVd) + c);
        acc.x = fmaf(w, x.x, acc.x);
        acc.y = fmaf(w, x.y, acc.y);
        acc.z = fmaf(w, x.z, acc.z);
        acc.w = fmaf(w, x.w, acc.w);
      }
    }
    store_quad(o + (first + r) * kVd + 4 * c, acc);
  }
}

}  // namespace decode_bench::device
