#pragma once
// Device pieces both row-attention paths share (kernels/row_attention_mma.cuh, _simt.cuh):
// the kernel arguments, a block's work (item, token chunk, chunk count and partial states: from the
// uniform grid or a work-list entry), the cp.async staging of
// K/V tiles (raw storage bytes, FP8 included, swizzled, converted only where they are used) and
// the epilogue that writes a row's state or a split partial and lets the last split block merge.
// Head dims: a kernel compiled for D serves every head dim h <= D (a multiple of 16,
// kernels/decode_problem.hpp). K/V chunks at dims >= h are zero-filled, never read; q dims >= h are
// zero; q, o and partials are (.., h) arrays and only their h dims are written.
#include <cstdint>

#include "kernels/block_timeline.cuh"
#include "kernels/dependent_launch.cuh"  // allow_dependent_grid (the row kernels), dependent_grid_wait
#include "kernels/cp_async.cuh"
#include "kernels/row_attention_fp8.cuh"
#include "kernels/row_attention.hpp"
#include "kernels/row_locator.cuh"
#include "kernels/row_merge_model.hpp"
#include "kernels/split_merge.cuh"
#include "kernels/tile_staging_map.hpp"

namespace decode_bench::device {

struct RowAttentionArgs {
  const RowAttentionItem* items;   // nullptr: decode items (see RowAttentionProblem::seq_lens)
  const std::int32_t* seq_lens;    // decode items only
  const std::int32_t* row_q;       // nullptr: identity
  const float* q;
  float* o;
  float* lse;
  int heads_q, heads_kv, group;
  int head_dim;                    // h, at most the compiled D: row length of q, o and partial_o
  float q_scale;                   // softmax_scale * log2(e): scores live in the log2 domain
  int splits;                      // uniform grid: blocks per item along its tokens (grid.y)
  int row_blocks;                  // blocks per item along its rows
  int rows_per_block;
  int stages;                      // tensor-core path: K/V tiles in shared memory (2 or 3)
  int fused_merge;                 // 1: the last split block merges (merge_if_last); 0: the split
                                   // blocks only write partials, a second kernel merges them
                                   // (kernels/row_attention_merge.cuh); kClusterMerge: the split
                                   // blocks of a cluster merge through shared memory (the
                                   // warpgroup-MMA kernel, row_cluster_merge.cuh). Fills the
                                   // padding before `entries`: the struct keeps its size.
  const RowWorkEntry* entries;     // work list: block x is entry x / row_blocks (grid.y = 1); nullptr: uniform
  float* partial_o;                // (states, h): uniform (num_rows, splits); work list per RowWorkEntry
  float* partial_lse;              // (states)
  unsigned* counters;              // (num_items, row_blocks), zero between launches; with work
                                   // stealing (the uniform grid) a second such array follows: per
                                   // (item, row block) the next tile of its pool (steal_counter)
  BlockEvent* timeline;            // one per block (kernels/block_timeline.hpp); nullptr: off
};

// RowAttentionArgs::fused_merge of a cluster-launched grid (RowAttentionPlan::cluster_merge).
inline constexpr int kClusterMerge = 2;

struct ItemView {
  int seq, kv_head, row_begin, row_end;
  std::int64_t token_begin, token_end;
};

__device__ __forceinline__ ItemView load_item(const RowAttentionArgs& a, int i) {
  if (a.items != nullptr) {
    const RowAttentionItem it = a.items[i];
    return {it.kv_seq, it.kv_head, it.row_begin, it.row_end, it.token_begin, it.token_end};
  }
  const int seq = i / a.heads_kv, h = i - seq * a.heads_kv;
  const int first = seq * a.heads_q + h * a.group;
  return {seq, h, first, first + a.group, 0, a.seq_lens[seq]};
}

// Split s of `splits` takes tokens [begin, end) of the item: row_chunk_range's cut
// (kernels/row_attention_balance.hpp, the host's work-list planning uses the same).
template <int kTile>
__device__ __forceinline__ void split_range(const ItemView& it, int s, int splits, std::int64_t& begin,
                                            std::int64_t& end) {
  const TokenRange r = row_chunk_range(it.token_end - it.token_begin, s, splits, kTile);
  begin = it.token_begin + r.begin;
  end = it.token_begin + r.end;
}

// What one block computes: rows [item.row_begin + row_block x rows_per_block, + rows_per_block)
// of item `item_index` over tokens [t_begin, t_end), chunk `split` of the item's `splits`. With
// splits > 1, row r's state of chunk c is partial state partial + (r - item.row_begin) x splits + c
// (the uniform grid: partial = row_begin x splits, i.e. (num_rows, splits)).
struct RowBlockWork {
  ItemView item;
  int item_index, row_block;
  int split, splits;
  std::int64_t partial;
  std::int64_t t_begin, t_end;
};

// The uniform grid: block (item x row_blocks + rb, split). A work list: block x is entry
// x / row_blocks, whose (item, chunk, chunk count, partial base, item range) were planned on the
// host: one 32-byte read, no length look-up. Both then cut the item's range by split_range, one
// code path: with the work list's chunk range read from the entry instead, ptxas compiled the
// uniform path's tensor-core kernel differently (FP16 D = 128: 166 instead of 253 registers,
// nvcc 13.0 -Xptxas -v, sm_90), a schedule change nobody had timed.
template <int kTile>
__device__ __forceinline__ RowBlockWork locate_block_work(const RowAttentionArgs& a) {
  RowBlockWork w;
  const int unit = blockIdx.x / a.row_blocks;
  w.row_block = blockIdx.x - unit * a.row_blocks;
  if (a.entries != nullptr) {
    const int4* src = reinterpret_cast<const int4*>(a.entries + unit);
    const int4 head = src[0], range = src[1];  // (item, chunk, num_chunks, partial_base), (item range, -, -)
    w.item_index = head.x;
    const int seq = head.x / a.heads_kv, h = head.x - seq * a.heads_kv;
    const int first = seq * a.heads_q + h * a.group;
    w.item = {seq, h, first, first + a.group, range.x, range.y};
    w.split = head.y;
    w.splits = head.z;
    w.partial = head.w;
  } else {
    w.item_index = unit;
    w.item = load_item(a, unit);
    w.split = blockIdx.y;
    w.splits = a.splits;
    w.partial = static_cast<std::int64_t>(w.item.row_begin) * a.splits;
  }
  split_range<kTile>(w.item, w.split, w.splits, w.t_begin, w.t_end);
  return w;
}

// The uniform grid of decode items whose lengths are all `len` (RowAttentionPlan::uniform_len,
// the host's lengths): locate_block_work's uniform branch without reading seq_lens, a dependent
// global round trip at every block's start before its first tile can be addressed.
template <int kTile>
__device__ __forceinline__ RowBlockWork locate_block_work_of_length(const RowAttentionArgs& a, int len) {
  RowBlockWork w;
  w.item_index = blockIdx.x / a.row_blocks;
  w.row_block = blockIdx.x - w.item_index * a.row_blocks;
  const int seq = w.item_index / a.heads_kv, h = w.item_index - seq * a.heads_kv;
  const int first = seq * a.heads_q + h * a.group;
  w.item = {seq, h, first, first + a.group, 0, len};
  w.split = blockIdx.y;
  w.splits = a.splits;
  w.partial = static_cast<std::int64_t>(first) * a.splits;
  split_range<kTile>(w.item, w.split, w.splits, w.t_begin, w.t_end);
  return w;
}

// Where 16-byte chunk c of tile row r sits within the row (kChunks per row). 2- and 4-byte
// storage: c ^ (r & 7), so the 8 rows an ldmatrix (or 8 lanes reading one chunk column) touch land
// in distinct banks. FP8: the pattern its fragment loads need (fp8_chunk_slot, row_attention_fp8.cuh).
template <class T, int kChunks>
__device__ __forceinline__ int kv_chunk_slot(int r, int c) {
  if constexpr (sizeof(T) == 1) {
    static_assert(kChunks >= 4, "FP8 rows of at least 64 bytes");
    return fp8_chunk_slot<kChunks>(r, c);
  } else {
    static_assert(kChunks >= 8, "swizzle over 8 chunks");
    return c ^ (r & 7);
  }
}

// One 16-byte chunk c of tile row r, from the row at element offset row_off of K and V: copied,
// or zero-filled past the sequence (!in_range; row_off must still be a mapped row) and past the
// head dim (the unread address stays at the row's start).
template <class KV, int kChunks>
__device__ __forceinline__ void stage_kv_chunk(const KV& kv, std::int64_t row_off, bool in_range, int r, int c,
                                               int head_dim, std::uint32_t k_smem, std::uint32_t v_smem) {
  using T = typename KV::value_type;
  constexpr int kElems = 16 / sizeof(T);
  const bool in_dim = c * kElems < head_dim;
  const std::int64_t off = row_off + (in_dim ? c * kElems : 0);
  const std::uint32_t dst = static_cast<std::uint32_t>(r * kChunks + kv_chunk_slot<T, kChunks>(r, c)) * 16u;
  cp_async_16B(k_smem + dst, kv.k + off, in_range && in_dim);
  cp_async_16B(v_smem + dst, kv.v + off, in_range && in_dim);
}

// Stages tokens [t0, t0 + kTile) (those >= t_end zero-filled, and chunks past the head dim
// loc.head_dim: never read) of K and V into shared memory:
//   (kTile, kChunks) 16-byte chunks per matrix, chunk c of token r at r * kChunks + kv_chunk_slot(r, c).
// Storage bytes are copied as they are: conversion happens where the values are consumed
// (MmaStorage in mma_sync.cuh and the FP8 fragment loads of the mma path, Vec16 in the SIMT path).
template <class KV, int D, int kTile, int kThreads, bool kResolveRowsOnce = false>
__device__ __forceinline__ void stage_kv_tile(const KV& kv, const RowLocator<KV>& loc, std::int64_t t0,
                                              std::int64_t t_end, std::uint32_t k_smem, std::uint32_t v_smem) {
  using T = typename KV::value_type;
  constexpr int kElems = 16 / sizeof(T);
  constexpr int kChunks = D / kElems;
  using Map = TileStagingMap<kTile, kChunks, kThreads>;
  // kResolveRowsOnce, paged rows: each row's offset (divmod, block-table entry, 64-bit
  // arithmetic) is resolved by one lane of the warp that stages it and shuffled to the row's
  // kChunks lanes (TileStagingMap), not by each of those lanes (FP16, D 128: 16 lanes each doing
  // the address work of 8 rows a tile). SASS (sm_90, CUDA 13.0), one tile's staging of FP16 D 128
  // by 128 threads, alone: about 414 instructions a thread before, 172 after (contiguous rows:
  // 288). Measured (H100, commit 5b8dd7b): paged 64 x 1K faster at the same plan; it
  // did not let paged K/V take one block per SM (docs/history/kernel-notes.md, "Paged rows resolved once
  // per warp"), so the address work is not what held that back. Taken by the narrow tensor-core
  // tiling (grouped decode) only: in the wide tiling and the SIMT kernel the extra live registers
  // made ptxas spill (BF16 wide 0 -> 20 bytes, FP8 SIMT 16 -> 40), and neither streams decode.
  if constexpr (kResolveRowsOnce && is_paged_accessor<KV>::value && Map::kResolvable) {
    const int x = static_cast<int>(threadIdx.x);
    std::int64_t resolved = 0;
    if (x % 32 < Map::kResolvers) {
      const std::int64_t t = t0 + Map::resolved_row(x);
      resolved = loc.offset(loc.fetch(t < t_end ? t : t0));  // t0 < t_end: a mapped row for the tail
    }
    // Fully unrolled: the passes' rows, columns and swizzles become invariants of the tile loop.
#pragma unroll
    for (int p = 0; p < Map::kPasses; ++p) {
      const int r = Map::row(x, p);
      stage_kv_chunk<KV, kChunks>(kv, __shfl_sync(0xffffffffu, resolved, Map::source_lane(x, p)), t0 + r < t_end, r,
                                  Map::column(x, p), loc.head_dim, k_smem, v_smem);
    }
  } else {
#pragma unroll 4
    for (int i = threadIdx.x; i < kTile * kChunks; i += kThreads) {
      const int r = i / kChunks;
      const std::int64_t t = t0 + r;
      stage_kv_chunk<KV, kChunks>(kv, loc.offset(loc.fetch(t < t_end ? t : t0)), t < t_end, r, i - r * kChunks,
                                  loc.head_dim, k_smem, v_smem);  // t0 < t_end: a mapped row for the tail
    }
  }
}

// Where a finished row's state goes: the output (one chunk) or its chunk's partial state; d: the
// row length, the runtime head dim.
__device__ __forceinline__ std::int64_t partial_state(const RowBlockWork& w, int row) {
  return w.partial + static_cast<std::int64_t>(row - w.item.row_begin) * w.splits + w.split;
}
__device__ __forceinline__ float* state_o(const RowAttentionArgs& a, const RowBlockWork& w, int row, int d) {
  return w.splits == 1 ? a.o + static_cast<std::int64_t>(row) * d : a.partial_o + partial_state(w, row) * d;
}
__device__ __forceinline__ float* state_lse(const RowAttentionArgs& a, const RowBlockWork& w, int row) {
  return w.splits == 1 ? a.lse + row : a.partial_lse + partial_state(w, row);
}

// Where a finished row's output goes and the sink it adds, for the merge (merge_rows): plain rows
// write output row = row and add no sink, and compile to what the merge was before the attention
// variants (kActive false: no hook is called). The variant kernels pass VariantRowOutput
// (kernels/row_attention_variant.cuh): a q_len > 1 item's row maps to its query token's output
// row, and a sink logit (natural log, -inf: none) joins the row's denominator.
struct PlainRowOutput {
  static constexpr bool kActive = false;
  __device__ __forceinline__ int row(int r) const { return r; }
  __device__ __forceinline__ float sink(int) const { return -INFINITY; }
};

// The few-row fold of merge_rows: thread t takes (row, float4 column) pairs t + p x kThreads
// (p < kPairs, those below `pairs`; pair i is row row0 + i / kCols, column i % kCols) and folds each
// pair's n splits in batches of kMergeFoldLoads / kPairs, every LSE and partial of a batch loaded
// before any is used: one L2 round trip per batch (kernels/row_merge_model.hpp counts them). Per
// batch the max is taken first and the weights are independent, so the fold is no serial chain of
// exponentials (one rescale per batch): a running max per split measured slower at 32 splits
// (H100, commit d0f853a; docs/history/kernel-notes.md, "Where the grouped decode's time goes: a
// fixed cost, not the stream").
// Out: where a row's output goes and the sink it adds (PlainRowOutput above; merge_rows).
template <int kPairs, int kThreads, class Out>
__device__ __forceinline__ void fold_row_pairs(const RowAttentionArgs& a, int n, std::int64_t base, int row0, int pairs,
                                               int kCols, const Out& out) {
  constexpr int kBatch = kMergeFoldLoads / kPairs;
  const int h = a.head_dim;
  const float* lse_row[kPairs];
  const float4* po_row[kPairs];
  bool valid[kPairs];
  float m[kPairs], sum[kPairs];
  float4 acc[kPairs];
#pragma unroll
  for (int p = 0; p < kPairs; ++p) {
    const int i = static_cast<int>(threadIdx.x) + p * kThreads;
    valid[p] = i < pairs;
    const int r = valid[p] ? i / kCols : 0, c = valid[p] ? i - r * kCols : 0;
    lse_row[p] = a.partial_lse + base + static_cast<std::int64_t>(r) * n;
    po_row[p] = reinterpret_cast<const float4*>(a.partial_o + (base + static_cast<std::int64_t>(r) * n) * h) + c;
    m[p] = -INFINITY;
    sum[p] = 0.f;
    if constexpr (Out::kActive) {  // the sink as a first state of weight 1 at its own logit
      const float z = valid[p] ? out.sink(row0 + r) : -INFINITY;
      if (z != -INFINITY) m[p] = z, sum[p] = 1.f;
    }
    acc[p] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  if (!valid[0]) return;  // pair t + p x kThreads is valid only if pair t is: nothing to fold
  for (int s0 = 0; s0 < n; s0 += kBatch) {
    float l[kPairs][kBatch];
    float4 v[kPairs][kBatch];
#pragma unroll
    for (int p = 0; p < kPairs; ++p)
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const bool in = valid[p] && s0 + j < n;
        l[p][j] = in ? lse_row[p][s0 + j] : -INFINITY;
        v[p][j] = in ? po_row[p][static_cast<std::int64_t>(s0 + j) * kCols] : make_float4(0.f, 0.f, 0.f, 0.f);
      }
#pragma unroll
    for (int p = 0; p < kPairs; ++p) {
      float m_new = m[p];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) m_new = fmaxf(m_new, l[p][j]);
      if (m_new == -INFINITY) continue;  // every split so far empty (or past n): nothing to add
      const float shrink = expf(m[p] - m_new);  // m = -inf: 0, and nothing was summed yet
      acc[p].x *= shrink, acc[p].y *= shrink, acc[p].z *= shrink, acc[p].w *= shrink;
      sum[p] *= shrink;
      m[p] = m_new;
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const float e = expf(l[p][j] - m[p]);  // an empty split (lse -inf) weighs 0
        acc[p].x = fmaf(e, v[p][j].x, acc[p].x), acc[p].y = fmaf(e, v[p][j].y, acc[p].y);
        acc[p].z = fmaf(e, v[p][j].z, acc[p].z), acc[p].w = fmaf(e, v[p][j].w, acc[p].w);
        sum[p] += e;
      }
    }
  }
