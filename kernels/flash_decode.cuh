#pragma once
// Split-K flash-decode (Flash-Decoding; seed paper Algorithm 1), generalised to GQA and batches.
//   grid  = (num_splits, H_kv / HB, num_seqs), block = Tr::kWarps warps, Tr::kSharedBytes dynamic
//   smem, HB = heads_per_block KV heads per block (its warps in HB equal groups, one per head);
//   work-list plans (ragged batches, kernels/decode_balance.hpp): grid = (H_kv / HB, items), item
//   i naming the block's sequence, split and the sequence's own split count
//   block (split, b, s) streams the chunks split, split + num_splits, ... (chunk tokens each) of
//   sequence s, KV heads b * HB ... b * HB + HB - 1, once, for all GROUP query heads that share
//   each, keeping an online softmax per query head (the plan chooses one long chunk per block or
//   tile-sized interleaving); it writes one attention state (o normalised, lse) per query head: to
//   the output directly when num_splits == 1, otherwise to a partial; the last split block of each
//   head block to finish folds them with the (O, LSE) merge operator (kernels/split_merge.cuh), or,
//   for a plan with the fused merge off, merge_partials_kernel does in a second launch.
// HB > 1 exists for tuning probes: it makes a block read the heads of each page side by side, which
// was meant to help shuffled small pages; on the H100 it was slower everywhere, so plans use HB = 1
// unless asked (docs/history/kernel-notes.md, commit 328fb71).
// Scores live in the log2 domain: q is pre-scaled by softmax_scale * log2(e) so the exponentials
// are exp2f; lse is converted back to natural log on output.
// Head dims: the kernel compiled for D serves every runtime head dim h <= D (a multiple of 16,
// kernels/decode_problem.hpp): the 16-byte vectors of a row at dims >= h are never loaded (zero in
// registers or shared memory), their q dims are zero, so they add nothing to scores or outputs, and
// o, lse and partials are (.., h) arrays of which only the h dims are written. Bytes read stay exactly
// those of the h-dim rows.
// Attention variants (one query token: sinks, logit soft-cap, window): the twin
// flash_decode_split_variant_kernel runs the same body with kVariant on (kernels/flash_decode_variant.hpp);
// the plain kernel compiles none of it.
// Quantized caches (FP8): the KV head's K scale (kv.k_scale) and Vec16's unit scale are folded into
// that pre-scaled q, and the V scale into the output (one multiply per output element), so the
// inner loop only widens the stored values. The merge is linear in o, so partials carry it too.
#include <cstdint>

#include "kernels/attention_state.hpp"
#include "kernels/block_timeline.cuh"
#include "kernels/cp_async.cuh"
#include "kernels/decode_balance.hpp"
#include "kernels/fast_divmod.hpp"
#include "kernels/flash_decode_variant_args.cuh"
#include "kernels/flash_decode_traits.cuh"
#include "kernels/last_split.cuh"
#include "kernels/log2_domain.cuh"
#include "kernels/row_locator.cuh"
#include "kernels/split_merge.cuh"
#include "kernels/vector_load.cuh"

