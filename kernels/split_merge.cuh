#pragma once
// Folds the n split-K partial states of one (sequence, query head) into its output: the (O, LSE)
// merge operator of kernels/attention_state.hpp applied to all n at once (equal to folding them
// pairwise, by associativity), by one block. Used by the last split block of each head (the fused
// merge) and by the stand-alone merge kernel that tuning probes compare it with.
//   partial_o: (n, dims) fp32, partial_lse: (n) natural-log lse, -inf for an empty split (o = 0)
//   o: (dims) Out (fp32, or fp16 / bf16 rounded once: the MLA kernels' o), aligned to 4 of its
//   values; lse: one float
// kStrided: o_stride and lse_stride (floats) are the distances from one split's state to the next
// (the MLA kernels keep split-major partials, (n, rows, dims) and (n, rows): rows x dims and rows);
// otherwise they are unused and the states are packed as above (the code the row and split-K
// kernels always had).
// dims is the runtime head dim (a multiple of 4, at most the compiled D): threads of columns past
// it take part in the barriers but load and write nothing.
// Deterministic: every thread folds a fixed subset of splits in a fixed order.
// kSink (the CUDA-core split-K kernel's variant twins, kernels/flash_decode.cuh): one more state of
// lse `sink` (natural log; -inf: none) and o = 0 joins the fold, an attention sink: it raises the max
// and the denominator only. Without it the code is the plain merge's (every use is `if constexpr`).
#include <cstdint>

#include "kernels/store_converted.cuh"  // store_quad

namespace decode_bench::device {

template <int D, int kThreads, bool kSink = false, bool kStrided = false, class Out = float>
__device__ __forceinline__ void merge_split_states(const float* partial_o, const float* partial_lse, int n, Out* o,
                                                   float* lse, int dims, float sink = -INFINITY,
                                                   std::int64_t o_stride = 0, std::int64_t lse_stride = 1) {
  // kCols threads cover a row as float4 columns; kLanes such row groups fold splits side by side,
  // each keeping several 16-byte loads in flight (the partials sit in L2; a serial walk of
  // hundreds of them, one round trip each, cost tens of microseconds).
  constexpr int kCols = D / 4;
  static_assert(D % 4 == 0 && kThreads % kCols == 0 && kThreads % 32 == 0, "threads tile the row");
  constexpr int kLanes = kThreads / kCols;
  // One group (kLanes 1) is not used. lane_sum is then one float and warp_max starts 4 bytes past a
  // 16-byte boundary; ptxas reads warp_max with an aligned LDS.128 that also covers lane_sum (its
  // value unused), so compute-sanitizer racecheck saw every thread read lane_sum's address while
  // thread 0 wrote it (the MLA merge at D 512 and 128 threads, a3d785a: 16 hazards, outputs
  // verified; its SASS read with nvdisasm). With two groups or more lane_sum fills the 16 bytes.
  // A __align__(16) warp_max would lift the limit; no caller needs it.
  static_assert(kLanes >= 2, "at least two groups of column threads");
  __shared__ float4 lane_acc[kLanes][kCols];
  __shared__ float lane_sum[kLanes];
  __shared__ float warp_max[kThreads / 32];

  // Plain loads: the fused caller reads other blocks' partials only after its fence and counter
  // (the release/acquire pair that makes them visible), and nothing cached them in L1 before.
  // __ldcg (ld.global.cg) compiles to a "strong" load the compiler will not hoist: the loop
  // below then kept only two loads in flight and was slow for 264 splits (ncu, H100;
  // docs/history/kernel-notes.md, "Commit bd98083: fused merge, and a shared-memory alignment defect").
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, partial_lse[kStrided ? i * lse_stride : i]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = m;
  __syncthreads();
#pragma unroll
  for (int w = 0; w < kThreads / 32; ++w) m = fmaxf(m, warp_max[w]);
  if constexpr (kSink) m = fmaxf(m, sink);

  const int col = threadIdx.x % kCols, lane = threadIdx.x / kCols;
  const int cols = dims / 4;  // float4 columns of a row; those past it are the masked tail
  const float4* rows = reinterpret_cast<const float4*>(partial_o);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  float sum = 0.f;
  if (m != -INFINITY && col < cols) {
    // Batches of kBatch rows per thread: all loads of a batch are issued before any is used.
    constexpr int kBatch = 8;
    for (int first = lane; first < n; first += kLanes * kBatch) {
      float batch_lse[kBatch];
      float4 batch_o[kBatch];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const int i = min(first + b * kLanes, n - 1);  // unpredicated loads; rows past n weigh 0 below
        if constexpr (kStrided) {
          batch_lse[b] = partial_lse[i * lse_stride];
          batch_o[b] = rows[i * (o_stride / 4) + col];
        } else {
          batch_lse[b] = partial_lse[i];
          batch_o[b] = rows[static_cast<std::int64_t>(i) * cols + col];
        }
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        // An empty split weighs exp(-inf) = 0; so does a clamped row past n.
        const float w = first + b * kLanes < n ? expf(batch_lse[b] - m) : 0.f;
        acc.x = fmaf(w, batch_o[b].x, acc.x);
        acc.y = fmaf(w, batch_o[b].y, acc.y);
        acc.z = fmaf(w, batch_o[b].z, acc.z);
        acc.w = fmaf(w, batch_o[b].w, acc.w);
        sum += w;
      }
    }
  }
  lane_acc[lane][col] = acc;
  if (col == 0) lane_sum[lane] = sum;
  __syncthreads();
  if (lane == 0 && col < cols) {
    float4 total = lane_acc[0][col];
    float s = lane_sum[0];
#pragma unroll
    for (int r = 1; r < kLanes; ++r) {
      total.x += lane_acc[r][col].x;
      total.y += lane_acc[r][col].y;
      total.z += lane_acc[r][col].z;
      total.w += lane_acc[r][col].w;
      s += lane_sum[r];
    }
    if constexpr (kSink) {
      if (m != -INFINITY) s += expf(sink - m);  // the sink's weight; 0 without one
    }
    const bool empty = m == -INFINITY || s == 0.f;
    const float inv = empty ? 0.f : 1.f / s;
    store_quad(o + 4 * col, make_float4(total.x * inv, total.y * inv, total.z * inv, total.w * inv));
    if (col == 0) *lse = empty ? -INFINITY : m + logf(s);
  }
  __syncthreads();  // the shared arrays are reused by the caller's next head
}

}  // namespace decode_bench::device
