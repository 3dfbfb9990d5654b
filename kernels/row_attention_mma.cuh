#pragma once
// Tensor-core row attention (FP16 / BF16 / FP8 storage): mma.sync m16n8k16, FP32 accumulation.
//
// A block holds rows_per_block query rows of one item and streams one token split of the item's
// K/V through shared memory (cp.async, 2 or 3 stages of 64-token tiles), each tile read from global
// memory once for all the block's rows. Two tilings (template parameters, chosen by the planner):
//   narrow: 4 warps of one 16-row tile each, rows_per_block = 16 x WR (WR x WT = 4 warps, WR from
//           the planner at run time). Grouped decode (<= 16 rows) is 1 x 4: all warps share one row
//           tile and split the tokens; 64 rows are 4 x 1: warps own row tiles and share every tile.
//   wide:   8 warps of two 16-row tiles each (FP16 / BF16, D <= 128), rows_per_block 64 / 128 / 256
//           as 2 x 4, 4 x 2 or 8 x 1 warps: each K / V fragment loaded from shared memory feeds two
//           mma, and each staged tile serves 4x the rows, which cuts the instructions per mma of the
//           compute-bound shared-prefix phase (ncu, commit cf8bc3f: 8.7 instructions per mma, one
//           warp per scheduler issuing every 3 cycles, 23% of the tensor roof).
// Per tile and warp, in groups of 64 tokens (narrow) or 32 (wide, so the S accumulators of two row
// tiles fit beside O):
//   S (16 x n) = Q K^T   by mma, Q pre-scaled by softmax_scale * log2(e) (log2-domain scores)
//   online softmax on the accumulator fragments (row max / sum over the quad of lanes that hold a
//   row; O rescaled only when a row's max moved)
//   O (16 x D) += P V    P re-packed from the S accumulators into A fragments of the storage type
// At the end the WT warps of a row tile merge their (m, l, O) through shared memory and the block
// writes each row's state (or its split partial; the last split block merges, row_attention_common).
//
// Precision (harness/verify.cpp: |o - ref| <= 1e-3 sum w|v|): FP16 rounds q and P to 11
// significant bits (unit roundoff 2^-11), well inside the tolerance. BF16 keeps 8 (2^-8 relative
// per weight): with two tokens the P rounding alone is ~2e-3 of w|v|. So for BF16 q and P are
// split into hi + lo bf16 parts (x = hi + lo to 16 bits) and each product is two mmas (hi and lo
// against the exact K / V values), giving FP16-like accuracy at twice the mma count; the mma
// work is far below the memory time in decode, and the prefix roof for BF16 is half FP16's.
//
// Packed split (BF16 / FP8, a block of one 16-row tile holding at most 8 rows: grouped decode with
// a group of at most 8): the lo parts go into rows 8..15 of the same A operand instead of a second
// one, so one mma yields both products. The thread that holds row g's accumulators (c0, c1) also
// holds row g + 8's (c2, c3): S of row g is their sum, and P's hi and lo parts go into the A
// registers of rows g and g + 8 of the same thread, so O's rows g + 8 collect the lo products and
// are added to rows g at the end. The mma count per tile is FP16's: the hi + lo pair had made a
// BF16 block's math longer than its share of the stream at one block per SM (16 x 4K, H100,
// commit 75635a1, against two blocks per SM; docs/history/kernel-notes.md, "Where the grouped
// decode's time goes: a fixed cost, not the stream").
//
// FP8 (E4M3 / E5M2, value = stored x per-KV-head scale): tiles stay FP8 bytes in shared memory and
// widen exactly to FP16 B fragments (kernels/row_attention_fp8.cuh); the FP16 mma runs on them.
// The reference reads the same stored bytes, so harness/verify.cpp holds FP8 to FP32's 1e-5: q and
// P are split hi + lo FP16 parts as for BF16 (22 significant bits), q pre-multiplied by 16 and P
// by 256 (powers of two, undone in FP32) so that the lo parts stay FP16 normals. One item is one KV
// head: the K scale multiplies its scores, the V scale its output, in FP32. The variant twins scale
// the scores before the soft-cap, which acts on the true logit; with the cap's MUFU tanh an FP8
// point is held to a tolerance of its own (harness/verify.hpp).
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/log2_domain.cuh"
#include "kernels/mma_sync.cuh"
#include "kernels/row_attention_common.cuh"
#include "kernels/row_attention_variant.cuh"

namespace decode_bench::device {

// 2^x on the special-function unit, subnormal results flushed to zero. exp2f adds a range check
// and two multiplies around the same instruction (FSETP, FMUL x 2 per call: FSETP 3.3% and FMUL
// 12.2% of the prefix phase's instructions, with the O rescale, in ncu at commit cf8bc3f,
// git show 9372013:results/reference/probe/h100-cf8bc3f-ncu-prefix-narrow-N256-P8K-sass-summary.txt); arguments here are <= 0 (scores minus
// the running max) and weights below 2^-126 of the largest count for nothing in an FP32 sum.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// One online-softmax step of a row whose scores a quad of lanes holds: mx is this lane's max of the
// step's scores (reduced over the quad here). The reference max m_run moves only when a score
// exceeds it by more than `slack` (log2 domain); base is the max to subtract from this step's
// scores and alpha the factor that rescales the row's O and l (l_run is rescaled here).
__device__ __forceinline__ void advance_row_max(float mx, float slack, float& m_run, float& l_run, float& base,
                                                float& alpha) {
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
  const bool move = mx > m_run + slack;  // -inf + slack = -inf
  const float m_new = move ? mx : m_run;
  base = m_new == -INFINITY ? 0.f : m_new;  // nothing seen yet: exp2(-inf - 0) = 0, no NaN
  alpha = move ? fast_exp2(m_run - base) : 1.f;
  m_run = m_new;
  l_run *= alpha;
}

// Shared-memory byte offsets of the 16-byte chunks 2 kk + b (kk = 0 .. kChunks / 2 - 1) of
// swizzled rows (chunk c of row r at c ^ (r & 7): kv_chunk_slot, and Q alike), for a lane whose
// ldmatrix rows all have r & 7 == lane & 7 (every operand row here is a multiple of 8 plus
// lane & 7). The XOR touches only the low 3 bits of the chunk index, so chunk 2 kk + b sits at
// 8 (kk / 4) + ((2 (kk % 4) + b) ^ (lane & 7)): four per-lane offsets, the rest immediates once
// kk is unrolled. Computed at each use instead, the swizzle put 3-5 integer instructions in front
// of every ldmatrix (SASS of the tile loops at commit 34ba5b4, docs/history/kernel-notes.md).
// kKeep: the offsets are made opaque to the optimiser, so they stay in registers: left
// transparent, ptxas recomputed the four from lane and row in front of every ldmatrix again (4
// instructions each) rather than keep them. The kernel says where they are not kept.
template <bool kKeep>
struct SwizzledChunks {
  std::uint32_t off[4];
  // row: the lane's first row (row & 7 == lane & 7); kChunks: 16-byte chunks per row.
  __device__ __forceinline__ SwizzledChunks(int row, int kChunks, int b, int lane) {
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t x = static_cast<std::uint32_t>(row * kChunks + ((2 * j + b) ^ (lane & 7))) * 16u;
      if constexpr (kKeep) asm volatile("mov.b32 %0, %1;" : "=r"(off[j]) : "r"(x));
      else off[j] = x;
    }
  }
  __device__ __forceinline__ std::uint32_t at(int kk) const {
    return off[kk & 3] + 128u * static_cast<std::uint32_t>(kk >> 2);
  }
};