namespace decode_bench::device {

struct FlashDecodeArgs {
  const float* q;             // (num_seqs, H_q, h), h = head_dim <= D
  const std::int32_t* lens;   // (num_seqs)
  float* o;                   // (num_seqs, H_q, h)             when num_splits == 1
  float* lse;                 // (num_seqs, H_q)                when num_splits == 1
  float* partial_o;           // (num_seqs, H_q, num_splits, h) when num_splits > 1; work lists:
                              // (H_q, n, h) per sequence split n > 1 ways, at SplitBlockWork::partial_row
  float* partial_lse;         // (num_seqs, H_q, num_splits)    likewise, one float per state
  unsigned* split_counters;   // (num_seqs, H_kv / HB) when the merge is fused: zero before the
                              // launch, left zero by it (the last split of each head block resets it)
  const DecodeWorkItem* items;  // work-list plans: (gridDim.y); nullptr: the uniform grid above
  int heads_q;
  int head_dim;               // h: the problem's head dim, at most the compiled D
  int head_blocks;            // H_kv / HB
  int warps_per_head;         // kWarps / HB
  int num_splits;
  int chunk;                  // tokens per split, a multiple of the tile size
  float q_scale;              // softmax_scale * log2(e)
  FastDivmod page_div;        // page size (unused for contiguous)
  BlockEvent* timeline;       // one per block of the launch (kernels/block_timeline.hpp); nullptr: off
};

// Per-thread online-softmax state for GROUP query heads over the rows this thread has seen.
template <int GROUP, int E>
struct RowState {
  float m[GROUP];       // running max of log2-domain scores
  float l[GROUP];       // running sum of exp2(score - m)
  float acc[GROUP][E];  // running sum of exp2(score - m) * v, this lane's E elements
};

// Which KV head of its block this thread reads, and which rows of each tile: the warps of a head
// take turns row block by row block, so a tile of one head is warps_per_head * kRowsPerWarp *
// kUnroll tokens.
template <class Tr>
struct TileRows {
  int head_slot;  // 0 .. HB - 1
  int first;      // this row group's row for u = 0, from the tile's first token
  int stride;     // from its row u to its row u + 1
  int tile;       // tokens per tile

  __device__ explicit TileRows(int warps_per_head) {
    const int warp = threadIdx.x >> 5, row = (threadIdx.x & 31) / Tr::kLanesPerRow;
    head_slot = warp / warps_per_head;
    first = (warp - head_slot * warps_per_head) * Tr::kRowsPerWarp + row;
    stride = warps_per_head * Tr::kRowsPerWarp;
    tile = stride * Tr::kUnroll;
  }
  // Token of row slot u of this thread's row group in the tile starting at `base`.
  __device__ __forceinline__ std::int64_t token(std::int64_t base, int u) const { return base + first + u * stride; }
};

// Element offset of this lane's j-th 16-byte vector within a row.
template <class Tr>
__device__ __forceinline__ int lane_vec_offset(int j) {
  return (j * Tr::kLanesPerRow + (threadIdx.x & 31) % Tr::kLanesPerRow) * Tr::kVec;
}

// Which of this lane's vectors lie inside the runtime head dim (the rest are the masked tail: never
// loaded, zero), and their offsets, clamped to the row start for tail vectors so that even an
// unread address stays inside the row.
template <class Tr>
struct LaneVecs {
  bool in_dim[Tr::kVecsPerLane];
  int offset[Tr::kVecsPerLane];

  __device__ explicit LaneVecs(int head_dim) {
#pragma unroll
    for (int j = 0; j < Tr::kVecsPerLane; ++j) {
      in_dim[j] = lane_vec_offset<Tr>(j) < head_dim;
      offset[j] = in_dim[j] ? lane_vec_offset<Tr>(j) : 0;
    }
  }
};

// Resolves the rows of the tile at `base` (clamped to end - 1: rows past the end are masked
// when used, but their addresses must stay inside the sequence).
template <class Tr, class KV>
__device__ __forceinline__ void fetch_tickets(const RowLocator<KV>& loc, const TileRows<Tr>& rows,
                                              typename RowLocator<KV>::Ticket (&tickets)[Tr::kUnroll],
                                              std::int64_t base, std::int64_t end) {
#pragma unroll
  for (int u = 0; u < Tr::kUnroll; ++u) {
    const std::int64_t t = rows.token(base, u);
    tickets[u] = loc.fetch(t < end ? t : end - 1);
  }
}

// What one block computes: split `split` of the `num_splits` of sequence `seq`, for the KV heads of
// head block `head_block`. Uniform plans read it off the block index (every sequence split alike),
// work-list plans off their item.
struct SplitBlockWork {
  int seq, split, num_splits, head_block;
  std::int64_t partial_base;

