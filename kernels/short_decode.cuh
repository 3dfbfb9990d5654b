#pragma once
// Short-sequence decode (DecodePath::short_seq): plain decode of batches whose sequences all hold
// at most kShortMaxLen tokens, in two compile-time stages (kStageTokens):
//   64:  sequences of up to 64 tokens, kShortWarps warps a block, rows of up to 512 bytes;
//   128: sequences of 65-128 tokens, kShortLongWarps warps a block, rows of up to 256 bytes
//        (kShortLongMaxRowBytes: d 128 at 2 bytes, d 256 at FP8), P V's tokens in two halves.
//   grid  = (num_seqs, H_kv, ceil(group / heads)), block = the stage's warps,
//   layout.bytes dynamic shared memory (kernels/short_decode_layout.hpp)
//   block (s, g, part) takes query heads part * heads ... of KV head g's group in sequence s
// Such work is latency-bound: a block reads a few KB, so what costs is the chain of dependent
// global round trips, the number of waves, and the shared-memory work a block issues between its
// loads and its stores. The block therefore
//   1. starts the cp.async copies of its q rows (fp32, as stored) before anything else;
//   2. reads the length (and, paged, the block-table row: both loads in flight together), then
//      every page entry its rows need, then issues the cp.async copies of all its K rows (one
//      group) and all its V rows (a second group): one wait for K, none between rows;
//   3. scores every head of the block in one pass over each K row. FP16 and BF16 storage: on
//      tensor cores, a warp a 16-token tile, S^T = K Q^T as mma.m16n8k16 (K rows by ldmatrix, q
//      rounded to the storage type as the row family rounds it; BF16 splits q hi + lo, two
//      mmas). FP8: on CUDA cores, a lane takes a token and a quarter (8 tokens a warp pass) or
//      half (16) of the row's 16-byte chunks, so that the
//      block's warps cover the sequence in one pass each, even with one head; each K chunk is
//      loaded and widened once and FMA'd with each head's q chunk (broadcast reads) into per-head
//      accumulators held in registers (kMaxHeads, a compile-time bound the launch picks); the
//      lanes of a token are folded by shuffles;
//   4. softmax a head a warp: max and sum of the head's scores, the probabilities exp2(s - max)
//      written back in place (0 past the length) and the head's output scale;
//   5. P V. FP16 and BF16: on tensor cores, a warp 16 columns at a time, O = P V with the heads
//      as the 16 rows of the A operand (P rounded to FP16; BF16 splits P hi + lo, the lo parts in
//      the A rows the heads leave free up to 8 heads) and V by ldmatrix.trans. FP8: a
//      column a thread: each V element is read and widened once and FMA'd with every head's
//      probability (broadcast float4 reads, 4 tokens each), so o is written directly, coalesced,
//      without shuffles. The long stage's 256 threads take a column twice, each half of them every
//      other 4-token step; the second half's sums meet the first's through shared memory (the q
//      region, free after the scores) behind one more barrier.
// Why tensor cores: the block's work is a few KB, so its time after the data arrive is the
// instructions its warps issue. On CUDA cores the scores and P V took nearly half of them (the q
// reads, K widening and FMAs of every head, a column's V elements one at a time); an mma does a
// 16 x 8 x 16 block of either in one instruction. BF16 keeps 8 significant bits, so q and P are
// split hi + lo (the row family's rule, kernels/row_attention_mma.cuh, "Precision"): twice the
// scores' mmas, P V's at most 8 heads packed into one. FP8 would need a widening: not built here.
// No split, no partials in global memory, no merge. Scores are in the log2 domain (q's scale,
// softmax_scale * log2(e), the K scale of FP8 and Vec16's unit scale are applied to each score);
// lse is natural-log, the V scale and 1 / sum multiply o. An empty sequence writes o = 0 and
// lse = -inf, as the split-K and row paths do.
// Head dims are runtime (the loops run over the row's chunks and columns), so one kernel per
// accessor type, head bound and stage serves every head dim: no (head dim, group) instantiations.
// The attention variants of one query token (a window, the logit soft-cap, sinks) run the same
// kernel with the variant's arguments (short_decode_kernel<..., ShortDecodeVariantArgs>), compiled
// in units of their own (kernels/instantiate/short_decode_variant_*.cu): the variant lines sit
// behind `if constexpr (kVariant)`, so the plain instances compile none of them.
#include <cstdint>
#include <type_traits>