// kWarpsT warps, each owning kMT row tiles of 16 rows (kMT = 2: every K/V fragment loaded from
// shared memory serves two mma, and each staged tile serves 16 x kMT x kWarpsT rows).
template <class KV, int D, int kWarpsT = 4, int kMT = 1>
struct RowMmaTraits {
  using T = typename KV::value_type;
  using Ops = MmaStorage<T>;
  static constexpr int kWarps = kWarpsT;
  static constexpr int kWarpRows = 16 * kMT;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kTile = 64;                    // tokens per stage
  static constexpr int kTileBytes = kTile * D * static_cast<int>(sizeof(T));  // one of K, V
  static constexpr int kQParts = Ops::kSplit ? 2 : 1; // hi (+ lo) copies of Q
  static constexpr int kMaxRows = kWarpRows * kWarps;
  // Three stages where they fit beside Q of kMaxRows rows within the opt-in limit (227 KiB, less
  // 8 KiB for the static shared memory of the merge): FP16 D = 128 is 32 KiB a stage; the wide
  // BF16 tiling's 256 rows of Q hi + lo (128 KiB) leave room for two.
  static constexpr std::size_t kQBytesMax = static_cast<std::size_t>(kQParts) * kMaxRows * D * 2;
  static constexpr int kMaxStages =
      2 * kTileBytes >= 64 * 1024 || 3 * 2 * static_cast<std::size_t>(kTileBytes) + kQBytesMax > 219 * 1024 ? 2 : 3;
  static constexpr int kChunks = D / 8;               // 16-byte chunks per row of Q (FP16) and of FP16/BF16 K/V
  static constexpr int kKvChunks = D * static_cast<int>(sizeof(T)) / 16;  // per K/V row (FP8: D / 16)
  // Sub-tiles of 16 tokens scored before one online-softmax step: 64 tokens with one row tile per
  // warp, 32 with two (the S accumulators of two row tiles x 64 tokens would not fit next to O).
  static constexpr int kGroup = 4 / kMT;
  static_assert(kMT == 1 || (kMT == 2 && !Ops::kFp8 && D <= 128), "two row tiles: FP16 / BF16, D <= 128");
  static constexpr std::size_t pipe_bytes(int stages) { return static_cast<std::size_t>(stages) * 2 * kTileBytes; }
  // Dynamic shared memory: the K/V stages, then Q (rows_per_block x D per part); the epilogue
  // reuses it for every warp's (O, m, l): kWarps x kWarpRows x (D + 2) floats, and 4 weights per row.
  static constexpr std::size_t epilogue_bytes() {
    return (static_cast<std::size_t>(kWarps) * kWarpRows * (D + 2) + static_cast<std::size_t>(kMaxRows) * 4) *
           sizeof(float);
  }
  static constexpr std::size_t shared_bytes(int rows_per_block, int stages) {
    const std::size_t main = pipe_bytes(stages) + static_cast<std::size_t>(kQParts) * rows_per_block * D * 2;
    return main > epilogue_bytes() ? main : epilogue_bytes();
  }
};

// The wide tiling (kernels/row_attention_launch.cuh takes it for items of more than 64 rows).
template <class KV, int D>
using RowMmaWideTraits = RowMmaTraits<KV, D, 8, 2>;