  __device__ __forceinline__ static SplitBlockWork of_block(const FlashDecodeArgs& args) {
    if (args.items == nullptr)
      return {static_cast<int>(blockIdx.z), static_cast<int>(blockIdx.x), args.num_splits, static_cast<int>(blockIdx.y),
              static_cast<std::int64_t>(blockIdx.z) * args.num_splits};
    const DecodeWorkItem item = args.items[blockIdx.y];
    return {item.seq, item.split, item.num_splits, static_cast<int>(blockIdx.x), item.partial_base};
  }
  // Row of query head h's partial state of this split; a sequence's num_splits rows per head are
  // contiguous (what merge_split_states reads). Uniform plans: (seq * H_q + h) * num_splits + split.
  __device__ __forceinline__ std::int64_t partial_row(int heads_q, int h) const {
    return partial_base * heads_q + static_cast<std::int64_t>(h) * num_splits + split;
  }
};

// The tiles one block visits, in order: those of its chunk, then the first tile of the chunk
// num_splits further on, until the sequence ends.
struct TileCursor {
  std::int64_t begin, chunk_begin, chunk_end;
  int num_splits;

  __device__ __forceinline__ void advance(const FlashDecodeArgs& args, int tile, std::int64_t len) {
    begin += tile;
    if (begin >= chunk_end) {
      chunk_begin += static_cast<std::int64_t>(num_splits) * args.chunk;
      begin = chunk_begin;
      chunk_end = chunk_begin + args.chunk < len ? chunk_begin + args.chunk : len;
    }
  }
  __device__ __forceinline__ bool valid(std::int64_t len) const { return begin < len; }
};

// Scores and the online-softmax update of one tile whose K and V rows this thread holds.
template <class Tr, bool kMasked, bool kVariant = false>
__device__ __forceinline__ void consume_tile(const uint4 (&kreg)[Tr::kUnroll][Tr::kVecsPerLane],
                                             const uint4 (&vreg)[Tr::kUnroll][Tr::kVecsPerLane],
                                             const TileRows<Tr>& rows, std::int64_t tile_begin,
                                             std::int64_t end, const float (&q)[Tr::kGroup][Tr::kElemsPerLane],
                                             RowState<Tr::kGroup, Tr::kElemsPerLane>& st,
                                             const FlashDecodeVariantArgs& va = {}) {
  using T = typename Tr::Elem;
  constexpr int GROUP = Tr::kGroup;
  constexpr int U = Tr::kUnroll, NV = Tr::kVecsPerLane, E = Tr::kElemsPerLane;
  // Scores for GROUP query heads, reduced across the row group.
  float s[GROUP][U];
#pragma unroll
  for (int u = 0; u < U; ++u) {
    float kf[E];
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      float part[Tr::kVec];
      Vec16<T>::to_float(kreg[u][j], part);
#pragma unroll
      for (int i = 0; i < Tr::kVec; ++i) kf[j * Tr::kVec + i] = part[i];
    }
#pragma unroll
    for (int g = 0; g < GROUP; ++g) {
      float dot = 0.f;
#pragma unroll
      for (int i = 0; i < E; ++i) dot = fmaf(q[g][i], kf[i], dot);
#pragma unroll
      for (int off = Tr::kLanesPerRow / 2; off > 0; off /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, off);
      if constexpr (kVariant) dot = variant_score(va, dot);  // the soft-cap, on valid and masked rows alike
      s[g][u] = (!kMasked || rows.token(tile_begin, u) < end) ? dot : -INFINITY;
    }
  }
  // Online softmax: one rescale per tile, then U weighted V rows.
  float vf[U][E];
#pragma unroll
  for (int u = 0; u < U; ++u)
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      float part[Tr::kVec];
      Vec16<T>::to_float(vreg[u][j], part);
#pragma unroll
      for (int i = 0; i < Tr::kVec; ++i) vf[u][j * Tr::kVec + i] = part[i];
    }
#pragma unroll
  for (int g = 0; g < GROUP; ++g) {
    float tile_max = s[g][0];
#pragma unroll
    for (int u = 1; u < U; ++u) tile_max = fmaxf(tile_max, s[g][u]);
    const float m_new = fmaxf(st.m[g], tile_max);
    if (kMasked && m_new == -INFINITY) continue;  // nothing seen yet and nothing valid here
    const float rescale = exp2f(st.m[g] - m_new);   // 0 on the first tile (m = -inf)
    float p[U];
    float psum = 0.f;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      p[u] = exp2f(s[g][u] - m_new);  // masked rows: exp2(-inf) = 0
      psum += p[u];
    }
    st.l[g] = st.l[g] * rescale + psum;
    st.m[g] = m_new;
