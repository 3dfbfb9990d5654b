#pragma once
// Short-sequence decode (DecodePath::short_seq): plain decode of batches whose sequences all hold
// at most kShortMaxLen tokens.
//   grid  = (num_seqs, H_kv, ceil(group / heads)), block = kShortWarps warps,
//   layout.bytes dynamic shared memory (kernels/short_decode_layout.hpp)
//   block (s, g, part) takes query heads part * heads ... of KV head g's group in sequence s
// Such work is latency-bound: a block reads a few KB, so what costs is the chain of dependent
// global round trips, the number of waves, and the shared-memory work a block issues between its
// loads and its stores. The block therefore
//   1. starts the cp.async copies of its q rows (fp32, as stored) before anything else;
//   2. reads the length (and, paged, the block-table row: both loads in flight together), then
//      every page entry its rows need, then issues the cp.async copies of all its K rows (one
//      group) and all its V rows (a second group): one wait for K, none between rows;
//   3. scores every head of the block in one pass over each K row: a lane takes a token and a
//      quarter (len <= 32) or half (len <= 64) of the row's 16-byte chunks, so every warp has a
//      slice of tokens even with one head; each K chunk is loaded and widened once and FMA'd with
//      each head's q chunk (broadcast reads) into per-head accumulators held in registers
//      (kMaxHeads, a compile-time bound the launch picks); the lanes of a token are folded by
//      shuffles;
//   4. softmax a head a warp: max and sum of the head's scores, the probabilities exp2(s - max)
//      written back in place (0 past the length) and the head's output scale;
//   5. P V a column a thread: each V element is read and widened once and FMA'd with every head's
//      probability (broadcast float4 reads, 4 tokens each), so o is written directly, coalesced,
//      without partial sums or shuffles.
// No split, no partials in global memory, no merge. Scores are in the log2 domain (q's scale,
// softmax_scale * log2(e), the K scale of FP8 and Vec16's unit scale are applied to each score);
// lse is natural-log, the V scale and 1 / sum multiply o. An empty sequence writes o = 0 and
// lse = -inf, as the split-K and row paths do.
// Head dims are runtime (the loops run over the row's chunks and columns), so one kernel per
// accessor type and head bound serves every head dim: no (head dim, group) instantiations.
#include <cstdint>
#include <type_traits>

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

// One stored element widened to fp32 (the exact value: no unit scale).
template <class T>
__device__ __forceinline__ float short_element_to_float(T x) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(x);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(x);
  else return static_cast<float>(x);
}