// kPacked: the packed split (header), compiled as a kernel of its own: chosen at run time inside
// the tile loop, the same packing measured slower than no packing at all (BF16 16 x 4K at one
// block per SM; H100, commit b613bd9; docs/history/kernel-notes.md, "The packed split: BF16 at
// FP16's mma count"): the planner launches it for blocks of one 16-row tile of at most 8 rows.
// kSteal: the work-stealing twin (RowAttentionPlan::steal_pool; FP16 / BF16, D 128, narrow or
// packed): the uniform grid's splits of an item each stream their static range of the item's first
// steal_static_1024 / 1024 of tiles (whole tiles per split), then take the rest from steal_counter
// one tile at a time. A twin rather than a run-time switch: the switch's code in the plain kernel
// measured slower on unsplit grouped decodes (64 x 1K FP16, contiguous and paged; H100,
// decode-row-probe, commit 2ef3078 against f9daa3b; docs/history/kernel-notes.md, "Work stealing
// among a split item's blocks").
// kVariant: the attention variants (kernels/row_attention_variant.cuh; `variant` is read only then):
// q_len x group rows an item, a window, logits soft-cap and sinks, decode items on the uniform grid
// (narrow and wide tilings, FP8 narrow only; neither packed nor stealing), launched as
// row_attention_mma_variant_kernel.
// Off, not a line of it is compiled in, and row_attention_mma_kernel keeps its four arguments; the
// twins are compiled in translation units of their own (kernels/instantiate/row_attention_variant_*.cu).
template <class KV, int D, int kWarpsT, int kMT, bool kPacked, bool kSteal, bool kVariant>
__device__ __forceinline__ void row_attention_mma_body(const KV& kv, const RowAttentionArgs& args,
                                                       const FastDivmod& page_div, const int steal_static_1024,
                                                       const RowAttentionVariant& variant) {
  using Tr = RowMmaTraits<KV, D, kWarpsT, kMT>;
  using Ops = typename Tr::Ops;
  using T = typename Tr::T;
  constexpr int kTile = Tr::kTile, kChunks = Tr::kChunks, kKvChunks = Tr::kKvChunks, kWarps = Tr::kWarps;
  constexpr int kWarpRows = Tr::kWarpRows, kGroup = Tr::kGroup;
  const int stages = args.stages;  // 2 .. Tr::kMaxStages K/V tiles in shared memory
  extern __shared__ __align__(128) unsigned char smem[];
  mark_block(args.timeline, BlockMark::start);

  // The block's item, row block and token chunk (the uniform grid or a work-list entry).
  static_assert(!kVariant || (!kPacked && !kSteal), "variants: the narrow and wide tilings");
  const RowBlockWork work = kVariant ? locate_variant_block_work<kTile>(args, variant) : locate_block_work<kTile>(args);
  const ItemView& item = work.item;
  const int row0 = item.row_begin + work.row_block * args.rows_per_block;
  const int nrows = min(args.rows_per_block, item.row_end - row0);
  if (nrows <= 0) return;  // the item has fewer rows than the widest one: nothing to do (whole block)
  // Split s takes one contiguous chunk of whole tiles (split_range). Taking turns tile by tile, as
  // flash_decode does, measured no better here (H100, 32/8 heads d = 128, 1 x 64K and BF16 16 x 4K;
  // decode-row-probe, commit d17227e; docs/history/kernel-notes.md, "Row attention: tensor-core
  // grouped decode and the shared-prefix phase (2026-11-23)", run 2).
  // Work stealing (kSteal): the block streams tiles own_first .. own_first + own - 1 of the whole
  // item (its static range), then the pool's tiles from pool_base on, one per take from the
  // counter, until they run out. Without it, own = num_tiles: the split's range.
  static_assert(!kSteal || (kWarpsT == 4 && kMT == 1 && D == 128 && sizeof(T) == 2), "steal: FP16 / BF16 D 128, narrow");
  const bool steal = kSteal && args.entries == nullptr && work.splits > 1;
  const std::int64_t t_begin = steal ? item.token_begin : work.t_begin;
  const std::int64_t t_end = steal ? item.token_end : work.t_end;
  const int num_tiles = static_cast<int>((t_end - t_begin + kTile - 1) / kTile);  // steal: the item's
  int own = num_tiles, own_first = 0, pool_base = 0;
  unsigned* pool_counter = nullptr;
  if (steal) {
    own = static_cast<int>(static_cast<std::int64_t>(num_tiles) * steal_static_1024 / 1024 / work.splits);
    own_first = work.split * own;
    pool_base = work.splits * own;
    pool_counter = steal_counter(args, work.item_index, work.row_block);
  }
  // The pool tile of step j sits in pool_ring[j & 3]: thread 0 takes it during step j - stages -
  // kTakeAhead (or before the loop) and stores it at the end of step j - stages, so it is read at
  // steps j - stages + 1 (staging) and j (use), and overwritten at the end of step j + 4 - stages > j
  // (stages <= 3). A take a single step ahead stalled thread 0, and with it the block, on every pool
  // tile: its L2 round trip under a saturated read stream outlasted a tile's math at one block per
  // SM (1 x 64K FP16 contiguous, slower the more was stolen; H100, decode-row-probe, commit
  // 2ef3078; docs/history/kernel-notes.md, "Work stealing among a split item's blocks").
  constexpr int kTakeAhead = 2;
  __shared__ int pool_ring[4];
  const auto tile_of = [&](int j) { return j < own ? own_first + j : steal ? pool_ring[j & 3] : num_tiles; };
  const auto tile_start = [&](int i) { return t_begin + static_cast<std::int64_t>(i) * kTile; };

  // Warps are WR x WT: warp (wr, wt) owns rows [wr * kWarpRows, + kWarpRows) of the block and the
  // wt-th part (sub tokens) of every tile.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wr_count = args.rows_per_block / kWarpRows, wt_count = kWarps / wr_count;
  const int wr = warp / wt_count, wt = warp - wr * wt_count;
  const int sub = kTile / wt_count;  // tokens of each tile this warp takes: 16, 32 or 64
  const int nsub = sub / 16;
  // Packed split (header): q and P lo parts in rows 8..15 of the A operands.
  static_assert(!kPacked || (Ops::kSplit && kMT == 1 && kWarpsT == 4), "packing: BF16 / FP8, one row tile");
  if (kPacked && (wr_count != 1 || nrows > 8)) __trap();  // the planner's contract (plan_row_attention)

  const std::uint32_t smem_base = shared_address(smem);
  const std::uint32_t q_smem = smem_base + static_cast<std::uint32_t>(Tr::pipe_bytes(stages));
  const std::uint32_t q_part_bytes = static_cast<std::uint32_t>(args.rows_per_block) * D * 2;

  const RowLocator<KV> loc(kv, item.seq, item.kv_head, page_div);
  // Paged rows resolved once per warp (stage_kv_tile) in the narrow tiling up to D 128: at D 256,
  // with the swizzled offsets kept (SwizzledChunks), its registers made ptxas spill 16 bytes.
  constexpr bool kResolveRowsOnce = kWarpsT == 4 && D <= 128;
  const auto k_stage = [&](int s) { return smem_base + static_cast<std::uint32_t>(s) * 2u * Tr::kTileBytes; };
  // Thread 0's takes in flight: pending[i] is step tile + stages + i's pool tile (-1: a static step).
  int pending[kTakeAhead] = {};
  const auto take = [&](int j) { return j >= own ? pool_base + static_cast<int>(atomicAdd(pool_counter, 1u)) : -1; };
  if (steal) {
    if (threadIdx.x == 0) {
      for (int j = own; j < stages; ++j) pool_ring[j & 3] = take(j);
#pragma unroll
      for (int i = 0; i < kTakeAhead; ++i) pending[i] = take(stages + i);
    }
    if (own < stages) __syncthreads();  // block-uniform: pool tiles among the first steps
  }
  for (int s = 0; s < stages - 1; ++s) {
    const int ti = kSteal ? tile_of(s) : s;
    if (ti < num_tiles) stage_kv_tile<KV, D, kTile, Tr::kThreads, kResolveRowsOnce>(kv, loc, tile_start(ti), t_end, k_stage(s),
                                                                   k_stage(s) + Tr::kTileBytes);
    cp_async_commit();
  }

  // Q: rows_per_block x D, scaled into the log2 domain, stored as hi (+ lo) parts, swizzled like
  // the K/V tiles. Padding rows are zero (their scores are 0; they are never written out), and so
  // are dims past the head dim (q rows are head_dim floats; those K/V dims are zero-filled too).
  // Loaded after the first K/V stages are issued, kQBatch chunks per thread at a time, all loads of
  // a batch in flight together (one chunk per round trip was 16 dependent loads for a 256-row
  // block); measured no change outside noise (N 256 P 1K and P 32K, decode-row-probe, commits
  // f6c74ad and d874af7; docs/history/kernel-notes.md, "ncu on row attention, the split merge and
  // a wide tiling").
  constexpr int kQBatch = 4;
  const int q_chunks = args.rows_per_block * kChunks;
  for (int i0 = threadIdx.x; i0 < q_chunks; i0 += kQBatch * Tr::kThreads) {
    float x[kQBatch][8];
#pragma unroll
    for (int b = 0; b < kQBatch; ++b) {
      const int i = i0 + b * Tr::kThreads;
      const int r = i / kChunks, c = i - r * kChunks;
#pragma unroll
      for (int e = 0; e < 8; ++e) x[b][e] = 0.f;
      if (i < q_chunks && r < nrows) {
        const int row = row0 + r;
        // Variant decode items map rows to (B, q_len, H_q); explicit items (variant or not) read
        // q through the row map, as a plain kernel does.
        const std::int64_t qrow = kVariant && args.items == nullptr ? variant_row_output(args, variant, item).row(row)
                                  : args.row_q != nullptr                ? args.row_q[row]
                                                                         : row;
        if constexpr (Ops::kFp8) {
          // Slots 8 (c & 1) .. + 7 of k16 step c / 2 hold the dims the FP8 K fragments pair them with.
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            const int d = q_dim_of_slot(c >> 1, 8 * (c & 1) + 2 * j);  // even: d, d + 1 both below h or not
            if (d < args.head_dim) {
              const float2 v = *reinterpret_cast<const float2*>(args.q + qrow * args.head_dim + d);
              x[b][2 * j] = v.x;
              x[b][2 * j + 1] = v.y;
            }
          }
        } else if (c * 8 < args.head_dim) {
          const float4* src = reinterpret_cast<const float4*>(args.q + qrow * args.head_dim + c * 8);
          const float4 u = src[0], w = src[1];
          x[b][0] = u.x; x[b][1] = u.y; x[b][2] = u.z; x[b][3] = u.w;
          x[b][4] = w.x; x[b][5] = w.y; x[b][6] = w.z; x[b][7] = w.w;
        }
      }
    }
#pragma unroll
    for (int b = 0; b < kQBatch; ++b) {
      const int i = i0 + b * Tr::kThreads;
      if (i >= q_chunks) break;
      const int r = i / kChunks, c = i - r * kChunks;
      const float q_mul = args.q_scale * Ops::kQBoost;
      std::uint32_t hi[4], lo[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float u = x[b][2 * j] * q_mul, w = x[b][2 * j + 1] * q_mul;
        hi[j] = Ops::pack(u, w);
        lo[j] = split_lo<Ops>(u, w, hi[j]);
      }
      const std::uint32_t dst = q_smem + static_cast<std::uint32_t>(r * kChunks + (c ^ (r & 7))) * 16u;
      if (kPacked && r >= 8) continue;  // rows 8..15 hold the lo parts of rows 0..7 (same swizzle: r & 7)
      asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(dst), "r"(hi[0]), "r"(hi[1]), "r"(hi[2]), "r"(hi[3]));
      if constexpr (Ops::kSplit) {
        const std::uint32_t lo_dst = kPacked ? dst + 8u * kChunks * 16u : dst + q_part_bytes;
        asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(lo_dst), "r"(lo[0]), "r"(lo[1]), "r"(lo[2]),
                     "r"(lo[3]));
      }
    }
  }

  // Per-thread fragment state: rows g = lane / 4 and g + 8 of each of the warp's row tiles.
  const int g = lane / 4, tq = lane % 4;
  float o_acc[kMT][D / 8][4];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int n = 0; n < D / 8; ++n) o_acc[mt][n][0] = o_acc[mt][n][1] = o_acc[mt][n][2] = o_acc[mt][n][3] = 0.f;
  float m_run[kMT][2], l_run[kMT][2];
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) m_run[mt][0] = m_run[mt][1] = -INFINITY, l_run[mt][0] = l_run[mt][1] = 0.f;
  const bool active = wr * kWarpRows < nrows;  // a warp of padding rows only skips the math

  // Variants: where the rows' outputs go, each of this thread's rows' visible positions, the
  // positions between which no row masks (tiles wholly inside skip the per-row mask), the cap.
  using Out = std::conditional_t<kVariant, VariantRowOutput, PlainRowOutput>;
  Out out{};
  int vis_lo[kMT][2] = {}, vis_hi[kMT][2] = {};
  std::int64_t unmasked_lo = 0, unmasked_hi = 0;
  float cap_log2 = 0.f, inv_cap_log2 = 0.f;
  if constexpr (kVariant) {
    out = variant_row_output(args, variant, item);
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const RowVisible v = row_visible(out, variant, item, row0 + wr * kWarpRows + mt * 16 + g + 8 * h);
        vis_lo[mt][h] = v.lo;
        vis_hi[mt][h] = v.hi;
      }
    unmasked_lo = visible_range(item.token_end, variant.q_len, variant.q_len - 1, variant.window).begin;
    unmasked_hi = item.token_end - variant.q_len + 1;
    if (variant.logits_soft_cap > 0.f) {
      cap_log2 = variant.logits_soft_cap * kLog2e;
      inv_cap_log2 = 1.f / cap_log2;
    }
  }

  // ldmatrix lane addresses (row / chunk offsets within a 16 x 16 operand block). Rows: Q's
  // q_row0 + 16 mt, K's k_row0 + 16 x sub-tile, V's v_row0 + 16 x sub-tile (sub = kTile / WT is a
  // multiple of 8, so every row is lane & 7 modulo 8: SwizzledChunks).
  const int q_row0 = wr * kWarpRows + (lane & 7) + ((lane >> 3) & 1) * 8;
  const int k_row0 = wt * sub + (lane & 7) + ((lane >> 4) << 3);
  const int v_row0 = wt * sub + (lane & 7) + ((lane >> 3) & 1) * 8;
  // Kept in registers except where that cost occupancy or spills (ptxas -v, sm_90): the narrow
  // D 64 tiling (a block per SM), FP8 (its K / V loaders have their own addressing, and Q's four
  // offsets made D 256 spill 436 bytes) and the wide BF16 tiling (20 bytes over paged K/V).
  constexpr bool kKeep = !(D == 64 && kMT == 1) && !Ops::kFp8 && !(Ops::kSplit && kMT == 2);
  const SwizzledChunks<kKeep> q_sw(q_row0, kChunks, lane >> 4, lane);
  const SwizzledChunks<kKeep> k_sw(k_row0, kChunks, (lane >> 3) & 1, lane);
  const SwizzledChunks<kKeep> v_sw(v_row0, kChunks, lane >> 4, lane);
  constexpr std::uint32_t kRows16Bytes = 16u * kChunks * 16u;  // 16 rows of a Q / K / V operand
  // Q's 16 x 16 block of row tile mt and k16 step kk.
  const auto q_addr = [&](int mt, int kk) { return q_smem + q_sw.at(kk) + kRows16Bytes * mt; };

  // FP8: this item's (one KV head's) dequantization scales, with the widening's unit scale and the
  // q / P boosts folded in: scores x k_mul, the normalised output x out_mul.
  float k_mul = 1.f, out_mul = 1.f;
  if constexpr (Ops::kFp8) {
    k_mul = kv_scale(kv.k_scale, item.kv_head) * fp8_pair_unit_scale<T>() / Ops::kQBoost;
    out_mul = kv_scale(kv.v_scale, item.kv_head) * fp8_pair_unit_scale<T>() / Ops::kPBoost;
  }

  // Timeline only (kernels/block_timeline.hpp): when the first tile has arrived; the loop's own
  // wait then finds it there. A mark inside the loop (on its first pass) cost about 1% at 64 x 1K
  // with the timeline off (H100, decode-row-probe, commit 8314ce4 against bbaa27f).
  if (args.timeline != nullptr) {
    if (stages >= 3) cp_async_wait<1>();
    else cp_async_wait<0>();
    __syncthreads();
    mark_block(args.timeline, BlockMark::first_tile);
  }
  // Step `tile` uses the tile staged stages - 1 steps earlier (stage tile % stages) and stages the
  // one of step tile + stages - 1; the steps end where the item's (or the split's) tiles do.
  for (int tile = 0; kSteal || tile < num_tiles; ++tile) {
    if (stages >= 3) cp_async_wait<1>();
    else cp_async_wait<0>();
    __syncthreads();  // tile `tile` is visible; everyone is done with the stage refilled below
    // The wide kernel keeps the plain loop: the same code as before stealing existed.
    const int current = kSteal ? tile_of(tile) : tile;
    if (kSteal && current >= num_tiles) break;  // block-uniform (the ring was written before the barrier)
    // The pool tile of step tile + stages + kTakeAhead, taken now; step tile + stages's, taken
    // kTakeAhead steps ago, is stored at this step's end.
    int taken = -1;
    if (steal && threadIdx.x == 0) taken = take(tile + stages + kTakeAhead);
    {
      const int step = tile + stages - 1, next = kSteal ? tile_of(step) : step;
      if (next < num_tiles)
        stage_kv_tile<KV, D, kTile, Tr::kThreads, kResolveRowsOnce>(kv, loc, tile_start(next), t_end,
                                                  k_stage(step % stages), k_stage(step % stages) + Tr::kTileBytes);
      cp_async_commit();
    }
    if (!active) continue;  // never warp 0 (it holds row 0), so never the taking thread
    const std::uint32_t ks = k_stage(tile % stages), vs = ks + Tr::kTileBytes;
    const std::int64_t tile_t0 = tile_start(current);
    // Only the split's last tile can hold tokens past its end: full tiles skip the masking.
    // Variants: also tiles reaching below a row's window or past a row's own position.
    const bool partial_tile =
        tile_t0 + kTile > t_end || (kVariant && (tile_t0 < unmasked_lo || tile_t0 + kTile > unmasked_hi));

#pragma unroll
    for (int c0 = 0; c0 < 4; c0 += kGroup) {
      if (c0 >= nsub) break;
      // S = Q K^T over sub-tiles c0 .. c0 + kGroup - 1 of 16 tokens (two n8 accumulators each).
      float s[kMT][kGroup][2][4];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int c = 0; c < kGroup; ++c)
#pragma unroll
          for (int j = 0; j < 2; ++j) s[mt][c][j][0] = s[mt][c][j][1] = s[mt][c][j][2] = s[mt][c][j][3] = 0.f;
      if constexpr (Ops::kFp8) {
#pragma unroll
        for (int span = 0; span < D / 64; ++span) {
          std::uint32_t a[4][4], a_lo[4][4];
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const std::uint32_t qa = q_addr(0, 4 * span + i);
            ldmatrix_x4(a[i], qa);
            if constexpr (!kPacked) ldmatrix_x4(a_lo[i], qa + q_part_bytes);
          }
#pragma unroll
          for (int c = 0; c < kGroup; ++c) {
            if (c0 + c < nsub) {
#pragma unroll
              for (int j = 0; j < 2; ++j) {
                std::uint32_t b[4][2];
                load_k_fragments<T, kKvChunks>(ks, wt * sub + (c0 + c) * 16 + j * 8 + g, span, tq, b);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                  Ops::mma(s[0][c][j], a[i], b[i][0], b[i][1]);
                  if constexpr (!kPacked) Ops::mma(s[0][c][j], a_lo[i], b[i][0], b[i][1]);
                }
              }
            }
          }
        }
      } else {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
          std::uint32_t a[kMT][4], a_lo[kMT][4];
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt) {
            const std::uint32_t qa = q_addr(mt, kk);
            ldmatrix_x4(a[mt], qa);
            if constexpr (Ops::kSplit && !kPacked) ldmatrix_x4(a_lo[mt], qa + q_part_bytes);
          }