#pragma unroll
    for (int i = 0; i < E; ++i) {
      float a = st.acc[g][i] * rescale;
#pragma unroll
      for (int u = 0; u < U; ++u) a = fmaf(p[u], vf[u][i], a);
      st.acc[g][i] = a;
    }
  }
}

// Register path (kStages == 0): issue every K and V load of the tile, resolve the next tile's
// rows while they are in flight, then use them.
template <class Tr, class KV, bool kVariant = false>
__device__ __forceinline__ void stream_tiles_in_registers(const KV& kv, const RowLocator<KV>& loc,
                                                          const TileRows<Tr>& rows, const FlashDecodeArgs& args, TileCursor cur, std::int64_t len,
                                                          const float (&q)[Tr::kGroup][Tr::kElemsPerLane],
                                                          RowState<Tr::kGroup, Tr::kElemsPerLane>& st,
                                                          const FlashDecodeVariantArgs& va = {}) {
  constexpr int U = Tr::kUnroll, NV = Tr::kVecsPerLane;
  const LaneVecs<Tr> vecs(args.head_dim);
  typename RowLocator<KV>::Ticket tickets[U];
  fetch_tickets<Tr>(loc, rows, tickets, cur.begin, cur.chunk_end);
  while (true) {
    const bool masked = cur.begin + rows.tile > cur.chunk_end;
    uint4 kreg[U][NV], vreg[U][NV];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool valid = !masked || rows.token(cur.begin, u) < cur.chunk_end;
      const std::int64_t off = loc.offset(tickets[u]);
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const std::int64_t e = off + vecs.offset[j];
        const bool load = valid && vecs.in_dim[j];
        kreg[u][j] = load ? load_stream_16B(kv.k + e) : make_uint4(0, 0, 0, 0);
        vreg[u][j] = load ? load_stream_16B(kv.v + e) : make_uint4(0, 0, 0, 0);
      }
    }
    const TileCursor now = cur;
    cur.advance(args, rows.tile, len);
    const bool more = cur.valid(len);
    if (more) fetch_tickets<Tr>(loc, rows, tickets, cur.begin, cur.chunk_end);
    if (masked) consume_tile<Tr, true, kVariant>(kreg, vreg, rows, now.begin, now.chunk_end, q, st, va);
    else consume_tile<Tr, false, kVariant>(kreg, vreg, rows, now.begin, now.chunk_end, q, st, va);
    if (!more) break;
  }
}

