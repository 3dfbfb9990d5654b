#pragma once
// Short-sequence decode (DecodePath::short_seq): plain decode of batches whose sequences all hold
// at most kShortMaxLen tokens.
//   grid  = (num_seqs, H_kv, ceil(group / heads)), block = kShortWarps warps,
//   layout.bytes dynamic shared memory (kernels/short_decode_layout.hpp)
//   block (s, g, part) takes query heads part * heads ... of KV head g's group in sequence s
// Such work is latency-bound: a block reads a few KB, so what costs is the chain of dependent
// global round trips and the number of waves, not bandwidth. The block therefore
//   1. starts the cp.async copies of its q rows (fp32, as stored) before anything else;
//   2. reads the length (and, paged, the block-table row: both loads in flight together), then
//      every page entry its rows need, then issues the cp.async copies of all its K rows (one
//      group) and all its V rows (a second group): one wait for K, none between rows;
//   3. scores with a token a lane (no shuffles; the q chunk a broadcast read), into shared memory;
//   4. waits for V; each warp takes a query head (heads < warps: the head's tokens split over
//      kShortWarps / heads warps, summed in shared memory), its softmax from the scores, then P V
//      with the lanes along the row's 16-byte chunks and the rows of a warp step folded by
//      shuffles at the end; writes o and lse.
// No split, no partials in global memory, no merge. Scores are in the log2 domain (q's scale,
// softmax_scale * log2(e), the K scale of FP8 and Vec16's unit scale are applied to each score);
// lse is natural-log, the V scale and unit scale multiply o. An empty sequence writes o = 0 and
// lse = -inf, as the split-K and row paths do.
// Head dims are runtime (the loops run over the row's chunks), so one kernel per accessor type
// serves every head dim: no (head dim, group) instantiations.
#include <cstdint>

#include "kernels/block_timeline.cuh"
#include "kernels/cp_async.cuh"
#include "kernels/decode_launch.hpp"
#include "kernels/fast_divmod.hpp"
#include "kernels/row_locator.cuh"
#include "kernels/short_decode_layout.hpp"
#include "kernels/vector_load.cuh"