#pragma unroll
          for (int c = 0; c < kGroup; ++c) {
            if (c0 + c < nsub) {
              std::uint32_t b[4];
              ldmatrix_x4(b, ks + k_sw.at(kk) + kRows16Bytes * (c0 + c));
#pragma unroll
              for (int mt = 0; mt < kMT; ++mt) {
                Ops::mma(s[mt][c][0], a[mt], b[0], b[1]);
                Ops::mma(s[mt][c][1], a[mt], b[2], b[3]);
                if constexpr (Ops::kSplit && !kPacked) {
                  Ops::mma(s[mt][c][0], a_lo[mt], b[0], b[1]);
                  Ops::mma(s[mt][c][1], a_lo[mt], b[2], b[3]);
                }
              }
            }
          }
        }
      }

      // Online softmax in the log2 domain. Tokens past the split's end score -inf.
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        // Packed: row g's score is its hi (c0, c1) plus lo (c2, c3) products. Rows g + 8 hold no
        // row of their own: the softmax runs on row g's elements only (kRowHalves), and rows
        // g + 8 take row g's max, rescale and weights, so O's lo rows stay in step. (The first
        // packed kernel, commit c00bc78, copied the scores into c2, c3 and ran the whole softmax
        // on both halves: 4 exponentials, 4 maxima and two shuffles a step for nothing.)
        constexpr int kRowHalves = kPacked ? 1 : 2;
        if constexpr (kPacked) {
#pragma unroll
          for (int c = 0; c < kGroup; ++c)
#pragma unroll
            for (int j = 0; j < 2; ++j) {
              s[mt][c][j][0] += s[mt][c][j][2];
              s[mt][c][j][1] += s[mt][c][j][3];
            }
        }
        // The soft-cap in a loop of its own behind one test a tile: tested per score inside the
        // loop below, the test and its branch ran on every score of every variant point, capped
        // or not. It acts on the true logit: FP8's per-head K scale (k_mul) comes first, so the
        // variant twins apply it here (capped or not) and the mask loop only in the plain kernels.
        // These loops repeat the mask loop's nesting rather than share a walker with it: walked by
        // a lambda, the mask and weights loops changed ptxas's code of every plain kernel, and the
        // cap's loop that of the FP16 / BF16 twins (sm_90 cubins of row_attention_paged_fp16.cu,
        // row_attention_contiguous_fp8_e4m3.cu and row_attention_variant_fp16.cu, nvcc 13.0).
        if constexpr (kVariant) {
          if (cap_log2 > 0.f) {
#pragma unroll
            for (int c = 0; c < kGroup; ++c) {
              if (c0 + c < nsub) {
#pragma unroll
                for (int j = 0; j < 2; ++j)
#pragma unroll
                  for (int e = 0; e < 2 * kRowHalves; ++e) {
                    if constexpr (Ops::kFp8) s[mt][c][j][e] *= k_mul;
                    s[mt][c][j][e] = soft_cap_log2(s[mt][c][j][e], cap_log2, inv_cap_log2);
                  }
              }
            }
          } else if constexpr (Ops::kFp8) {
#pragma unroll
            for (int c = 0; c < kGroup; ++c) {
              if (c0 + c < nsub) {
#pragma unroll
                for (int j = 0; j < 2; ++j)
#pragma unroll
                  for (int e = 0; e < 2 * kRowHalves; ++e) s[mt][c][j][e] *= k_mul;
              }
            }
          }
        }
        float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
        for (int c = 0; c < kGroup; ++c) {
          if (c0 + c < nsub) {
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
              for (int e = 0; e < 2 * kRowHalves; ++e) {
                if constexpr (Ops::kFp8 && !kVariant) s[mt][c][j][e] *= k_mul;
                if (partial_tile) {
                  const std::int64_t t = tile_t0 + wt * sub + (c0 + c) * 16 + j * 8 + 2 * tq + (e & 1);
                  bool masked = t >= t_end;
                  if constexpr (kVariant) masked = masked || t < vis_lo[mt][e >> 1] || t >= vis_hi[mt][e >> 1];
                  if (masked) s[mt][c][j][e] = -INFINITY;
                }
                mx[e >> 1] = fmaxf(mx[e >> 1], s[mt][c][j][e]);
              }
          }
        }
        // m_run is the row's reference max, not necessarily its true max: it moves only when a
        // score exceeds it by more than kSlack (log2 domain), so weights stay <= 2^kSlack (FP16
        // and BF16 P hold that exactly as well as weights <= 1; FP8's P is pre-multiplied by
        // kPBoost = 256 and keeps the exact max). The state (m, l, O) is exact for any reference.
        constexpr float kSlack = Ops::kFp8 ? 0.f : 8.f;
        float base[2], alpha[2];