// Pipelined path (kStages >= 2): each thread stages its own K/V vectors of a tile in shared
// memory with cp.async, kStages - 1 tiles ahead of the one it uses. A thread only ever reads the
// slots it wrote itself, so wait_group alone orders the copies: no barrier.
//   shared: (kStages, U * NV * 2, kThreads) 16-byte slots, thread-minor (conflict-free)
template <class Tr, class KV, bool kVariant = false>
__device__ __forceinline__ void stream_tiles_pipelined(const KV& kv, const RowLocator<KV>& loc,
                                                       const TileRows<Tr>& rows, const FlashDecodeArgs& args, TileCursor cur, std::int64_t len,
                                                       const float (&q)[Tr::kGroup][Tr::kElemsPerLane],
                                                       RowState<Tr::kGroup, Tr::kElemsPerLane>& st,
                                                       const FlashDecodeVariantArgs& va = {}) {
  constexpr int U = Tr::kUnroll, NV = Tr::kVecsPerLane, S = Tr::kStages;
  // The dynamic window starts right after the static shared memory, at whatever offset that
  // leaves. Each warp's cp.async writes 512 contiguous bytes; from a base that was 16 mod 32 bytes
  // (4176 B of static memory) L1TEX split the copies so that half the global sectors were fetched
  // twice, and the kernel ran slower at 2M tokens (H100, ncu; docs/history/kernel-notes.md,
  // "Commit bd98083: fused merge, and a shared-memory alignment defect").
  extern __shared__ uint4 dynamic_shared[];
  const std::uint32_t stage_base = (shared_address(dynamic_shared) + Tr::kSharedAlign - 1) & ~(Tr::kSharedAlign - 1u);
  const auto slot = [stage_base](int stage, int u, int j, int kv_sel) -> std::uint32_t {
    return stage_base + 16u * (((stage * U * NV + u * NV + j) * 2 + kv_sel) * Tr::kThreads + threadIdx.x);
  };
  const LaneVecs<Tr> vecs(args.head_dim);
  typename RowLocator<KV>::Ticket tickets[U];
  TileCursor load = cur;
  fetch_tickets<Tr>(loc, rows, tickets, load.begin, load.chunk_end);
  // Copies the tile under `load` into `stage` and moves `load` (and its tickets) one tile on.
  const auto issue = [&](int stage) {
    if (!load.valid(len)) return;
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const bool valid = rows.token(load.begin, u) < load.chunk_end;
      const std::int64_t off = loc.offset(tickets[u]);
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        const std::int64_t e = off + vecs.offset[j];
        cp_async_16B(slot(stage, u, j, 0), kv.k + e, valid && vecs.in_dim[j]);
        cp_async_16B(slot(stage, u, j, 1), kv.v + e, valid && vecs.in_dim[j]);
      }
    }
    load.advance(args, rows.tile, len);
    if (load.valid(len)) fetch_tickets<Tr>(loc, rows, tickets, load.begin, load.chunk_end);
  };
#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    issue(s);
    cp_async_commit();  // empty groups too, so the wait below always counts S - 1 newer groups
  }
  int use_stage = 0;
  while (cur.valid(len)) {
    issue(use_stage == 0 ? S - 1 : use_stage - 1);  // the stage used last round is free again
    cp_async_commit();
    cp_async_wait<S - 1>();
    uint4 kreg[U][NV], vreg[U][NV];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int j = 0; j < NV; ++j) {
        kreg[u][j] = load_shared_16B(slot(use_stage, u, j, 0));
        vreg[u][j] = load_shared_16B(slot(use_stage, u, j, 1));
      }
    if (cur.begin + rows.tile > cur.chunk_end)
      consume_tile<Tr, true, kVariant>(kreg, vreg, rows, cur.begin, cur.chunk_end, q, st, va);
    else consume_tile<Tr, false, kVariant>(kreg, vreg, rows, cur.begin, cur.chunk_end, q, st, va);
    cur.advance(args, rows.tile, len);
    use_stage = use_stage + 1 == S ? 0 : use_stage + 1;
  }
  cp_async_wait<0>();
}

