#pragma once
// The seed paper's 3-kernel parallel GPU baseline (section III-A-b), kept faithful on purpose:
// its point is the serial softmax stage between two parallel stages.
//   1. scores:  one thread per (token, query head): s_t = q . k_t * scale
//   2. softmax: ONE 128-thread block per (sequence, query head) reduces all T scores (max, sum)
//               and rewrites them as weights w_t = exp(s_t - max) / sum; also writes lse
//   3. output:  one thread per output dimension: o_d = sum_t w_t v_{t,d}
// Written well within that shape: 16-byte K loads, tree reductions in shared memory, and in stage
// 3 coalesced V reads (consecutive threads read consecutive elements of one row) with the rows'
// offsets and weights staged per tile in shared memory, so a paged layout costs one block-table
// read per token per block rather than per element.
//   scores (workspace): (num_seqs, H_q, max_len) fp32
#include <cstdint>

#include "kernels/kv_accessor.hpp"
#include "kernels/vector_load.cuh"

namespace decode_bench::device {

struct BaselineArgs {
  const float* q;            // (num_seqs, H_q, D)
  const std::int32_t* lens;  // (num_seqs)
  float* scores;             // (num_seqs, H_q, max_len)
  float* o;                  // (num_seqs, H_q, D)
  float* lse;                // (num_seqs, H_q)
  int heads_q;
  int group;                 // H_q / H_kv
  int head_dim;
  std::int64_t max_len;
  float scale;               // 1 / sqrt(D)
};

constexpr int kBaselineScoreThreads = 256;
constexpr int kBaselineSoftmaxThreads = 128;  // the seed's block size for the serial stage
constexpr int kBaselineOutputTile = 128;      // tokens whose offsets/weights stage 3 stages at once

// Stage 1. grid = (ceil(max_len / 256), H_q, num_seqs); dynamic smem = D floats (q).
template <class KV>
__global__ void __launch_bounds__(kBaselineScoreThreads) baseline_scores_kernel(const KV kv, const BaselineArgs args) {
  using T = typename KV::value_type;
  extern __shared__ float q_s[];
  const int h = blockIdx.y, seq = blockIdx.z;
  const std::int64_t head_index = static_cast<std::int64_t>(seq) * args.heads_q + h;
  for (int i = threadIdx.x; i < args.head_dim; i += blockDim.x) q_s[i] = args.q[head_index * args.head_dim + i];
  __syncthreads();
  const std::int64_t t = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= args.lens[seq]) return;
  const T* k = kv.k + kv.row_offset(seq, h / args.group, t);
  constexpr int kVec = Vec16<T>::kElems;
  float dot = 0.f;
  for (int i = 0; i < args.head_dim; i += kVec) {
    float kf[kVec];
    Vec16<T>::to_float(load_stream_16B(k + i), kf);
#pragma unroll
    for (int e = 0; e < kVec; ++e) dot = fmaf(q_s[i + e], kf[e], dot);
  }
  args.scores[head_index * args.max_len + t] = dot * args.scale;
}

// Stage 2. grid = (H_q, num_seqs), block = 128. Defined once, in kernels/baseline_softmax.cu.
__global__ void __launch_bounds__(kBaselineSoftmaxThreads) baseline_softmax_kernel(const BaselineArgs args);

// Stage 3. grid = (H_q, num_seqs), block = D threads (thread d owns o_d).
template <class KV>
__global__ void baseline_output_kernel(const KV kv, const BaselineArgs args) {
  using T = typename KV::value_type;
  __shared__ std::int64_t row_s[kBaselineOutputTile];
  __shared__ float w_s[kBaselineOutputTile];
  const int h = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
  const std::int64_t head_index = static_cast<std::int64_t>(seq) * args.heads_q + h;
  const std::int64_t len = args.lens[seq];
  const float* w = args.scores + head_index * args.max_len;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};  // independent sums: four V loads in flight per thread
  for (std::int64_t tile = 0; tile < len; tile += kBaselineOutputTile) {
    const int n = static_cast<int>(len - tile < kBaselineOutputTile ? len - tile : kBaselineOutputTile);
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
      row_s[i] = kv.row_offset(seq, h / args.group, tile + i);
      w_s[i] = w[tile + i];
    }
    __syncthreads();
    int i = 0;
    for (; i + 4 <= n; i += 4)
#pragma unroll
      for (int u = 0; u < 4; ++u) acc[u] = fmaf(w_s[i + u], static_cast<float>(kv.v[row_s[i + u] + d]), acc[u]);
    for (; i < n; ++i) acc[0] = fmaf(w_s[i], static_cast<float>(kv.v[row_s[i] + d]), acc[0]);
  }
  args.o[head_index * args.head_dim + d] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

}  // namespace decode_bench::device