#pragma unroll
        for (int h = 0; h < kRowHalves; ++h) advance_row_max(mx[h], kSlack, m_run[mt][h], l_run[mt][h], base[h], alpha[h]);
        if constexpr (kPacked) base[1] = base[0], alpha[1] = alpha[0];  // O's lo rows rescale with row g
        // Rescale O only when some row's reference max moved: with the slack, after the first
        // tiles almost never (FMUL was 12% of the prefix phase's instructions at cf8bc3f; the
        // slack measured no change outside noise at d874af7).
        if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
          for (int n = 0; n < D / 8; ++n) {
            o_acc[mt][n][0] *= alpha[0];
            o_acc[mt][n][1] *= alpha[0];
            o_acc[mt][n][2] *= alpha[1];
            o_acc[mt][n][3] *= alpha[1];
          }
        }
        // P in place of S (weights relative to the new max).
#pragma unroll
        for (int c = 0; c < kGroup; ++c) {
          if (c0 + c < nsub) {
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
              for (int e = 0; e < 2 * kRowHalves; ++e) {
                const float p = fast_exp2(s[mt][c][j][e] - base[e >> 1]);
                l_run[mt][e >> 1] += p;
                s[mt][c][j][e] = p * Ops::kPBoost;  // l_run summed the unboosted weights
              }
          }
        }
      }

      // O += P V, 16 tokens (one k16 step) per sub-tile; each V fragment serves every row tile.