// Folds the states of the row groups of a warp, then of the warps of the block, and writes one
// (o, lse) per query head. Empty states (m = -inf, l = 0) merge as the identity. Variant twins
// with sinks fold each head's sink in here when the sequence is not split (the merge does otherwise).
template <class Tr, bool kVariant = false>
__device__ __forceinline__ void reduce_and_store(RowState<Tr::kGroup, Tr::kElemsPerLane>& st,
                                                 const FlashDecodeArgs& args, const float* v_scale,
                                                 const SplitBlockWork& work, int first_kv_head,
                                                 const FlashDecodeVariantArgs& va = {}) {
  constexpr int D = Tr::kHeadDim, GROUP = Tr::kGroup;
  constexpr int E = Tr::kElemsPerLane, NV = Tr::kVecsPerLane;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int row = lane / Tr::kLanesPerRow, lane_in_row = lane % Tr::kLanesPerRow;

#pragma unroll
  for (int off = Tr::kLanesPerRow; off < 32; off *= 2) {
#pragma unroll
    for (int g = 0; g < GROUP; ++g) {
      const float m_other = __shfl_xor_sync(0xffffffffu, st.m[g], off);
      const float l_other = __shfl_xor_sync(0xffffffffu, st.l[g], off);
      const float m_new = fmaxf(st.m[g], m_other);
      const float a = m_new == -INFINITY ? 0.f : exp2f(st.m[g] - m_new);
      const float b = m_new == -INFINITY ? 0.f : exp2f(m_other - m_new);
      st.l[g] = st.l[g] * a + l_other * b;
      st.m[g] = m_new;
#pragma unroll
      for (int i = 0; i < E; ++i) {
        const float acc_other = __shfl_xor_sync(0xffffffffu, st.acc[g][i], off);
        st.acc[g][i] = st.acc[g][i] * a + acc_other * b;
      }
    }
  }

  __shared__ float sm_m[Tr::kWarps][GROUP];
  __shared__ float sm_l[Tr::kWarps][GROUP];
  __shared__ float sm_acc[Tr::kWarps][GROUP][D];
  if (row == 0) {
#pragma unroll
    for (int g = 0; g < GROUP; ++g) {
      if (lane_in_row == 0) {
        sm_m[warp][g] = st.m[g];
        sm_l[warp][g] = st.l[g];
      }
#pragma unroll
      for (int j = 0; j < NV; ++j)
#pragma unroll
        for (int i = 0; i < Tr::kVec; ++i)
          sm_acc[warp][g][(j * Tr::kLanesPerRow + lane_in_row) * Tr::kVec + i] = st.acc[g][j * Tr::kVec + i];
    }
  }
  __syncthreads();

  // Each head's warps fold into one state per query head: (HB, GROUP, h) outputs (the dims past the
  // head dim h hold zeros and are not written).
  const int warps_per_head = args.warps_per_head, heads = Tr::kWarps / warps_per_head;
  const int h_dim = args.head_dim;
  for (int idx = threadIdx.x; idx < heads * GROUP * h_dim; idx += Tr::kThreads) {
    const int slot = idx / (GROUP * h_dim), g = idx / h_dim % GROUP, d = idx % h_dim;
    const int w_begin = slot * warps_per_head, w_end = w_begin + warps_per_head;
    float m = -INFINITY;
    for (int w = w_begin; w < w_end; ++w) m = fmaxf(m, sm_m[w][g]);
    float l = 0.f, acc = 0.f;
    if (m != -INFINITY) {
      for (int w = w_begin; w < w_end; ++w) {
        const float scale = exp2f(sm_m[w][g] - m);
        l = fmaf(sm_l[w][g], scale, l);
        acc = fmaf(sm_acc[w][g][d], scale, acc);
      }
    }
    const bool empty = l == 0.f;
    const float out_scale = kv_scale(v_scale, first_kv_head + slot) * Vec16<typename Tr::Elem>::kUnitScale;
    float out = empty ? 0.f : acc / l * out_scale;
    float lse = empty ? -INFINITY : (m + log2f(l)) * kLn2;
    const int h = (first_kv_head + slot) * GROUP + g;
    if constexpr (kVariant) {
      if (va.sinks != nullptr && work.num_splits == 1) {
        // The sink z (natural log; z x log2(e) in this domain) joins max and denominator:
        // o = acc 2^(m - m') / l', l' = l 2^(m - m') + 2^(z2 - m'), m' = max(m, z2).
        const float z2 = va.sinks[h] * kLog2e;
        const float m2 = fmaxf(m, z2);
        const float a = m == -INFINITY ? 0.f : exp2f(m - m2);
        const float l2 = fmaf(l, a, exp2f(z2 - m2));
        out = acc * a / l2 * out_scale;
        lse = (m2 + log2f(l2)) * kLn2;
      }
    }
    const std::int64_t head_index = static_cast<std::int64_t>(work.seq) * args.heads_q + h;
    if (work.num_splits == 1) {
      args.o[head_index * h_dim + d] = out;
      if (d == 0) args.lse[head_index] = lse;
    } else {
      const std::int64_t part = work.partial_row(args.heads_q, h);
      args.partial_o[part * h_dim + d] = out;
      if (d == 0) args.partial_lse[part] = lse;
    }
  }
}