#include "kernels/block_timeline.cuh"
#include "kernels/cp_async.cuh"
#include "kernels/decode_launch.hpp"
#include "kernels/fast_divmod.hpp"
#include "kernels/log2_domain.cuh"
#include "kernels/mma_sync.cuh"
#include "kernels/row_locator.cuh"
#include "kernels/short_decode_layout.hpp"
#include "kernels/tanh_approx.cuh"
#include "kernels/vector_load.cuh"

namespace decode_bench::device {

inline constexpr int kShortThreads = kShortWarps * 32;  // a first-stage block; P V's column threads
inline constexpr int kShortLongThreads = kShortLongWarps * 32;

// The compile-time shape of a stage: its block, the widest row it stages, the rows a thread
// copies at most (kMaxTokens rows of up to kMaxChunks 16-byte chunks over the block's threads).
template <int kStageTokens>
struct ShortStage {
  static_assert(kStageTokens == kShortFirstStageLen || kStageTokens == kShortMaxLen, "a compiled stage");
  static constexpr bool kLong = kStageTokens > kShortFirstStageLen;
  static constexpr int kWarps = kLong ? kShortLongWarps : kShortWarps;
  static constexpr int kThreads = kWarps * 32;
  static constexpr int kMaxTokens = kStageTokens;
  static constexpr int kMaxChunks = kLong ? kShortLongMaxRowBytes / 16 : kMaxKernelHeadDim * 2 / 16;
  static constexpr int kRowsPerThread = kMaxTokens * kMaxChunks / kThreads;
  static constexpr int kPvHalves = kThreads / kShortThreads;  // threads a P V column
  // Registers: 64 a thread at most either way (8 blocks of 128 threads, 4 of 256).
  static constexpr int kMinBlocksPerSm = 1024 / kThreads;
};
// Whether a storage type's scores and P V run on tensor cores (FP16, BF16), and so the staged rows' multiple
// (kernels/short_decode_layout.hpp) its plans use.
template <class T>
inline constexpr bool kShortMma = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;
template <class T>
inline constexpr int kShortRowMultipleOf = kShortMma<T> ? kShortMmaRowMultiple : kShortRowMultiple;

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

// The variant kernels' arguments: the plain ones and the attention variants (kernels/attention_variant.hpp
// defines them; one query token a sequence, at its last position L - 1).
struct ShortDecodeVariantArgs : ShortDecodeArgs {
  int window = 0;             // 0: full; else tokens [max(0, L - window), L) only: rows before are never read
  float cap_log2 = 0.f;       // 0: no soft-cap; else logits_soft_cap x log2(e) (the scores' log2 domain)
  float inv_cap_log2 = 0.f;   // 1 / cap_log2
  const float* sinks = nullptr;  // (H_q) sink logits (natural log), or nullptr: no sinks
};

// The first token a window leaves visible in a sequence of `length` tokens (0: the whole sequence).
__device__ __forceinline__ int short_window_start(int length, int window) {
  return window > 0 && length > window ? length - window : 0;
}

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
// tid % 2^shift of rows tid >> shift, + kThreads >> shift, ... (the rows' tickets resolved).
template <int kThreads, class KV, int kRowsPerThread>
__device__ __forceinline__ void short_copy_rows(std::uint32_t dst, const typename KV::value_type* src,
                                                const RowLocator<KV>& loc,
                                                const typename RowLocator<KV>::Ticket (&ticket)[kRowsPerThread],
                                                int len, const ShortDecodeLayout& l) {
  constexpr int kVec = Vec16<typename KV::value_type>::kElems;
  const int c = threadIdx.x & ((1 << l.chunk_shift) - 1), r0 = threadIdx.x >> l.chunk_shift;
  const int rows_per_pass = kThreads >> l.chunk_shift;
  if (c >= l.chunks) return;
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    if (i * rows_per_pass >= len) break;  // no thread has a row left (uniform: not r0)
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

// P V of column j over the 4-token steps t0 = t_begin, t_begin + t_step, ... below len4: each V
// element widened once and FMA'd with every head's probability (one broadcast float4 a head).
template <int kMaxHeads, class T>
__device__ __forceinline__ void short_pv_column(float (&acc)[kMaxHeads], const T* v_rows, int pitch_elems,
                                                const float* probs, int rows, int heads, int j, int t_begin,
                                                int t_step, int len4) {
#pragma unroll 1
  for (int t0 = t_begin; t0 < len4; t0 += t_step) {
    float v[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) v[i] = short_element_to_float(v_rows[(t0 + i) * pitch_elems + j]);
#pragma unroll
    for (int h = 0; h < kMaxHeads; ++h) {
      if (h < heads) {
        const float4 p = *reinterpret_cast<const float4*>(probs + h * rows + t0);
        float a = acc[h];
        a = fmaf(p.x, v[0], a);
        a = fmaf(p.y, v[1], a);
        a = fmaf(p.z, v[2], a);
        a = fmaf(p.w, v[3], a);
        acc[h] = a;
      }
    }
  }
}

// A score's last steps on either path: the scale into the log2 domain and, for the variants, the
// soft-cap on the true logit in that domain: cap x tanh(s / cap) is c2 x tanh(s2 / c2) with
// c2 = cap x log2(e), one MUFU tanh (kernels/tanh_approx.cuh, as the row family's soft_cap_log2).
template <class Args>
__device__ __forceinline__ float short_finish_score(float dot, float score_scale, const Args& args) {
  float s = dot * score_scale;
  if constexpr (std::is_same_v<Args, ShortDecodeVariantArgs>)
    if (args.cap_log2 > 0.f) s = args.cap_log2 * tanh_approx(s * args.inv_cap_log2);
  return s;
}

// Two pairs of an mma fragment in storage type T from fp32 values in shared memory: r0 = (p[0],
// p[1]), r1 = (p[8], p[9]): q's dims for the scores' B, the probabilities' tokens for P V's A.
// BF16 (MmaStorage::kSplit) also returns the lo parts, x - hi rounded to BF16 (x = hi + lo to 16
// bits), as the row family splits q and P (kernels/row_attention_mma.cuh, "Precision"); FP16 leaves
// them untouched.
template <class T>
__device__ __forceinline__ void short_pack_pairs(const float* p, std::uint32_t& r0, std::uint32_t& r1,
                                                 std::uint32_t& r0_lo, std::uint32_t& r1_lo) {
  using Ops = MmaStorage<T>;
  const float2 a = *reinterpret_cast<const float2*>(p), b = *reinterpret_cast<const float2*>(p + 8);
  r0 = Ops::pack(a.x, a.y);
  r1 = Ops::pack(b.x, b.y);
  if constexpr (Ops::kSplit) {
    // split_lo's arithmetic with both hi pairs unpacked first: the order the GPU suite ran (split_lo
    // itself schedules this kernel differently).
    const float2 ah = Ops::unpack(r0), bh = Ops::unpack(r1);
    r0_lo = Ops::pack(a.x - ah.x, a.y - ah.y);
    r1_lo = Ops::pack(b.x - bh.x, b.y - bh.y);
  }
}

// Scores on tensor cores (FP16 and BF16 storage), a warp a 16-token tile t0 = 16 warp, + 16 warps, ...:
// S^T (16 tokens x 8 heads, kMaxHeads / 8 such head tiles) = K Q^T over k-steps of 16 dims.
//   A  K rows t0 + (lane & 15), chunk 2 kk + lane / 16 (ldmatrix.x4: the 16 rows' chunk 2 kk, then
//      2 kk + 1); rows past the length are stale, and only their own scores (never written) see them
//   B  head nt x 8 + g's q at dims 16 kk + c2, +1 and + 8, + 9, rounded to T from the staged fp32
//      (rows past the block's heads zero); the 8 rows' reads hit the same banks (4-8 way), a few
//      loads a k-step. BF16: q's lo parts are a second B, a second mma into the same accumulators
//   C  tokens g and g + 8 x heads c2 and c2 + 1 (g = lane / 4, c2 = 2 (lane % 4))
template <class T, int kMaxHeads, int kWarps, class Args>
__device__ __forceinline__ void short_scores_mma(float* scores, std::uint32_t k_base, const float* q_rows,
                                                 const ShortDecodeLayout& l, int len, int heads, float score_scale,
                                                 const Args& args) {
  using Ops = MmaStorage<T>;
  constexpr int kHeadTiles = (kMaxHeads + 7) / 8;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, c2 = (lane & 3) * 2;
  for (int t0 = warp * 16; t0 < len; t0 += kWarps * 16) {
    float acc[kHeadTiles][4];
#pragma unroll
    for (int nt = 0; nt < kHeadTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[nt][i] = 0.f;
    const std::uint32_t a_row = k_base + (t0 + (lane & 15)) * l.pitch + (lane >> 4) * 16;
#pragma unroll 2
    for (int kk = 0; kk < args.head_dim / 16; ++kk) {
      std::uint32_t a[4];
      ldmatrix_x4(a, a_row + kk * 32);
#pragma unroll
      for (int nt = 0; nt < kHeadTiles; ++nt) {
        const int h = nt * 8 + g;
        std::uint32_t b0 = 0u, b1 = 0u, b0_lo = 0u, b1_lo = 0u;
        if (h < heads) short_pack_pairs<T>(q_rows + h * args.head_dim + kk * 16 + c2, b0, b1, b0_lo, b1_lo);
        Ops::mma(acc[nt], a, b0, b1);
        if constexpr (Ops::kSplit) Ops::mma(acc[nt], a, b0_lo, b1_lo);
      }
    }
#pragma unroll
    for (int nt = 0; nt < kHeadTiles; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int h = nt * 8 + c2 + (i & 1), t = t0 + g + (i >> 1) * 8;
        if (h < heads && t < len) scores[h * l.rows + t] = short_finish_score(acc[nt][i], score_scale, args);
      }
  }
}

// P V on tensor cores (FP16 and BF16 storage), a warp 16 columns (two n-tiles of 8) at a time,
// column pair jp = warp, + warps, ...: O (16 heads x 16 columns) = P V over k-steps of 16 tokens up
// to len_rows (a multiple of 16; the probabilities and V rows from the length to there are zero).
//   A  P's rows g and g + 8 (heads; zero past the block's) at tokens t0 + c2, +1 and + 8, + 9,
//      rounded to T from the fp32 probabilities. BF16 at most 8 heads (kPacked): rows g + 8 hold
//      head g's lo parts (the row family's packed split), so one mma gives both products and row
//      g's sum is C's rows g plus g + 8, both held by the same thread; BF16 at 16 heads: the lo
//      parts are a second A, two more mmas a step
//   B  V rows t0 + (lane & 7) + 8 ((lane >> 3) & 1), chunk 2 jp + lane / 16 by ldmatrix.trans:
//      b[0], b[1] the first n-tile's k halves, b[2], b[3] the second's
//   C  heads g and g + 8 x columns c2 and c2 + 1 of each n-tile, times the head's output scale
template <class T, int kMaxHeads, int kWarps>
__device__ __forceinline__ void short_pv_mma(float* o, const float* probs, const float* stats, std::uint32_t v_base,
                                             const ShortDecodeLayout& l, int len_rows, int heads, int head_dim) {
  using Ops = MmaStorage<T>;
  constexpr bool kPacked = Ops::kSplit && kMaxHeads <= 8;
  constexpr bool kLoOperand = Ops::kSplit && kMaxHeads > 8;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, c2 = (lane & 3) * 2;
  const std::uint32_t b_row = v_base + ((lane & 7) + ((lane >> 3) & 1) * 8) * l.pitch + (lane >> 4) * 16;
  // One head row's A registers (r0: tokens c2, c2 + 1; r1: + 8) at step t0 and their lo parts,
  // zero past the heads.
  const auto p_pair = [&](int h, int t0, std::uint32_t& r0, std::uint32_t& r1, std::uint32_t& r0_lo,
                          std::uint32_t& r1_lo) {
    r0 = r1 = r0_lo = r1_lo = 0u;
    if (h < heads) short_pack_pairs<T>(probs + h * l.rows + t0 + c2, r0, r1, r0_lo, r1_lo);
  };
  for (int jp = warp; jp < head_dim / 16; jp += kWarps) {
    float acc[2][4];
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[n][i] = 0.f;
#pragma unroll 1
    for (int t0 = 0; t0 < len_rows; t0 += 16) {
      std::uint32_t a[4] = {0u, 0u, 0u, 0u}, a_lo[4] = {0u, 0u, 0u, 0u};
      if constexpr (kPacked) p_pair(g, t0, a[0], a[2], a[1], a[3]);
      else p_pair(g, t0, a[0], a[2], a_lo[0], a_lo[2]);
      if constexpr (kMaxHeads > 8) p_pair(g + 8, t0, a[1], a[3], a_lo[1], a_lo[3]);
      std::uint32_t b[4];
      ldmatrix_x4_trans(b, b_row + t0 * l.pitch + jp * 32);
      Ops::mma(acc[0], a, b[0], b[1]);
      Ops::mma(acc[1], a, b[2], b[3]);
      if constexpr (kLoOperand) {
        Ops::mma(acc[0], a_lo, b[0], b[1]);
        Ops::mma(acc[1], a_lo, b[2], b[3]);
      }
    }
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const int j = jp * 16 + n * 8 + c2;
      if constexpr (kPacked) {
        if (g < heads)
          *reinterpret_cast<float2*>(o + static_cast<std::int64_t>(g) * head_dim + j) =
              make_float2((acc[n][0] + acc[n][2]) * stats[g], (acc[n][1] + acc[n][3]) * stats[g]);
      } else {
#pragma unroll
        for (int r = 0; r < (kMaxHeads > 8 ? 2 : 1); ++r) {
          const int h = g + 8 * r;
          if (h < heads)
            *reinterpret_cast<float2*>(o + static_cast<std::int64_t>(h) * head_dim + j) =
                make_float2(acc[n][2 * r] * stats[h], acc[n][2 * r + 1] * stats[h]);
        }
      }
    }
  }
}

// At most 64 registers (8 first-stage blocks an SM by registers, 4 long-stage ones). What presses
// on them is the copies' page tickets (up to 16 rows a thread at the first stage, 8 at the long
// one, two registers a row when paged); the copies' early exit keeps ptxas from holding them all
// across the unrolled passes, and the cap is kept rather than losing the eighth block an SM to 65
// or more registers (docs/kernels/short_decode.md has each instance's count). kMaxHeads bounds the
// query heads of a block (the launch picks the smallest of 1, 2, 4, 8, 16 that holds the plan's
// heads), so the per-head accumulators stay in registers.
// The chunk and token loops are not unrolled: the heads give the FMAs their independent chains,
// and unrolling only added registers.
// Args: ShortDecodeArgs for plain decode; ShortDecodeVariantArgs for the variants (kVariant): the
// window (the staged rows start at the window's first token), the soft-cap on each score and the
// sink in each head's max and sum. One kernel template rather than two kernels around a shared
// device function, because the plain instances must keep their code: with such a wrapper ptxas
// scheduled the plain kernel differently.
template <class KV, int kMaxHeads, int kStageTokens, class Args = ShortDecodeArgs>
__global__ void __launch_bounds__(ShortStage<kStageTokens>::kThreads, ShortStage<kStageTokens>::kMinBlocksPerSm)
    short_decode_kernel(const KV kv, const Args args) {
  constexpr bool kVariant = std::is_same_v<Args, ShortDecodeVariantArgs>;
  static_assert(kVariant || std::is_same_v<Args, ShortDecodeArgs>, "plain or variant arguments");
  using T = typename KV::value_type;
  using V16 = Vec16<T>;
  using Stage = ShortStage<kStageTokens>;
  constexpr int kVec = V16::kElems;
  constexpr int kThreads = Stage::kThreads, kWarps = Stage::kWarps;
  constexpr int kRowsPerThread = Stage::kRowsPerThread;
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
  for (int i = tid; i < q_vectors; i += kThreads) cp_async_16B(base + l.q + 16 * i, q_src + 4 * i, true);

  // 2. Row offsets (paged: every page entry in flight before the first is used), then K and V.
  // A window stages the tokens [start, start + len): the rows before start are never read.
  // The locator first: paged, its block-table row start (indptr) is then read beside the length,
  // not after it (the zero fill below stores through a generic pointer, which the load of indptr
  // could not be moved above).
  const RowLocator<KV> loc(kv, seq, kv_head, args.page_div);
  const int seq_len = args.lens[seq];
  int start = 0;
  if constexpr (kVariant) start = short_window_start(seq_len, args.window);
  const int len = max(0, min(seq_len - start, args.capacity));  // a negative length reads as empty
  // The V rows from the length up to the next row multiple are zero (rows the copies never write):
  // P V reads that many rows at a time, and a stale NaN there times a zero probability would still
  // be NaN (in an mma too).
  constexpr int kRowMultiple = kShortRowMultipleOf<T>;
  const int len_rows = (len + kRowMultiple - 1) / kRowMultiple * kRowMultiple;
  for (int i = tid; i < (len_rows - len) * l.chunks; i += kThreads) {
    const int t = len + i / l.chunks, c = i - (t - len) * l.chunks;
    *reinterpret_cast<uint4*>(shared_bytes + l.v + t * l.pitch + c * 16) = make_uint4(0u, 0u, 0u, 0u);
  }
  typename RowLocator<KV>::Ticket ticket[kRowsPerThread]{};
  {
    const int r0 = tid >> l.chunk_shift, rows_per_pass = kThreads >> l.chunk_shift;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      if (i * rows_per_pass >= len) break;  // as in short_copy_rows
      const int t = r0 + i * rows_per_pass;
      if (t < len) ticket[i] = loc.fetch(start + t);
    }
  }
  short_copy_rows<kThreads>(base + l.k, kv.k, loc, ticket, len, l);
  cp_async_commit();  // group: q and K
  short_copy_rows<kThreads>(base + l.v, kv.v, loc, ticket, len, l);
  cp_async_commit();  // group: V
  // The dequantization scales (FP8; nullptr otherwise) load while the copies are in flight, not
  // after a wait (and not before the copies, where they would hold registers beside the tickets).
  // P V widens V exactly (short_element_to_float), so only the scores carry Vec16's unit scale.
  const float score_scale = args.q_scale * kv_scale(kv.k_scale, kv_head) * V16::kUnitScale;
  const float out_scale = kv_scale(kv.v_scale, kv_head);
  // The sink of the first head a warp's softmax takes, loaded ahead of the softmax: loaded there, it
  // was a DRAM round trip in front of the head's max. ptxas issues it just after the wait for K
  // below, so the round trip runs under the scores.
  [[maybe_unused]] float first_sink = -INFINITY;
  if constexpr (kVariant)
    if (args.sinks != nullptr && warp < heads) first_sink = args.sinks[kv_head * args.group + head0 + warp];
  cp_async_wait<1>();
  __syncthreads();
  mark_block(args.timeline, BlockMark::first_tile);

  // 3. Scores, every head in one pass over each K row. A warp pass takes `tokens` consecutive
  // tokens; lane = sub * tokens + token, and lane (sub, token) the chunks sub, sub + split, ...:
  // the 8 lanes of an LDS.128 phase share `sub`, so they read one q address (a broadcast) and the
  // same chunk of 8 consecutive rows (8 bank groups, the pitch being odd).
  float* const scores = reinterpret_cast<float*>(shared_bytes + l.scores);
  if constexpr (kShortMma<T>) {
    short_scores_mma<T, kMaxHeads, kWarps>(scores, base + l.k, reinterpret_cast<const float*>(shared_bytes + l.q), l, len,
                                        heads, score_scale, args);
  } else {
    // One pass a warp covers len either way: 8 tokens a pass up to 8 x warps tokens, else 16.
    const int split = len > 8 * kWarps ? 2 : 4, tokens = 32 / split;
    const int sub = lane / tokens, token = lane - sub * tokens;
    for (int t0 = warp * tokens; t0 < len; t0 += kWarps * tokens) {
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
          if (h < heads) scores[h * l.rows + t] = short_finish_score(dot[h], score_scale, args);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // scores and V visible to every warp

  // 4. Softmax a head a warp: the probabilities in place of the scores (0 from the length up to
  // the staged rows), the head's output scale and lse.
  float* const stats = reinterpret_cast<float*>(shared_bytes + l.stats);
  for (int h = warp; h < heads; h += kWarps) {
    constexpr int kPerLane = Stage::kMaxTokens / 32;  // tokens lane, lane + 32, ...
    float* const s = scores + h * l.rows;
    float sv[kPerLane], e[kPerLane];
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      sv[i] = lane + 32 * i < len ? s[lane + 32 * i] : -INFINITY;
      m = fmaxf(m, sv[i]);
    }
    m = short_warp_max(m);
    // A sink (log2 domain) joins the max, so a large sink logit stays finite in exp2, and the sum
    // below; never the probabilities (cpu_reference_variant's definition).
    float sink2 = -INFINITY;
    if constexpr (kVariant)
      if (args.sinks != nullptr) {
        sink2 = (h == warp ? first_sink : args.sinks[kv_head * args.group + head0 + h]) * kLog2e;
        m = fmaxf(m, sink2);
      }
    float part = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      e[i] = lane + 32 * i < len ? exp2f(sv[i] - m) : 0.f;  // a token below len: m is a finite score
      part += e[i];
    }
    float sum = short_warp_sum(part);
    if constexpr (kVariant)
      if (sink2 != -INFINITY) sum += exp2f(sink2 - m);
#pragma unroll
    for (int i = 0; i < kPerLane; ++i)
      if (lane + 32 * i < l.rows) s[lane + 32 * i] = e[i];
    if (lane == 0) {
      stats[h] = sum > 0.f ? out_scale / sum : 0.f;
      args.lse[q_row0 + h] = sum > 0.f ? (m + log2f(sum)) * kLn2 : -INFINITY;
    }
  }
  __syncthreads();  // probabilities and scales visible

  // 5. P V: FP16 and BF16 on tensor cores (short_pv_mma). Otherwise a column j a thread (columns j +
  // kShortThreads beyond d 128): each V element read once for every head, 4 tokens at a time (the
  // rows up to len_rows are staged or zero).
  [[maybe_unused]] const T* const v_rows = reinterpret_cast<const T*>(shared_bytes + l.v);
  [[maybe_unused]] const int pitch_elems = l.pitch / static_cast<int>(sizeof(T));
  if constexpr (kShortMma<T>) {
    short_pv_mma<T, kMaxHeads, kWarps>(args.o + q_row0 * args.head_dim, scores, stats, base + l.v, l, len_rows, heads,
                                    args.head_dim);
  } else if constexpr (Stage::kPvHalves == 1) {
    for (int j = tid; j < args.head_dim; j += kShortThreads) {
      float acc[kMaxHeads];
#pragma unroll
      for (int h = 0; h < kMaxHeads; ++h) acc[h] = 0.f;
      short_pv_column(acc, v_rows, pitch_elems, scores, l.rows, heads, j, 0, 4, len_rows);
#pragma unroll
      for (int h = 0; h < kMaxHeads; ++h)
        if (h < heads) args.o[(q_row0 + h) * args.head_dim + j] = acc[h] * stats[h];
    }
  } else {
    // Two threads a column: half 0 the 4-token steps 0, 8, ..., half 1 the steps 4, 12, ...; half
    // 1's sums go to the q region ((heads, h) fp32: exactly one a head and column, and no warp
    // reads q after the scores' barrier), half 0 adds them after a barrier and writes o. The
    // column loop runs alike in every thread (the barrier is in it).
    static_assert(Stage::kPvHalves == 2, "two threads a column");
    const int col = tid % kShortThreads, half = tid / kShortThreads;
    float* const partial = reinterpret_cast<float*>(shared_bytes + l.q);
    for (int j0 = 0; j0 < args.head_dim; j0 += kShortThreads) {
      const int j = j0 + col;
      float acc[kMaxHeads];
#pragma unroll
      for (int h = 0; h < kMaxHeads; ++h) acc[h] = 0.f;
      if (j < args.head_dim) short_pv_column(acc, v_rows, pitch_elems, scores, l.rows, heads, j, 4 * half, 8, len_rows);
      if (half == 1 && j < args.head_dim)
#pragma unroll
        for (int h = 0; h < kMaxHeads; ++h)
          if (h < heads) partial[h * args.head_dim + j] = acc[h];
      __syncthreads();
      if (half == 0 && j < args.head_dim)
#pragma unroll
        for (int h = 0; h < kMaxHeads; ++h)
          if (h < heads) args.o[(q_row0 + h) * args.head_dim + j] = (acc[h] + partial[h * args.head_dim + j]) * stats[h];
    }
  }
  mark_block(args.timeline, BlockMark::end);
}

}  // namespace decode_bench::device