#pragma unroll
      for (int c = 0; c < kGroup; ++c) {
        if (c0 + c < nsub) {
          std::uint32_t a[kMT][4], a_lo[kMT][4];
#pragma unroll
          for (int mt = 0; mt < kMT; ++mt) {
            const float(&p)[2][4] = s[mt][c];
            a[mt][0] = Ops::pack(p[0][0], p[0][1]);
            a[mt][1] = Ops::pack(p[0][2], p[0][3]);
            a[mt][2] = Ops::pack(p[1][0], p[1][1]);
            a[mt][3] = Ops::pack(p[1][2], p[1][3]);
            if constexpr (kPacked) {
              // Rows g + 8 (registers 1 and 3) carry row g's lo parts.
#pragma unroll
              for (int j = 0; j < 2; ++j) {
                a[mt][2 * j + 1] = split_lo<Ops>(p[j][0], p[j][1], a[mt][2 * j]);
              }
            } else if constexpr (Ops::kSplit) {
#pragma unroll
              for (int w = 0; w < 4; ++w) {
                const int j = w >> 1, e = (w & 1) * 2;
                a_lo[mt][w] = split_lo<Ops>(p[j][e], p[j][e + 1], a[mt][w]);
              }
            }
          }
          if constexpr (Ops::kFp8) {
#pragma unroll
            for (int blk = 0; blk < D / 32; ++blk) {
              std::uint32_t b[4][2];
              load_v_fragments<T, kKvChunks>(vs, wt * sub + (c0 + c) * 16, blk, g, tq, b);
#pragma unroll
              for (int q = 0; q < 4; ++q) {
                Ops::mma(o_acc[0][4 * blk + q], a[0], b[q][0], b[q][1]);
                if constexpr (!kPacked) Ops::mma(o_acc[0][4 * blk + q], a_lo[0], b[q][0], b[q][1]);
              }
            }
          } else {
#pragma unroll
            for (int dn = 0; dn < D / 16; ++dn) {
              std::uint32_t b[4];
              ldmatrix_x4_trans(b, vs + v_sw.at(dn) + kRows16Bytes * (c0 + c));
#pragma unroll
              for (int mt = 0; mt < kMT; ++mt) {
                Ops::mma(o_acc[mt][2 * dn], a[mt], b[0], b[1]);
                Ops::mma(o_acc[mt][2 * dn + 1], a[mt], b[2], b[3]);
                if constexpr (Ops::kSplit && !kPacked) {
                  Ops::mma(o_acc[mt][2 * dn], a_lo[mt], b[0], b[1]);
                  Ops::mma(o_acc[mt][2 * dn + 1], a_lo[mt], b[2], b[3]);
                }
              }
            }
          }
        }
      }
    }
    if (steal && threadIdx.x == 0) {
      if (pending[0] >= 0) pool_ring[(tile + stages) & 3] = pending[0];
#pragma unroll
      for (int i = 0; i + 1 < kTakeAhead; ++i) pending[i] = pending[i + 1];
      pending[kTakeAhead - 1] = taken;
    }
  }
  // Takes still in flight here are answered before this block's count in merge_if_last: the
  // count's release orders thread 0's earlier atomics before it, so the last block's reset of the
  // pool counter comes after every take of every split.
  cp_async_wait<0>();
  __syncthreads();  // the stages and Q are free: reuse them for the cross-warp merge
  mark_block(args.timeline, BlockMark::loop_end);
  if constexpr (kPacked) {  // O of row g: its hi rows plus the lo rows g + 8 (rows >= 8 never written out)
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      o_acc[0][n][0] += o_acc[0][n][2];
      o_acc[0][n][1] += o_acc[0][n][3];
    }
    // Rows g + 8 kept no (m, l) of their own in the tile loop; the epilogue reads row g's.
    m_run[0][1] = m_run[0][0];
    l_run[0][1] = l_run[0][0];
  }

  // Each warp's unnormalised (O, m, l) of its kWarpRows rows: O at [warp][kWarpRows][D], then m, l.
  float* red_o = reinterpret_cast<float*>(smem);
  float* red_m = red_o + kWarps * kWarpRows * D;
  float* red_l = red_m + kWarps * kWarpRows;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l_run[mt][h] += __shfl_xor_sync(0xffffffffu, l_run[mt][h], 1);
      l_run[mt][h] += __shfl_xor_sync(0xffffffffu, l_run[mt][h], 2);
    }
  if (active) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      const int wrow = warp * kWarpRows + mt * 16 + g;  // this thread's first row in red_o
      if constexpr (Ops::kFp8) {
        // Columns 2tq, 2tq + 1 of n8 blocks 4 blk + 0..3 are dims 32 blk + 8 tq + 0..3 and + 4..7 (o_dim_of).
#pragma unroll
        for (int blk = 0; blk < D / 32; ++blk) {
          const float(&o0)[4] = o_acc[mt][4 * blk];
          const float(&o1)[4] = o_acc[mt][4 * blk + 1];
          const float(&o2)[4] = o_acc[mt][4 * blk + 2];
          const float(&o3)[4] = o_acc[mt][4 * blk + 3];
          float* r0 = red_o + wrow * D + o_dim_of(4 * blk, 2 * tq);
          reinterpret_cast<float4*>(r0)[0] = make_float4(o0[0], o1[0], o2[0], o3[0]);
          reinterpret_cast<float4*>(r0)[1] = make_float4(o0[1], o1[1], o2[1], o3[1]);
          reinterpret_cast<float4*>(r0 + 8 * D)[0] = make_float4(o0[2], o1[2], o2[2], o3[2]);
          reinterpret_cast<float4*>(r0 + 8 * D)[1] = make_float4(o0[3], o1[3], o2[3], o3[3]);
        }
      } else {
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
          float* r0 = red_o + wrow * D + n * 8 + 2 * tq;
          *reinterpret_cast<float2*>(r0) = make_float2(o_acc[mt][n][0], o_acc[mt][n][1]);
          *reinterpret_cast<float2*>(r0 + 8 * D) = make_float2(o_acc[mt][n][2], o_acc[mt][n][3]);
        }
      }
      if (tq == 0) {
        red_m[wrow] = m_run[mt][0];
        red_m[wrow + 8] = m_run[mt][1];
        red_l[wrow] = l_run[mt][0];
        red_l[wrow + 8] = l_run[mt][1];
      }
    }
  }
  __syncthreads();

  // Row r of the block sits in warp row tile r / kWarpRows, held by warps (r / kWarpRows) * WT + 0 .. WT - 1.
  // Per row, once: the weights of its WT warps' states with the normaliser folded in
  // (2^(m_w - m) x out_mul / l) and its LSE. Computing them for every (row, float4 column) was 29%
  // of the prefix phase's instructions at N 64 P 1K (ncu, commit fe97a8d).
  float* row_weight = red_l + kWarps * kWarpRows;  // (rows_per_block, 4): WT <= 4
  for (int r = threadIdx.x; r < nrows; r += Tr::kThreads) {
    const int w0 = (r / kWarpRows) * wt_count, rr = r % kWarpRows;
    float m = -INFINITY;
    for (int w = 0; w < wt_count; ++w) m = fmaxf(m, red_m[(w0 + w) * kWarpRows + rr]);
    // Variants, an unsplit item: the row's sink (log2 domain) joins the max here and the sum below
    // (a split item's sinks join in the merge, merge_if_last).
    float sink2 = -INFINITY;
    if constexpr (kVariant) {
      if (work.splits == 1) sink2 = out.sink(row0 + r) * kLog2e;
      m = fmaxf(m, sink2);
    }
    float sc[4] = {0.f, 0.f, 0.f, 0.f}, l = 0.f;
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      if (w < wt_count && m != -INFINITY) {
        const float mw = red_m[(w0 + w) * kWarpRows + rr];
        sc[w] = mw == -INFINITY ? 0.f : exp2f(mw - m);
        l += sc[w] * red_l[(w0 + w) * kWarpRows + rr];
      }
    }
    if constexpr (kVariant)
      if (sink2 != -INFINITY) l += exp2f(sink2 - m);
    const float inv = l > 0.f ? out_mul / l : 0.f;