// The fused merge: each split block counts itself done on its head block's counter once its
// partials are visible device-wide; the block that counts last folds all num_splits partials of its
// HB * GROUP query heads. This saves the merge kernel's launch and the idle gap before it (the threadFenceReduction
// pattern of the CUDA samples).
template <class Tr, bool kVariant = false>
__device__ __forceinline__ void merge_if_last_split(const FlashDecodeArgs& args, const SplitBlockWork& work,
                                                    int first_kv_head, const FlashDecodeVariantArgs& va = {}) {
  constexpr int D = Tr::kHeadDim, GROUP = Tr::kGroup;
  __shared__ bool last;
  const auto counter_of = [=] {
    return args.split_counters + static_cast<std::int64_t>(work.seq) * args.head_blocks + work.head_block;
  };
  if (!last_split_to_arrive(counter_of, work.num_splits, &last, static_cast<int>(threadIdx.x))) return;
  const int query_heads = Tr::kWarps / args.warps_per_head * GROUP;
  for (int h = 0; h < query_heads; ++h) {
    const std::int64_t head_index = static_cast<std::int64_t>(work.seq) * args.heads_q + first_kv_head * GROUP + h;
    const std::int64_t first = SplitBlockWork{work.seq, 0, work.num_splits, work.head_block, work.partial_base}.partial_row(
        args.heads_q, first_kv_head * GROUP + h);
    if constexpr (kVariant) {
      const float sink = va.sinks != nullptr ? va.sinks[first_kv_head * GROUP + h] : -INFINITY;
      merge_split_states<D, Tr::kThreads, true>(args.partial_o + first * args.head_dim, args.partial_lse + first,
                                                work.num_splits, args.o + head_index * args.head_dim,
                                                args.lse + head_index, args.head_dim, sink);
    } else {
      merge_split_states<D, Tr::kThreads>(args.partial_o + first * args.head_dim, args.partial_lse + first,
                                          work.num_splits, args.o + head_index * args.head_dim, args.lse + head_index,
                                          args.head_dim);
    }
  }
}

// The kernel body, plain (kVariant false: `va` unused, the code of the kernel before the variants
// existed) or a variant twin's.
template <class Tr, class KV, bool kVariant>
__device__ __forceinline__ void flash_decode_split_body(const KV& kv, const FlashDecodeArgs& args,
                                                        const FlashDecodeVariantArgs& va) {
  constexpr int GROUP = Tr::kGroup;
  constexpr int NV = Tr::kVecsPerLane, E = Tr::kElemsPerLane;
  mark_block(args.timeline, BlockMark::start);
  const SplitBlockWork work = SplitBlockWork::of_block(args);
  const int split = work.split, seq = work.seq;
  const TileRows<Tr> rows(args.warps_per_head);
  const int first_kv_head = work.head_block * (Tr::kWarps / args.warps_per_head);
  const int kv_head = first_kv_head + rows.head_slot;
  const int lane_in_row = (threadIdx.x & 31) % Tr::kLanesPerRow;

  const std::int64_t len = args.lens[seq];
  // A window's range starts at len - window: the splits and tiles cover only it (its plan is that of
  // full attention over min(len, window) tokens), their positions offset by its first token.
  std::int64_t begin = static_cast<std::int64_t>(split) * args.chunk;
  if constexpr (kVariant) begin += variant_first_token(va, len);
  const std::int64_t end = begin + args.chunk < len ? begin + args.chunk : len;

  // This lane's slice of the GROUP query vectors, pre-scaled into the log2 domain and by the KV
  // head's K dequantization scale; zero past the head dim.
  const float q_scale = args.q_scale * kv_scale(kv.k_scale, kv_head) * Vec16<typename Tr::Elem>::kUnitScale;
  float q[GROUP][E];
#pragma unroll
  for (int g = 0; g < GROUP; ++g) {
    const float* qh = args.q + (static_cast<std::int64_t>(seq) * args.heads_q + kv_head * GROUP + g) * args.head_dim;
#pragma unroll
    for (int j = 0; j < NV; ++j) {
      const int d0 = (j * Tr::kLanesPerRow + lane_in_row) * Tr::kVec;
#pragma unroll
      for (int i = 0; i < Tr::kVec; ++i) q[g][j * Tr::kVec + i] = d0 < args.head_dim ? qh[d0 + i] * q_scale : 0.f;
    }
  }

  RowState<GROUP, E> st;
#pragma unroll
  for (int g = 0; g < GROUP; ++g) {
    st.m[g] = -INFINITY;
    st.l[g] = 0.f;
#pragma unroll
    for (int i = 0; i < E; ++i) st.acc[g][i] = 0.f;
  }

  if (begin < end) {
    // This block's tokens: chunks split, split + S, split + 2S, ... of `chunk` tokens each (S =
    // num_splits). A plan with chunk >= len / S gives each block one contiguous range; a plan with
    // chunk = one tile interleaves the blocks tile by tile, so at any moment all blocks read
    // within a narrow window of the sequence (the access pattern of a grid-stride read).
    const RowLocator<KV> loc(kv, seq, kv_head, args.page_div);
    const TileCursor first{begin, begin, end, work.num_splits};
    if constexpr (Tr::kStages == 0) stream_tiles_in_registers<Tr, KV, kVariant>(kv, loc, rows, args, first, len, q, st, va);
    else stream_tiles_pipelined<Tr, KV, kVariant>(kv, loc, rows, args, first, len, q, st, va);
  }
  mark_block(args.timeline, BlockMark::loop_end);
  reduce_and_store<Tr, kVariant>(st, args, kv.v_scale, work, first_kv_head, va);
  if (args.split_counters != nullptr && work.num_splits > 1) merge_if_last_split<Tr, kVariant>(args, work, first_kv_head, va);
  mark_block(args.timeline, BlockMark::end);
}