namespace decode_bench::device {

inline constexpr int kShortThreads = kShortWarps * 32;
inline constexpr float kShortLog2e = 1.4426950408889634f;
inline constexpr float kShortLn2 = 0.6931471805599453f;

struct ShortDecodeArgs {
  const float* q;            // (num_seqs, H_q, h)
  const std::int32_t* lens;  // (num_seqs)
  float* o;                  // (num_seqs, H_q, h)
  float* lse;                // (num_seqs, H_q)
  int heads_q;
  int head_dim;              // h
  int group;                 // H_q / H_kv
  int heads;                 // query heads a block takes (the last part of a group may take fewer)
  int capacity;              // tokens staged at most: rows past it are never read (the plan's max_len)
  float q_scale;             // softmax_scale * log2(e)
  FastDivmod page_div;       // page size (unused for contiguous)
  ShortDecodeLayout layout;
  BlockEvent* timeline;
};

__device__ __forceinline__ float short_warp_max(float x) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}
__device__ __forceinline__ float short_warp_sum(float x) {
#pragma unroll
  for (int off = 16; off > 0; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// Copies this thread's share of the rows [0, len) of one of K or V (base `src`) into `dst`: chunk
// tid % 2^shift of rows tid >> shift, + kShortThreads >> shift, ... (the rows' tickets resolved).
template <class KV, int kRowsPerThread>
__device__ __forceinline__ void short_copy_rows(std::uint32_t dst, const typename KV::value_type* src,
                                                const RowLocator<KV>& loc,
                                                const typename RowLocator<KV>::Ticket (&ticket)[kRowsPerThread],
                                                int len, const ShortDecodeLayout& l) {
  constexpr int kVec = Vec16<typename KV::value_type>::kElems;
  const int c = threadIdx.x & ((1 << l.chunk_shift) - 1), r0 = threadIdx.x >> l.chunk_shift;
  const int rows_per_pass = kShortThreads >> l.chunk_shift;
  if (c >= l.chunks) return;
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int t = r0 + i * rows_per_pass;
    if (t < len) cp_async_16B(dst + t * l.pitch + c * 16, src + loc.offset(ticket[i]) + c * kVec, true);
  }
}

// At most 64 registers (8 blocks an SM by registers): ptxas needs no spill for it, and the paged
// kernels would take 66-70 otherwise (7 blocks an SM).
template <class KV>
__global__ void __launch_bounds__(kShortThreads, 8) short_decode_kernel(const KV kv, const ShortDecodeArgs args) {
  using T = typename KV::value_type;
  using V16 = Vec16<T>;
  constexpr int kVec = V16::kElems;
  // Rows one thread copies at most: kShortMaxLen rows of up to 32 chunks over the block's threads.
  constexpr int kRowsPerThread = static_cast<int>(kShortMaxLen) * 32 / kShortThreads;
  mark_block(args.timeline, BlockMark::start);
  const ShortDecodeLayout& l = args.layout;
  const int seq = blockIdx.x, kv_head = blockIdx.y;
  const int head0 = blockIdx.z * args.heads;                 // first query head of the group taken here
  const int heads = min(args.heads, args.group - head0);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  extern __shared__ uint4 short_shared[];
  const std::uint32_t base = shared_address(short_shared);
  char* const shared_bytes = reinterpret_cast<char*>(short_shared);

  // 1. q rows: the block's heads are consecutive rows of q.
  const std::int64_t q_row0 = static_cast<std::int64_t>(seq) * args.heads_q + kv_head * args.group + head0;
  const float* q_src = args.q + q_row0 * args.head_dim;
  const int q_vectors = heads * args.head_dim / 4;
  for (int i = tid; i < q_vectors; i += kShortThreads) cp_async_16B(base + l.q + 16 * i, q_src + 4 * i, true);

  // The dequantization scales (FP8; nullptr otherwise) load beside the copies, not after a wait.
  const float score_scale = args.q_scale * kv_scale(kv.k_scale, kv_head) * V16::kUnitScale;
  const float out_scale = kv_scale(kv.v_scale, kv_head) * V16::kUnitScale;

  // 2. Row offsets (paged: every page entry in flight before the first is used), then K and V.
  const int len = max(0, min(args.lens[seq], args.capacity));  // a negative length reads as empty
  const RowLocator<KV> loc(kv, seq, kv_head, args.page_div);
  typename RowLocator<KV>::Ticket ticket[kRowsPerThread]{};
  {
    const int r0 = tid >> l.chunk_shift, rows_per_pass = kShortThreads >> l.chunk_shift;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int t = r0 + i * rows_per_pass;
      if (t < len) ticket[i] = loc.fetch(t);
    }
  }
  short_copy_rows(base + l.k, kv.k, loc, ticket, len, l);
  cp_async_commit();  // group: q and K
  short_copy_rows(base + l.v, kv.v, loc, ticket, len, l);
  cp_async_commit();  // group: V
  cp_async_wait<1>();
  __syncthreads();
  mark_block(args.timeline, BlockMark::first_tile);

  // 3. Scores: unit u = (32-token slice j, head h), slice-major so the warps share the slices.
  float* const scores = reinterpret_cast<float*>(shared_bytes + l.scores);
  const int slices = (len + 31) / 32;
  for (int u = warp; u < slices * heads; u += kShortWarps) {
    const int j = u / heads, h = u - j * heads;
    const int t = j * 32 + lane;
    if (t >= len) continue;
    const std::uint32_t k_row = base + l.k + t * l.pitch;
    const std::uint32_t q_row = base + l.q + h * args.head_dim * 4;
    float dot[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 2
    for (int c = 0; c < l.chunks; ++c) {
      float kf[kVec];
      V16::to_float(load_shared_16B(k_row + c * 16), kf);
#pragma unroll
      for (int i4 = 0; i4 < kVec / 4; ++i4) {
        const uint4 qv = load_shared_16B(q_row + (c * kVec + i4 * 4) * 4);
        float d = dot[i4 % 4];
        d = fmaf(__uint_as_float(qv.x), kf[i4 * 4 + 0], d);
        d = fmaf(__uint_as_float(qv.y), kf[i4 * 4 + 1], d);
        d = fmaf(__uint_as_float(qv.z), kf[i4 * 4 + 2], d);
        d = fmaf(__uint_as_float(qv.w), kf[i4 * 4 + 3], d);
        dot[i4 % 4] = d;
      }
    }
    scores[h * args.capacity + t] = ((dot[0] + dot[1]) + (dot[2] + dot[3])) * score_scale;
  }
  cp_async_wait<0>();
  __syncthreads();  // scores and V visible to every warp

  // 4. Softmax and P V. A warp takes head h = warp / per_head, tokens part, part + per_head, ...
  // of each step of `step` rows (lanes along the chunks of `step` consecutive rows).
  const int per_head = heads >= kShortWarps ? 1 : kShortWarps / heads;
  const int step = 32 >> l.chunk_shift;
  const int c = lane & ((1 << l.chunk_shift) - 1), r = lane >> l.chunk_shift;
  float* const partial = reinterpret_cast<float*>(shared_bytes + l.partial);
  float* const stats = reinterpret_cast<float*>(shared_bytes + l.stats);
  for (int h = warp / per_head; h < heads; h += kShortWarps / per_head) {
    const int part = warp - (warp / per_head) * per_head;
    const float* s = scores + h * args.capacity;
    const float s0 = lane < len ? s[lane] : -INFINITY;
    const float s1 = lane + 32 < len ? s[lane + 32] : -INFINITY;
    const float m = short_warp_max(fmaxf(s0, s1));
    const float sum = m == -INFINITY ? 0.f : short_warp_sum(exp2f(s0 - m) + exp2f(s1 - m));
    float acc[kVec];
#pragma unroll
    for (int i = 0; i < kVec; ++i) acc[i] = 0.f;
    if (c < l.chunks) {
      for (int t = part * step + r; t < len; t += per_head * step) {
        const float p = exp2f(s[t] - m);
        float vf[kVec];
        V16::to_float(load_shared_16B(base + l.v + t * l.pitch + c * 16), vf);
#pragma unroll
        for (int i = 0; i < kVec; ++i) acc[i] = fmaf(p, vf[i], acc[i]);
      }
    }
    for (int off = 1 << l.chunk_shift; off < 32; off *= 2)
#pragma unroll
      for (int i = 0; i < kVec; ++i) acc[i] += __shfl_xor_sync(0xffffffffu, acc[i], off);
    const bool writer = r == 0 && c < l.chunks;
    if (per_head == 1) {
      const std::int64_t row = q_row0 + h;
      const float scale = sum > 0.f ? out_scale / sum : 0.f;
      if (writer) {
        float4* const out = reinterpret_cast<float4*>(args.o + row * args.head_dim + c * kVec);
#pragma unroll
        for (int i = 0; i < kVec / 4; ++i)
          out[i] = make_float4(acc[4 * i] * scale, acc[4 * i + 1] * scale, acc[4 * i + 2] * scale, acc[4 * i + 3] * scale);
      }
      if (lane == 0) args.lse[row] = sum > 0.f ? (m + log2f(sum)) * kShortLn2 : -INFINITY;
    } else {
      if (writer)
#pragma unroll
        for (int i = 0; i < kVec; ++i) partial[warp * args.head_dim + c * kVec + i] = acc[i];
      if (lane == 0 && part == 0) {
        stats[h] = sum;
        if (sum > 0.f) args.lse[q_row0 + h] = (m + log2f(sum)) * kShortLn2;
        else args.lse[q_row0 + h] = -INFINITY;
      }
    }
  }
  if (per_head > 1) {
    // The warps of each head (warps h * per_head ... + per_head - 1) sum their token shares.
    __syncthreads();
    for (int idx = tid; idx < heads * args.head_dim; idx += kShortThreads) {
      const int h = idx / args.head_dim, d = idx - h * args.head_dim;
      float total = 0.f;
      for (int p = 0; p < per_head; ++p) total += partial[(h * per_head + p) * args.head_dim + d];
      const float sum = stats[h];
      args.o[(q_row0 + h) * args.head_dim + d] = sum > 0.f ? total * (out_scale / sum) : 0.f;
    }
  }
  mark_block(args.timeline, BlockMark::end);
}

}  // namespace decode_bench::device