#pragma unroll
    for (int w = 0; w < 4; ++w) row_weight[r * 4 + w] = sc[w] * inv;
    if constexpr (kVariant)
      *(work.splits == 1 ? args.lse + out.row(row0 + r) : state_lse(args, work, row0 + r)) =
          l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
    else
      *state_lse(args, work, row0 + r) = l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
  }
  __syncthreads();
  // Only the head dim's columns are written (red_o holds real dims, FP8 included: o_dim_of).
  const int cols = args.head_dim / 4;
  for (int i = threadIdx.x; i < nrows * cols; i += Tr::kThreads) {
    const int r = i / cols, d4 = i - r * cols;
    const int w0 = (r / kWarpRows) * wt_count, rr = r % kWarpRows;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int w = 0; w < wt_count; ++w) {
      const float f = row_weight[r * 4 + w];
      const float4 ow = reinterpret_cast<const float4*>(red_o + ((w0 + w) * kWarpRows + rr) * D)[d4];
      acc.x += f * ow.x;
      acc.y += f * ow.y;
      acc.z += f * ow.z;
      acc.w += f * ow.w;
    }
    if constexpr (kVariant)
      reinterpret_cast<float4*>(work.splits == 1 ? args.o + static_cast<std::int64_t>(out.row(row0 + r)) * args.head_dim
                                                 : state_o(args, work, row0 + r, args.head_dim))[d4] = acc;
    else
      reinterpret_cast<float4*>(state_o(args, work, row0 + r, args.head_dim))[d4] = acc;
  }
  merge_if_last<D, Tr::kThreads>(args, work, row0, nrows, reinterpret_cast<float*>(smem),
                                 static_cast<int>(Tr::shared_bytes(args.rows_per_block, stages) / sizeof(float)), steal,
                                 out);
  mark_block(args.timeline, BlockMark::end);
}

template <class KV, int D, int kWarpsT = 4, int kMT = 1, bool kPacked = false, bool kSteal = false>
__global__ void __launch_bounds__(32 * kWarpsT, 1) row_attention_mma_kernel(const KV kv, const RowAttentionArgs args,
                                                                          const FastDivmod page_div,
                                                                          const int steal_static_1024) {
  allow_dependent_grid();  // a separate split merge may launch (kernels/dependent_launch.cuh)
  row_attention_mma_body<KV, D, kWarpsT, kMT, kPacked, kSteal, false>(kv, args, page_div, steal_static_1024,
                                                                      RowAttentionVariant{});
}

// The attention variants' twin (kVariant above): narrow (4, 1) or wide (8, 2) tiling (FP8: narrow).
template <class KV, int D, int kWarpsT, int kMT>
__global__ void __launch_bounds__(32 * kWarpsT, 1)
    row_attention_mma_variant_kernel(const KV kv, const RowAttentionArgs args, const FastDivmod page_div,
                                     const int steal_static_1024, const RowAttentionVariant variant) {
  row_attention_mma_body<KV, D, kWarpsT, kMT, false, false, true>(kv, args, page_div, steal_static_1024, variant);
}

}  // namespace decode_bench::device