template <class Tr, class KV>
__global__ void __launch_bounds__(Tr::kThreads) flash_decode_split_kernel(const KV kv, const FlashDecodeArgs args) {
  flash_decode_split_body<Tr, KV, false>(kv, args, FlashDecodeVariantArgs{});
}

// The variant twin (one query token; window, soft-cap, sinks): instantiated only in
// kernels/instantiate/decode_variant_*.cu, so the plain kernels' translation units compile none of it.
template <class Tr, class KV>
__global__ void __launch_bounds__(Tr::kThreads)
    flash_decode_split_variant_kernel(const KV kv, const FlashDecodeArgs args, const FlashDecodeVariantArgs va) {
  flash_decode_split_body<Tr, KV, true>(kv, args, va);
}

// The stand-alone merge (plans with fused_merge off, for tuning probes): one block per
// (query head, sequence) folds its num_splits partials.
//   grid = (H_q, num_seqs), block = kMergeThreads
constexpr int kMergeThreads = 128;

template <int D>
__global__ void __launch_bounds__(kMergeThreads) merge_partials_kernel(const FlashDecodeArgs args) {
  mark_block(args.timeline, BlockMark::start);
  const std::int64_t head_index = static_cast<std::int64_t>(blockIdx.y) * args.heads_q + blockIdx.x;
  const std::int64_t first = head_index * args.num_splits;
  merge_split_states<D, kMergeThreads>(args.partial_o + first * args.head_dim, args.partial_lse + first,
                                       args.num_splits, args.o + head_index * args.head_dim, args.lse + head_index,
                                       args.head_dim);
  mark_block(args.timeline, BlockMark::end);
}

// Its variant twin: each head's sink joins the merge.
template <int D>
__global__ void __launch_bounds__(kMergeThreads)
    merge_partials_variant_kernel(const FlashDecodeArgs args, const FlashDecodeVariantArgs va) {
  mark_block(args.timeline, BlockMark::start);
  const std::int64_t head_index = static_cast<std::int64_t>(blockIdx.y) * args.heads_q + blockIdx.x;
  const std::int64_t first = head_index * args.num_splits;
  const float sink = va.sinks != nullptr ? va.sinks[blockIdx.x] : -INFINITY;
  merge_split_states<D, kMergeThreads, true>(args.partial_o + first * args.head_dim, args.partial_lse + first,
                                             args.num_splits, args.o + head_index * args.head_dim,
                                             args.lse + head_index, args.head_dim, sink);
  mark_block(args.timeline, BlockMark::end);
}

}  // namespace decode_bench::device