// At most 64 registers (8 blocks an SM by registers). What presses on them is the copies' page
// tickets (up to 16 rows a thread, two registers a row when paged): ptxas then spills 4-8 bytes in
// some paged instances (stored and reloaded once a thread), kept rather than losing the eighth
// block an SM to 65 or more registers. kMaxHeads bounds the query heads of a block
// (the launch picks the smallest of 1, 2, 4, 8, 16 that holds the plan's heads), so the per-head
// accumulators stay in registers. The chunk and token loops are not unrolled: the heads give the
// FMAs their independent chains, and unrolling only added registers.
template <class KV, int kMaxHeads>
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

  // 2. Row offsets (paged: every page entry in flight before the first is used), then K and V.
  const int len = max(0, min(args.lens[seq], args.capacity));  // a negative length reads as empty
  // The V rows from the length up to the next multiple of 4 are zero (rows the copies never write):
  // P V reads 4 rows at a time, and a stale NaN there times a zero probability would still be NaN.
  const int len4 = (len + 3) & ~3;
  for (int i = tid; i < (len4 - len) * l.chunks; i += kShortThreads) {
    const int t = len + i / l.chunks, c = i - (t - len) * l.chunks;
    *reinterpret_cast<uint4*>(shared_bytes + l.v + t * l.pitch + c * 16) = make_uint4(0u, 0u, 0u, 0u);
  }
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
  // The dequantization scales (FP8; nullptr otherwise) load while the copies are in flight, not
  // after a wait (and not before the copies, where they would hold registers beside the tickets).
  // P V widens V exactly (short_element_to_float), so only the scores carry Vec16's unit scale.
  const float score_scale = args.q_scale * kv_scale(kv.k_scale, kv_head) * V16::kUnitScale;
  const float out_scale = kv_scale(kv.v_scale, kv_head);
  cp_async_wait<1>();
  __syncthreads();
  mark_block(args.timeline, BlockMark::first_tile);

  // 3. Scores, every head in one pass over each K row. A warp pass takes `tokens` consecutive
  // tokens; lane = sub * tokens + token, and lane (sub, token) the chunks sub, sub + split, ...:
  // the 8 lanes of an LDS.128 phase share `sub`, so they read one q address (a broadcast) and the
  // same chunk of 8 consecutive rows (8 bank groups, the pitch being odd).
  float* const scores = reinterpret_cast<float*>(shared_bytes + l.scores);
  {
    const int split = len > 32 ? 2 : 4, tokens = 32 / split;  // 4 warp passes cover len either way
    const int sub = lane / tokens, token = lane - sub * tokens;
    for (int t0 = warp * tokens; t0 < len; t0 += kShortWarps * tokens) {
      const int t = t0 + token;
      float dot[kMaxHeads];
#pragma unroll
      for (int h = 0; h < kMaxHeads; ++h) dot[h] = 0.f;
      if (t < len) {
        const std::uint32_t k_row = base + l.k + t * l.pitch;
#pragma unroll 1
        for (int c = sub; c < l.chunks; c += split) {
          float kf[kVec];
          V16::to_float(load_shared_16B(k_row + c * 16), kf);
          const std::uint32_t q_chunk = base + l.q + c * kVec * 4;
#pragma unroll
          for (int h = 0; h < kMaxHeads; ++h) {
            if (h < heads) {
              const std::uint32_t q_head = q_chunk + h * args.head_dim * 4;
              float d = dot[h];
#pragma unroll
              for (int i4 = 0; i4 < kVec / 4; ++i4) {
                const uint4 qv = load_shared_16B(q_head + i4 * 16);
                d = fmaf(__uint_as_float(qv.x), kf[i4 * 4 + 0], d);
                d = fmaf(__uint_as_float(qv.y), kf[i4 * 4 + 1], d);
                d = fmaf(__uint_as_float(qv.z), kf[i4 * 4 + 2], d);
                d = fmaf(__uint_as_float(qv.w), kf[i4 * 4 + 3], d);
              }
              dot[h] = d;
            }
          }
        }
      }
      // Fold the lanes of each token (every lane of the warp takes part: t0 is the warp's).
      for (int off = tokens; off < 32; off *= 2)
#pragma unroll
        for (int h = 0; h < kMaxHeads; ++h)
          if (h < heads) dot[h] += __shfl_xor_sync(0xffffffffu, dot[h], off);
      if (sub == 0 && t < len)
#pragma unroll
        for (int h = 0; h < kMaxHeads; ++h)
          if (h < heads) scores[h * l.rows + t] = dot[h] * score_scale;
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // scores and V visible to every warp

  // 4. Softmax a head a warp: the probabilities in place of the scores (0 from the length up to
  // the staged rows), the head's output scale and lse.
  float* const stats = reinterpret_cast<float*>(shared_bytes + l.stats);
  for (int h = warp; h < heads; h += kShortWarps) {
    float* const s = scores + h * l.rows;
    const float s0 = lane < len ? s[lane] : -INFINITY;
    const float s1 = lane + 32 < len ? s[lane + 32] : -INFINITY;
    const float m = short_warp_max(fmaxf(s0, s1));
    const float e0 = lane < len ? exp2f(s0 - m) : 0.f;  // lane < len: m is a finite score
    const float e1 = lane + 32 < len ? exp2f(s1 - m) : 0.f;
    const float sum = short_warp_sum(e0 + e1);
    if (lane < l.rows) s[lane] = e0;
    if (lane + 32 < l.rows) s[lane + 32] = e1;
    if (lane == 0) {
      stats[h] = sum > 0.f ? out_scale / sum : 0.f;
      args.lse[q_row0 + h] = sum > 0.f ? (m + log2f(sum)) * kShortLn2 : -INFINITY;
    }
  }
  __syncthreads();  // probabilities and scales visible

  // 5. P V, a column j a thread (columns j + kShortThreads beyond d 128): each V element read once
  // for every head, 4 tokens at a time (the rows up to len4 are staged or zero).
  const T* const v_rows = reinterpret_cast<const T*>(shared_bytes + l.v);
  const int pitch_elems = l.pitch / static_cast<int>(sizeof(T));
  for (int j = tid; j < args.head_dim; j += kShortThreads) {
    float acc[kMaxHeads];
#pragma unroll
    for (int h = 0; h < kMaxHeads; ++h) acc[h] = 0.f;
#pragma unroll 1
    for (int t0 = 0; t0 < len4; t0 += 4) {
      float v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = short_element_to_float(v_rows[(t0 + i) * pitch_elems + j]);
#pragma unroll
      for (int h = 0; h < kMaxHeads; ++h) {
        if (h < heads) {
          const float4 p = *reinterpret_cast<const float4*>(scores + h * l.rows + t0);
          float a = acc[h];
          a = fmaf(p.x, v[0], a);
          a = fmaf(p.y, v[1], a);
          a = fmaf(p.z, v[2], a);
          a = fmaf(p.w, v[3], a);
          acc[h] = a;
        }
      }
    }
#pragma unroll
    for (int h = 0; h < kMaxHeads; ++h)
      if (h < heads) args.o[(q_row0 + h) * args.head_dim + j] = acc[h] * stats[h];
  }
  mark_block(args.timeline, BlockMark::end);
}

}  // namespace decode_bench::device