#pragma unroll
  for (int p = 0; p < kPairs; ++p) {
    if (!valid[p]) continue;
    const int i = static_cast<int>(threadIdx.x) + p * kThreads, r = i / kCols, c = i - r * kCols;
    const bool empty = m[p] == -INFINITY || sum[p] == 0.f;
    const float inv = empty ? 0.f : 1.f / sum[p];
    reinterpret_cast<float4*>(a.o + static_cast<std::int64_t>(out.row(row0 + r)) * h)[c] =
        make_float4(acc[p].x * inv, acc[p].y * inv, acc[p].z * inv, acc[p].w * inv);
    if (c == 0) a.lse[out.row(row0 + r)] = empty ? -INFINITY : m[p] + logf(sum[p]);
  }
}

// Folds the n split partials of rows [row0, row0 + nrows) into their outputs, all rows at once
// (partials: row row0 + i's states at state base + i x n, base the state of row0's chunk 0):
// the rows' split LSEs go to shared memory (scratch, scratch_floats floats of the block's free
// dynamic shared memory), one warp per row turns them into weights, then every (row, 16-byte
// column) sums its splits with several loads in flight. Folding one row at a time
// (merge_split_states per row) cost two dependent L2 round trips and three barriers per row: a
// shared prefix of 64 rows x 4 splits took more than twice as long with it (H100,
// decode-row-probe, commits d708e6b and cf8bc3f; docs/history/kernel-notes.md, "ncu on row
// attention, the split merge and a wide tiling"). Rows whose splits do not fit the scratch fall back
// to that per-row fold.
template <int D, int kThreads, class Out = PlainRowOutput>
__device__ __forceinline__ void merge_rows(const RowAttentionArgs& a, int n, std::int64_t base, int row0, int nrows,
                                           float* scratch, int scratch_floats, const Out& out = Out{}) {
  const int h = a.head_dim;
  const int kCols = h / 4;  // float4 columns of a row of the runtime head dim (<= D)
  constexpr int kWarps = kThreads / 32;
  // Few rows (grouped decode): one or two (row, float4 column) pairs per thread, folding their
  // splits with kMergeFoldLoads LSEs and partials loaded together (fold_row_pairs). Row blocks of
  // more than threads / (h / 4) rows (a GQA group of 7 or 8 at d 128 on 128 threads) took the
  // many-row fold below, 8 loads in flight a thread and the LSEs staged first: twice the round
  // trips at any split count (the model: kernels/row_merge_model.hpp).
  const int all_pairs = nrows * kCols;
  if (all_pairs <= kThreads) {
    fold_row_pairs<1, kThreads>(a, n, base, row0, all_pairs, kCols, out);
    return;
  }
  // Two pairs a thread only in 128-thread blocks at D >= 128 (groups 5-8 at d 128 on the narrow
  // tiling): compiled into every kernel, it took the D 64 narrow kernel from 128 to 139 registers
  // and made the wide BF16 D 128 kernel spill (nvcc 13.0, -Xptxas -v, sm_90).
  if constexpr (merge_folds_two_pairs(kThreads, D)) {
    if (all_pairs <= 2 * kThreads) {
      fold_row_pairs<2, kThreads>(a, n, base, row0, all_pairs, kCols, out);
      return;
    }
  }
  const int per_pass = scratch_floats / (n + 2);
  if (per_pass < 1) {
    for (int r = row0; r < row0 + nrows; ++r) {
      const std::int64_t s0 = base + static_cast<std::int64_t>(r - row0) * n;
      merge_split_states<D, kThreads>(a.partial_o + s0 * h, a.partial_lse + s0, n,
                                      a.o + static_cast<std::int64_t>(out.row(r)) * h, a.lse + out.row(r), h);
    }
    if constexpr (Out::kActive) {  // the sinks rescale the merged rows: o x e^(lse - lse'), lse' = log(e^lse + e^z)
      __syncthreads();
      const int cols = h / 4;
      for (int i = threadIdx.x; i < nrows * cols; i += kThreads) {
        const int r = row0 + i / cols, c = i % cols;
        const float z = out.sink(r), l = a.lse[out.row(r)];
        if (z == -INFINITY) continue;
        const float f = l == -INFINITY ? 0.f : expf(l - fmaxf(l, z)) / (expf(l - fmaxf(l, z)) + expf(z - fmaxf(l, z)));
        float4* o4 = reinterpret_cast<float4*>(a.o + static_cast<std::int64_t>(out.row(r)) * h) + c;
        const float4 v = *o4;
        *o4 = make_float4(v.x * f, v.y * f, v.z * f, v.w * f);
      }
      __syncthreads();
      for (int r = row0 + threadIdx.x; r < row0 + nrows; r += kThreads) {
        const float z = out.sink(r), l = a.lse[out.row(r)];
        if (z != -INFINITY) a.lse[out.row(r)] = fmaxf(l, z) + logf(expf(l - fmaxf(l, z)) + expf(z - fmaxf(l, z)));
      }
    }
    return;
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Rows relative to row0: row0 + i's chunk s is float4 column c of po[(i x n + s) x kCols + c].
  const float4* po = reinterpret_cast<const float4*>(a.partial_o + base * h);
  for (int first = row0; first < row0 + nrows; first += per_pass) {
    const int rows = min(per_pass, row0 + nrows - first);
    float* w = scratch;             // (rows, n): split LSEs, then weights exp(lse - m)
    float* row_m = w + rows * n;    // (rows)
    float* row_sum = row_m + rows;  // (rows)
    // The pass's partial LSEs are one contiguous run: a row's n states are adjacent, rows follow.
    const float* lse_src = a.partial_lse + base + static_cast<std::int64_t>(first - row0) * n;
    // kMergeLseBatch loads in flight a thread (the scratch is a generic pointer: left to the
    // compiler, each load waited for the store before it).
    for (int i0 = threadIdx.x; i0 < rows * n; i0 += kMergeLseBatch * kThreads) {
      float x[kMergeLseBatch];
#pragma unroll
      for (int b = 0; b < kMergeLseBatch; ++b) x[b] = i0 + b * kThreads < rows * n ? lse_src[i0 + b * kThreads] : 0.f;
#pragma unroll
      for (int b = 0; b < kMergeLseBatch; ++b)
        if (i0 + b * kThreads < rows * n) w[i0 + b * kThreads] = x[b];
    }
    __syncthreads();
    // Each row's max, weights exp(lse - m) and sum: a thread per row over few splits, a warp per row
    // over many. A warp's row is two five-step shuffle reductions, one long dependent chain; with
    // many rows and few splits (Falcon-7B's 71 rows x 2 splits at 64 x 1K: several rows a warp)
    // those chains were the largest share of the merge's instructions (ncu; docs/kernels/rows_mma.md,
    // "MQA at d 64"), where a thread's own loop over two splits is a handful. Compiled at D 64
    // only: the wide D 128 kernels sit at the register limit, and with it ptxas spilled in the
    // BF16 one (nvcc 13.0, -Xptxas -v, sm_90).
    if (D <= 64 && n <= kMergeRowStatsThreadMaxSplits) {
      for (int r = threadIdx.x; r < rows; r += kThreads) {
        float m = -INFINITY;
        for (int s = 0; s < n; ++s) m = fmaxf(m, w[r * n + s]);
        float z = -INFINITY;  // the row's sink logit, as below
        if constexpr (Out::kActive) z = out.sink(first + r), m = fmaxf(m, z);
        float sum = 0.f;
        for (int s = 0; s < n; ++s) {
          const float e = m == -INFINITY ? 0.f : expf(w[r * n + s] - m);  // an empty split weighs 0
          w[r * n + s] = e;
          sum += e;
        }
        if constexpr (Out::kActive)
          if (z != -INFINITY) sum += expf(z - m);
        row_m[r] = m, row_sum[r] = sum;
      }
    } else {
      for (int r = warp; r < rows; r += kWarps) {
        float m = -INFINITY;
        for (int s = lane; s < n; s += 32) m = fmaxf(m, w[r * n + s]);
#pragma unroll
        for (int off = 16; off > 0; off /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
        float z = -INFINITY;  // the row's sink logit: in the max before the weights, in the sum after
        if constexpr (Out::kActive) z = out.sink(first + r), m = fmaxf(m, z);
        float sum = 0.f;
        for (int s = lane; s < n; s += 32) {
          const float e = m == -INFINITY ? 0.f : expf(w[r * n + s] - m);  // an empty split weighs 0
          w[r * n + s] = e;
          sum += e;
        }
#pragma unroll
        for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        if constexpr (Out::kActive)
          if (z != -INFINITY) sum += expf(z - m);
        if (lane == 0) row_m[r] = m, row_sum[r] = sum;
      }
    }
    __syncthreads();
    // (row, column) pairs: pair i is row i / kCols, float4 column i % kCols.
    const int pairs = rows * kCols;
    const auto finish = [&](int i, float4 acc) {
      const int r = i / kCols, c = i - r * kCols;
      const float sum = row_sum[r];
      const bool empty = row_m[r] == -INFINITY || sum == 0.f;
      const float inv = empty ? 0.f : 1.f / sum;
      reinterpret_cast<float4*>(a.o + static_cast<std::int64_t>(out.row(first + r)) * a.head_dim)[c] =
          make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
      if (c == 0) a.lse[out.row(first + r)] = empty ? -INFINITY : row_m[r] + logf(sum);
    };
    const auto partial = [&](int i, int s) {
      const int r = i / kCols, c = i - r * kCols;
      return po[(static_cast<std::int64_t>(first - row0 + r) * n + s) * kCols + c];
    };
    {
      // Many rows (a shared prefix), few splits: two pairs per thread, 4 splits each in flight.
      for (int i0 = threadIdx.x; i0 < pairs; i0 += 2 * kThreads) {
        const int i1 = min(i0 + kThreads, pairs - 1);  // a clamped duplicate is loaded, not written
        const int r0 = i0 / kCols, r1 = i1 / kCols;
        float4 acc0 = make_float4(0.f, 0.f, 0.f, 0.f), acc1 = acc0;
#pragma unroll 4
        for (int s = 0; s < n; ++s) {
          const float4 v0 = partial(i0, s), v1 = partial(i1, s);
          const float w0 = w[r0 * n + s], w1 = w[r1 * n + s];
          acc0.x = fmaf(w0, v0.x, acc0.x), acc0.y = fmaf(w0, v0.y, acc0.y);
          acc0.z = fmaf(w0, v0.z, acc0.z), acc0.w = fmaf(w0, v0.w, acc0.w);
          acc1.x = fmaf(w1, v1.x, acc1.x), acc1.y = fmaf(w1, v1.y, acc1.y);
          acc1.z = fmaf(w1, v1.z, acc1.z), acc1.w = fmaf(w1, v1.w, acc1.w);
        }
        finish(i0, acc0);
        if (i0 + kThreads < pairs) finish(i1, acc1);
      }
    }
    __syncthreads();  // the scratch is refilled by the next pass
  }
}

// Work stealing's counter of (item, row block): the uniform grid's gridDim.x is num_items x
// row_blocks, the length of the merge counters it follows. (Kept out of RowAttentionArgs: a larger
// argument struct made ptxas spill 20 bytes in the wide FP16 D 128 kernel, which never steals.)
__device__ __forceinline__ unsigned* steal_counter(const RowAttentionArgs& a, int item_index, int row_block) {
  return a.counters + gridDim.x + static_cast<std::int64_t>(item_index) * a.row_blocks + row_block;
}

// After every thread stored its rows' partials: the last of the item's w.splits chunk blocks of
// (item, row block) to finish merges the rows [row0, row0 + nrows) (release/acquire through the
// counter, as in flash_decode.cuh's fused merge) and resets the counter for the next launch.
// scratch: the block's dynamic shared memory, free by now (merge_rows).
// steal: the blocks took tiles from steal_counter, which the last one resets too.
// out: where the merged rows go and their sinks (PlainRowOutput: row = row, none).
template <int D, int kThreads, class Out = PlainRowOutput>
__device__ __forceinline__ void merge_if_last(const RowAttentionArgs& a, const RowBlockWork& w, int row0, int nrows,
                                              float* scratch, int scratch_floats, bool steal = false,
                                              const Out& out = Out{}) {
  // Merged by the separate kernel: no counter to count on, unless stealing's pool counter needs
  // the last block's reset. (The variant kernels always fuse: the separate kernel has no Out.)
  if (w.splits == 1 || (!a.fused_merge && !steal)) return;
  __shared__ bool last;
  // The barrier orders every thread's partial stores before thread 0's release (PTX release is
  // cumulative over what the barrier made it observe), and the acquiring add of the last block
  // orders the partial reads after all of them, so no thread needs its own fence: one L2 round
  // trip (the add) where a fence per thread and then the add were two.
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned* counter = a.counters + static_cast<std::int64_t>(w.item_index) * a.row_blocks + w.row_block;
    unsigned before;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(before) : "l"(counter) : "memory");
    last = before == static_cast<unsigned>(w.splits) - 1;
    // Every split of (item, row block) has counted, so every take from its pool came before
    // (each block's takes returned before its add, which releases them): both reset for the next launch.
    if (last) {
      *counter = 0;
      if (steal) *steal_counter(a, w.item_index, w.row_block) = 0;
    }
  }
  __syncthreads();
  if (!last || !a.fused_merge) return;
  merge_rows<D, kThreads>(a, w.splits, partial_state(w, row0) - w.split, row0, nrows, scratch, scratch_floats, out);
}

}  // namespace decode_bench::device
