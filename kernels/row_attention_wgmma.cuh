#pragma once
// Row attention on Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): FP16 K/V, compiled for head
// dims 64 and 128 (the head dims up to each, tail dims zero), the shape of the shared-prefix phase
// (tens to hundreds of query rows on one KV head's token range) and of MQA's many query heads on
// one KV head (Falcon-7B: 71 at d 64); and BF16 K/V in blocks of one warpgroup with the packed
// split below (grouped decodes: a few query rows a KV head). Included only by
// kernels/instantiate/row_attention_wgmma_{fp16,bf16}.cu, compiled for sm_90a alone
// (kernels/CMakeLists.txt).
//
// Why a second tensor-core kernel. The mma.sync kernel (row_attention_mma.cuh) reached well under
// half the FP16 tensor roof on the prefix phase (N 256, P 32K, H100, commit 5b8dd7b): ncu counted
// several instructions per mma and one or two warps per scheduler, so its issue slots, not its
// tensor cores, set the pace (docs/history/kernel-notes.md, "The shared-prefix phase on Hopper's
// warpgroup MMA"). One wgmma m64n64k16 does the work of 32 mma.sync
// m16n8k16 and reads its B operand from shared memory itself: no ldmatrix, no per-fragment addresses.
//
// A block is kWG warpgroups of 128 threads; warpgroup w owns rows [64 w, 64 w + 64) of the block
// and streams every tile of the block's token range (cp.async stages of kTile tokens: 64, or 128 in
// the d 64 two-warpgroup kernel's second tiling). Per tile, at the compiled head dim D:
//   S (64 x kTile) = Q K^T    D / 16 wgmma m64n{kTile}k16, Q from registers, K from shared memory (K-major)
//   online softmax on S       the accumulator layout is mma.sync's: warp w % 4 holds rows 16 (w % 4)
//                             + g and + g + 8 (g = lane / 4), columns 8 j + 2 (lane % 4) + {0, 1}
//   O (64 x D) += P V         kTile / 16 wgmma m64nDk16, P from registers (re-packed S), V from shared
//                             memory (MN-major: V rows are tokens, the reduction dimension)
// Shared memory holds K and V in the 128-byte swizzle layout wgmma reads: a 64-token x 128-dim
// FP16 tile is two 8 KiB halves (dims 0-63, 64-127; a d 64 tile is one, of kTile rows), token r's 128-byte row of
// a half at r x 128, its 16-byte chunk c at (c ^ (r & 7)) x 16; atoms of 8 rows start on 1 KiB
// boundaries.
// Descriptors (PTX ISA, "Matrix Descriptor Format", canonical layouts):
//   K-major (K as B of Q K^T): stride byte offset 1024 (8 rows x 128 B), leading offset unused; the
//     k16 step kk starts at half (kk / 4) plus (kk % 4) x 32 bytes inside the swizzled row.
//   MN-major (V as B of P V, tokens = K): leading byte offset 8192 (dims 0-63 to 64-127), stride
//     byte offset 1024 (8 tokens to the next 8); the k16 step c starts at c x 2048.
// The order of a tile j's work (kOverlap, every block but one warpgroup's at d 128): S(j), then
// P V(j - 1) with the P kept from the previous tile, both issued before the softmax of j, which
// then runs while the tensor cores do P V(j - 1) (FlashAttention-3's intra-warpgroup overlap); O's
// rescale by tile j's factor waits for that P V. Without the overlap P V(j) follows the softmax of j.
// Synchronisation: a stage is refilled only after the block barrier that follows every
// warpgroup's wait for its P V of the stage's last tile; each thread's cp.async data reach the
// async proxy that wgmma reads through by its fence.proxy.async before that barrier. With the
// overlap the stages of tiles j and j - 1 are in use during tile j, so kStages - 2 tiles are in
// flight (kAhead), against kStages - 1 without.
// Q and P are the register A operands: their fragment layout per warp is mma.sync's m16n8k16 A.
// The packed split (BF16, kPacked). BF16 keeps 8 bits of q and of the weights, too few for the 1e-3
// tolerance, so each is split x = hi + lo (lo = x - hi rounded to BF16: 16 bits together), as the
// mma.sync kernels do (row_attention_mma.cuh, "Precision"). Here the lo parts cost no instruction:
// each warp's 16 accumulator rows hold 8 query rows, thread (g, tq) puts query row 8 (warp % 4) + g's
// hi parts of q in A row g and its lo parts in A row g + 8. S's rows g and g + 8 are then the two
// halves of one row's scores, which the thread itself holds and adds; the weights go back the same
// way (hi in row g, lo in row g + 8), so O's rows g and g + 8 are the two halves of one row's
// output, added once at the end. A warpgroup serves 32 query rows; grouped decodes have 4-16.
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/log2_domain.cuh"
#include "kernels/row_attention_common.cuh"
#include "kernels/row_attention_mma.cuh"  // MmaStorage, fast_exp2, advance_row_max
#include "kernels/row_cluster_merge.cuh"
#include "kernels/wgmma_ops.cuh"  // descriptors, fences, commit and wait

namespace decode_bench::device {

template <int kWG, int D = 128, int kTileTokens = 64, bool kPacked = false>
struct RowWgmmaTraits {
  static_assert(D == 64 || D == 128, "compiled for head dims 64 and 128");
  static_assert(kTileTokens == 64 || (kTileTokens == 128 && kWG == 2 && D == 64),
                "128-token tiles for the d 64 two-warpgroup kernel only");
  static_assert(!kPacked || (kWG == 1 && kTileTokens == 64), "the packed split: one warpgroup, 64-token tiles");
  static constexpr int kD = D;
  static constexpr int kTile = kTileTokens;  // tokens per stage
  // P V of tile j - 1 issued behind S of tile j, so the softmax of j runs while the tensor cores
  // do P V (header: "Per tile"). Not for one-warpgroup blocks at d 128, which keep two blocks an SM
  // at 3 stages: the overlap holds two stages in use and would need a fourth for the same tiles in
  // flight.
  static constexpr bool kOverlap = !(kWG == 1 && D == 128);
  // 128-token tiles (MQA at d 64: half the tile chains for the same bytes) keep one tile in flight,
  // the 32 KiB that two 64-token tiles are, so the prologue asks for no more bytes than at 64.
  static constexpr int kStages = kTile == 128 ? 3 : kOverlap ? 4 : 3;
  static constexpr int kAhead = kOverlap ? kStages - 2 : kStages - 1;  // tiles copied ahead of those in use
  static constexpr int kThreads = 128 * kWG;
  static constexpr int kWarpRows = kPacked ? 8 : 16;  // query rows a warp serves
  static constexpr int kRows = 4 * kWarpRows * kWG;   // query rows a block serves
  static constexpr int kTileBytes = kTile * kD * 2;  // one of K, V: 16 KiB at d 128, 8 KiB at d 64 (64 tokens)
  static constexpr int kHalfBytes = kTile * 128;     // dims 0-63 or 64-127 of a tile
  static constexpr int kScores = kTile / 2;          // S's accumulators a thread (64 rows x kTile, FP32)
  static constexpr int kPvSteps = kTile / 16;        // k16 steps of P V (and P's A fragments)
  static constexpr int kChunks = kD / 8;             // 16-byte chunks of a row
  static constexpr int kPipeBytes = kStages * 2 * kTileBytes;
  // 1 KiB of slack to align the swizzle atoms (the dynamic window's start is not promised that).
  // Q lives in registers (the A operand of S = Q K^T), so a one-warpgroup block takes 97 KiB and
  // two fit on an SM; Q in shared memory (16 KiB a warpgroup) left one block of one warpgroup per SM
  // (H100, commit 55ac7b9). At d 64 a block takes 49 KiB.
  static constexpr std::size_t shared_bytes() { return 1024 + kPipeBytes; }
  // The streamed grid (row_attention_wgmma_stream_kernel): Q's rows in a buffer of their own after
  // the stages, since every stage then holds a tile of the stream while the next item's Q arrives.
  // Its items are grouped decodes' (sequence, KV head) pairs of at most that many query rows.
  static constexpr int kStreamRows = kRowStreamMaxRows;
  static constexpr std::size_t stream_shared_bytes() { return shared_bytes() + kStreamRows * kD * 4; }
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// One register-A wgmma (the RS form) of storage type T, FP16 or BF16: SHAPE ("m64nNk16"), the
// accumulators d (DLIST and DOPS: DB_WGMMA_D<N / 2>_LIST and _OPERANDS), A the fragments a[0..3],
// B the shared-memory descriptor b_desc, accumulate 0 overwriting d, kTransB B's transpose
// immediate; PRED and TAIL number the operands after the accumulators, whose operand list (DOPS)
// comes last.
#define DB_WGMMA_RS_ASM(TY, SHAPE, PRED, DLIST, TAIL, ...)                                         \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " PRED ", 0;\n"                                 \
               "wgmma.mma_async.sync.aligned." SHAPE ".f32." TY "." TY " " DLIST ", " TAIL ";\n}\n" \
               : __VA_ARGS__                                                                      \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(accumulate), "n"(kTransB))
#define DB_WGMMA_RS(...)                                 \
  if constexpr (std::is_same_v<T, __half>)               \
    DB_WGMMA_RS_ASM("f16", __VA_ARGS__);                 \
  else                                                   \
    DB_WGMMA_RS_ASM("bf16", __VA_ARGS__)

// d (64 x 64, FP32) (+)= A (64 x 16, T registers, mma.sync's A layout per warp) B (16 x 64), B in
// shared memory, K-major (kTransB 0: K of Q K^T) or MN-major (1: V of P V at d 64).
template <class T, int kTransB = 0>
__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[32], const std::uint32_t (&a)[4], std::uint64_t b_desc,
                                                   int accumulate) {
  DB_WGMMA_RS("m64n64k16", "%37", DB_WGMMA_D32_LIST, "{%32, %33, %34, %35}, %36, p, 1, 1, %38",
              DB_WGMMA_D32_OPERANDS(d));
}

// d (64 x 128, FP32) (+)= A (64 x 16, T registers, mma.sync's A layout per warp) B (16 x 128), B in
// shared memory, K-major (kTransB 0: K of Q K^T over a 128-token tile) or MN-major (1: V of P V at
// d 128).
template <class T, int kTransB>
__device__ __forceinline__ void wgmma_m64n128k16_rs(float (&d)[64], const std::uint32_t (&a)[4],
                                                    std::uint64_t b_desc, int accumulate) {
  DB_WGMMA_RS("m64n128k16", "%69", DB_WGMMA_D64_LIST, "{%64, %65, %66, %67}, %68, p, 1, 1, %70",
              DB_WGMMA_D64_OPERANDS(d));
}

// Where 16-byte chunk c (0-15; 0-7 at d 64) of tile row r (0 to kTile - 1) sits in a kTile x D FP16
// tile whose dims 0-63 and 64-127 are halves of kHalfBytes (header).
template <int kHalfBytes>
__device__ __forceinline__ std::uint32_t sw128_chunk(int r, int c) {
  return static_cast<std::uint32_t>((c >> 3) * kHalfBytes + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}

// Stages tokens [t0, t0 + kTile) of K and V (those >= t_end and dims >= the head dim zero-filled)
// in the swizzled layout: with kChunks = D / 8 chunks a row, thread x copies chunk x % kChunks of
// rows x / kChunks + p kThreads / kChunks.
template <class KV, int kTile, int kThreads, int kChunks>
__device__ __forceinline__ void stage_tile_sw128(const KV& kv, const RowLocator<KV>& loc, std::int64_t t0,
                                                 std::int64_t t_end, std::uint32_t k_smem, std::uint32_t v_smem) {
  constexpr int kPasses = kTile * kChunks / kThreads;
  const int c = static_cast<int>(threadIdx.x % kChunks);
  const bool in_dim = c * 8 < loc.head_dim;
  // Over pages at more than four passes a thread (one-warpgroup blocks at d 128), every pass's
  // block-table entry first, then the copies: the reads go out together and their latencies
  // overlap, where a read just before each copy let the compiler wait for one at a time (the
  // streamed grid's loop did). At four passes or fewer the compiler already issued a tile's reads
  // together, and reading them first there measured no faster (docs/kernels/rows_wgmma.md, "The
  // streamed grid"), so those kernels keep the plain loop.
  constexpr bool kTicketsFirst = is_paged_accessor<KV>::value && kPasses > 4;
  typename RowLocator<KV>::Ticket tickets[kPasses];
  if constexpr (kTicketsFirst) {
#pragma unroll
    for (int p = 0; p < kPasses; ++p) {
      const std::int64_t t = t0 + static_cast<int>(threadIdx.x) / kChunks + p * (kThreads / kChunks);
      tickets[p] = loc.fetch(t < t_end ? t : t0);
    }
  }
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int r = static_cast<int>(threadIdx.x) / kChunks + p * (kThreads / kChunks);
    const std::int64_t t = t0 + r;
    const bool in_range = t < t_end;
    const auto ticket = kTicketsFirst ? tickets[p] : loc.fetch(in_range ? t : t0);
    const std::int64_t off = loc.offset(ticket) + (in_dim ? c * 8 : 0);
    const std::uint32_t dst = sw128_chunk<kTile * 128>(r, c);
    cp_async_16B(k_smem + dst, kv.k + off, in_range && in_dim);
    cp_async_16B(v_smem + dst, kv.v + off, in_range && in_dim);
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// The kernel's parameters are the mma.sync kernels' (run_row_attention launches any of them
// alike); the fourth (work stealing's static share there) is unused: this kernel does not steal.
// Its twin kHostLength (RowAttentionPlan::uniform_len; the blocks row_attention_wgmma_table.cuh
// compiles it for: MQA's d 64 two-warpgroup blocks, the grouped decodes' one-warpgroup ones) takes in it
// the length of every sequence of a uniform grid of decode items and reads no seq_lens. The
// length is an argument of its own, not a RowAttentionArgs field: a field read by every row
// kernel changed every warpgroup-MMA kernel's code (docs/kernels/rows_wgmma.md, "The length in
// the arguments").
// At d 64 (O 32 accumulators a thread instead of 64) two blocks fit an SM's registers; the bound
// asks ptxas to keep them there. 128-token tiles (S 64 accumulators a thread) run one block an SM,
// as the split rule plans every d 64 block of this kernel.
// BF16 K/V run the packed split (header), in blocks of one warpgroup.
// kVariant: the twin of one-token attention variants (q_len 1: a window, a logits soft-cap,
// sinks; decode items on the uniform grid), its fifth argument `variant`. A window is the item's
// token range (every row is the sequence's last token, so no row masks), the cap acts on each
// score before the softmax, and a sink joins the row's denominator in the epilogue of an unsplit
// item or in the fused merge of a split one (merge_if_last's VariantRowOutput).
// kStream: the streamed grid's twin of the host-length one-warpgroup blocks at d 128
// (row_attention_wgmma_stream_kernel): block b takes items b, b + gridDim.x, ... below num_items.
template <class KV, int kWG, int D, int kTileTokens, bool kHostLength, bool kVariant, bool kStream = false>
__device__ __forceinline__ void row_attention_wgmma_body(const KV& kv, const RowAttentionArgs& args,
                                                         const FastDivmod& page_div, int host_len,
                                                         const RowAttentionVariant& variant, int num_items = 0) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(!(kHostLength && kVariant), "the host-length twin has no variants");
  static_assert(!kStream || (kHostLength && kWG == 1 && D == 128 && kTileTokens == 64),
                "the streamed grid: the grouped decodes' host-length blocks at d 128");
  using T = typename KV::value_type;
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "FP16 or BF16 K/V");
  constexpr bool kPacked = std::is_same_v<T, __nv_bfloat16>;
  using Tr = RowWgmmaTraits<kWG, D, kTileTokens, kPacked>;
  using Ops = MmaStorage<T>;
  // The accumulator rows a thread holds: h = 0 and 1 are rows g and g + 8 of its warp's 16. Two
  // query rows, or (packed) one row's hi and lo halves.
  constexpr int kRowHalves = kPacked ? 1 : 2;
  constexpr int kTile = Tr::kTile, kStages = Tr::kStages, kSteps = D / 16, kColBlocks = D / 8;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  allow_dependent_grid();  // a separate split merge may launch (kernels/dependent_launch.cuh)
  mark_block(args.timeline, BlockMark::start);

  const RowBlockWork work = kVariant      ? locate_variant_block_work<kTile>(args, variant)
                           : kHostLength ? locate_block_work_of_length<kTile>(args, host_len)
                                         : locate_block_work<kTile>(args);
  const ItemView& item = work.item;
  const int row0 = item.row_begin + work.row_block * args.rows_per_block;
  const int nrows = min(args.rows_per_block, item.row_end - row0);
  if (nrows <= 0) return;  // the item has fewer rows than the widest one (whole block)
  const std::int64_t t_begin = work.t_begin, t_end = work.t_end;
  const int num_tiles = static_cast<int>((t_end - t_begin + kTile - 1) / kTile);

  const std::uint32_t raw = shared_address(smem_raw);
  const std::uint32_t base = (raw + 1023u) & ~1023u;
  float* const scratch = reinterpret_cast<float*>(smem_raw + (base - raw));  // the stages, after the loop
  const auto k_stage = [&](int s) { return base + static_cast<std::uint32_t>(s) * 2u * Tr::kTileBytes; };

  // Q's rows in FP32 (kRows x D; rows past nrows and dims past the head dim zero-filled), copied
  // first, as a cp.async group of their own, into the stages the prologue leaves free. Read with
  // plain loads issued after the tiles' copies, q queued behind them and the block's first S
  // waited for both.
  // The streamed grid keeps Q's kStreamRows rows in their own buffer (RowWgmmaTraits).
  static_assert(Tr::kRows * D * 4 <= (kStages - Tr::kAhead) * 2 * Tr::kTileBytes, "Q fits the free stages");
  const std::uint32_t q_stage = kStream ? base + Tr::kPipeBytes : k_stage(Tr::kAhead);
  constexpr int kQRows = kStream ? Tr::kStreamRows : Tr::kRows;
  // Q's rows [first_row, first_row + rows) into q_stage (one more cp.async per thread and row chunk).
  const auto copy_q = [&](int first_row, int rows) {
    for (int i = static_cast<int>(threadIdx.x); i < kQRows * (D / 4); i += Tr::kThreads) {
      const int r = i / (D / 4), c = i % (D / 4);
      const bool valid = r < rows && 4 * c < args.head_dim;
      const float* src = args.q;
      if (valid) src += (args.row_q != nullptr ? args.row_q[first_row + r] : first_row + r) * args.head_dim + 4 * c;
      cp_async_16B(q_stage + 16 * i, src, valid);
    }
  };
  copy_q(row0, nrows);
  cp_async_commit();
  RowLocator<KV> loc(kv, item.seq, item.kv_head, page_div);  // the streamed grid moves it to each item
  for (int s = 0; s < Tr::kAhead; ++s) {
    if (s < num_tiles) stage_tile_sw128<KV, kTile, Tr::kThreads, Tr::kChunks>(kv, loc, t_begin + s * kTile, t_end, k_stage(s),
                                                          k_stage(s) + Tr::kTileBytes);
    cp_async_commit();
  }

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wg = warp / 4, g = lane / 4, tq = lane % 4;
  // The query row of the thread's accumulator rows h (0: g, 1: g + 8 of its warp's 16; packed, one
  // row for both).
  const auto query_row = [&](int h) {
    return kPacked ? Tr::kRows / kWG * wg + Tr::kWarpRows * (warp % 4) + g : 64 * wg + 16 * (warp % 4) + g + 8 * h;
  };
  // Q as the A operand of S = Q K^T, in registers for the whole range: q_frag[kk] holds rows
  // query_row(0) and query_row(1) at dims 16 kk + 2 tq, + 1 and 16 kk + 8 + 2 tq, + 1 (packed: the
  // hi parts, then the lo parts, of one row), scaled into the log2 domain, in T, from Q's copy (its
  // group in; the tiles' may be pending). Padding rows and dims past the head dim are 0. The stage Q
  // sits in is refilled only after the loop's first barrier.
  // The streamed grid's buffer holds kStreamRows rows; the rows past them are padding (0).
  std::uint32_t q_frag[kSteps][4];
  const auto build_q = [&]() {
    const float* q_s = reinterpret_cast<const float*>(smem_raw + (q_stage - raw));
    const int r0 = query_row(0);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r = kPacked ? r0 : r0 + 8 * h;
          const float2 x = kStream && r >= kQRows
                               ? make_float2(0.f, 0.f)
                               : *reinterpret_cast<const float2*>(q_s + r * D + 16 * kk + 8 * half + 2 * tq);
          if constexpr (kPacked) {
            const float a = x.x * args.q_scale, b = x.y * args.q_scale;
            const std::uint32_t hi = Ops::pack(a, b);
            q_frag[kk][2 * half + h] = h == 0 ? hi : split_lo<Ops>(a, b, hi);
          } else {
            q_frag[kk][2 * half + h] = Ops::pack(x.x * args.q_scale, x.y * args.q_scale);
          }
        }
  };
  cp_async_wait<Tr::kAhead>();
  __syncthreads();
  build_q();
  float o[4 * kColBlocks], s[Tr::kScores];
#pragma unroll
  for (int i = 0; i < 4 * kColBlocks; ++i) o[i] = 0.f;
#pragma unroll
  for (int i = 0; i < Tr::kScores; ++i) s[i] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f};

  // O += P V over the kPvSteps k16 steps of 16 tokens of the tile staged at vs (P: its A fragments).
  const auto pv = [&](std::uint32_t vs, std::uint32_t (&p_frag)[Tr::kPvSteps][4]) {
    fence_registers(o);
    wgmma_fence();
#pragma unroll
    for (int c = 0; c < Tr::kPvSteps; ++c) {
      const std::uint64_t v_desc = sw128_descriptor(vs + c * 2048u, Tr::kHalfBytes, 1024);
      if constexpr (D == 64)
        wgmma_m64n64k16_rs<T, 1>(o, p_frag[c], v_desc, 1);
      else
        wgmma_m64n128k16_rs<T, 1>(o, p_frag[c], v_desc, 1);
    }
    wgmma_commit();
  };
  const auto v_stage = [&](int tile) { return k_stage(tile % kStages) + Tr::kTileBytes; };
  // The tile's copies in, visible to every thread's wgmma, and the stage refilled below free.
  const auto begin_tile = [&]() {
    cp_async_wait<Tr::kAhead - 1>();
    fence_proxy_async_shared();  // this thread's tile copies visible to wgmma
    // Without the overlap the last tile's P V read the stage refilled below (with it, the P V
    // before, waited for at the last tile's end).
    if constexpr (!Tr::kOverlap) wgmma_wait<0>();
    __syncthreads();
  };
  // S = Q K^T over the head dim, D / 16 k16 steps (n = the tile's tokens; K-major K rows are
  // 128 bytes apart at either tile, so the descriptor is the same).
  const auto issue_s = [&](int tile) {
    const std::uint32_t ks = k_stage(tile % kStages);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      const std::uint32_t step = static_cast<std::uint32_t>((kk >> 2) * Tr::kHalfBytes + (kk & 3) * 32);
      if constexpr (kTile == 64)
        wgmma_m64n64k16_rs<T>(s, q_frag[kk], sw128_descriptor(ks + step, 16, 1024), kk > 0);
      else
        wgmma_m64n128k16_rs<T, 0>(s, q_frag[kk], sw128_descriptor(ks + step, 16, 1024), kk > 0);
    }
    wgmma_commit();
  };
  // The tile kAhead ahead into the stage freed before the barrier; issued after the tile's wgmma,
  // so the copies' address work runs while the tensor cores do.
  const auto refill = [&](int tile) {
    const int next = tile + Tr::kAhead;
    if (next < num_tiles)
      stage_tile_sw128<KV, kTile, Tr::kThreads, Tr::kChunks>(kv, loc, t_begin + static_cast<std::int64_t>(next) * kTile, t_end,
                                                      k_stage(next % kStages), k_stage(next % kStages) + Tr::kTileBytes);
    cp_async_commit();
  };
  // The variant twin's soft-cap (log2 domain, row_attention_variant.cuh): 0 when off.
  const float cap_log2 = kVariant ? variant.logits_soft_cap * kLog2e : 0.f;
  const float inv_cap_log2 = cap_log2 > 0.f ? 1.f / cap_log2 : 0.f;
  // Online softmax in the log2 domain over S (waited for): the weights in place of the scores, l,
  // and O's rescale factors (as in row_attention_mma.cuh: a reference max that moves only when a
  // score exceeds it by more than 2^8, so O is rarely rescaled; FP16 P holds weights up to 256 as
  // exactly as weights up to 1). Tokens past the range score -inf. Packed, a row's scores are its
  // hi and lo halves' sum (rows g and g + 8): the weights go to the first (s[4 j], s[4 j + 1]), and
  // rows g and g + 8 of O share its rescale factor.
  const auto softmax = [&](int tile, float (&alpha)[2]) {
    const std::int64_t tile_t0 = t_begin + static_cast<std::int64_t>(tile) * kTile;
    const bool partial_tile = tile_t0 + kTile > t_end;
    // The cap in a loop of its own behind one test a tile (row_attention_mma.cuh says why), on
    // the whole score: packed, the hi and lo halves are added here and the lo half zeroed, so the
    // loop below adds nothing to it.
    if constexpr (kVariant) {
      if (cap_log2 > 0.f) {
#pragma unroll
        for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
          for (int e = 0; e < 2 * kRowHalves; ++e) {
            if constexpr (kPacked) {
              s[4 * j + e] += s[4 * j + e + 2];
              s[4 * j + e + 2] = 0.f;
            }
            s[4 * j + e] = soft_cap_log2(s[4 * j + e], cap_log2, inv_cap_log2);
          }
      }
    }
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2 * kRowHalves; ++e) {
        if constexpr (kPacked) {
          s[4 * j + e] += s[4 * j + e + 2];
          // The lo half overwritten, not left as S wrote it: read last here, ptxas 13.0
          // serialised every wgmma of the d 64 kernels under the overlap (info C7511).
          s[4 * j + e + 2] = 0.f;
        }
        if (partial_tile && tile_t0 + 8 * j + 2 * tq + (e & 1) >= t_end) s[4 * j + e] = -INFINITY;
        mx[e >> 1] = fmaxf(mx[e >> 1], s[4 * j + e]);
      }
    constexpr float kSlack = 8.f;
    float base_m[2];
#pragma unroll
    for (int h = 0; h < kRowHalves; ++h) advance_row_max(mx[h], kSlack, m_run[h], l_run[h], base_m[h], alpha[h]);
    if constexpr (kPacked) alpha[1] = alpha[0];
#pragma unroll
    for (int i = 0; i < Tr::kScores; ++i) {
      if (((i >> 1) & 1) >= kRowHalves) continue;
      s[i] = fast_exp2(s[i] - base_m[(i >> 1) & 1]);
      l_run[(i >> 1) & 1] += s[i];
    }
  };
  // The weights as the A operand of P V's k16 step c (tokens 16 c .. 16 c + 15: n8 blocks 2 c and
  // 2 c + 1). With the overlap this waits for the P V before it, which reads a until then: ptxas
  // serialises every wgmma of a kernel that defines a wgmma's register input while one is in
  // flight (warning C7513).
  // Packed: row g + 8 takes the lo parts of row g's weights.
  const auto pack_p = [&](std::uint32_t (&a)[Tr::kPvSteps][4]) {
#pragma unroll
    for (int c = 0; c < Tr::kPvSteps; ++c) {
      if constexpr (kPacked) {
        a[c][0] = Ops::pack(s[8 * c], s[8 * c + 1]);      // row g,     tokens 2 tq, + 1: hi
        a[c][2] = Ops::pack(s[8 * c + 4], s[8 * c + 5]);  // row g,     tokens 8 + 2 tq, + 1: hi
        // split_lo's arithmetic with both hi pairs unpacked first: the order the GPU suite ran
        // (split_lo itself schedules this kernel differently).
        const float2 h0 = Ops::unpack(a[c][0]), h2 = Ops::unpack(a[c][2]);
        a[c][1] = Ops::pack(s[8 * c] - h0.x, s[8 * c + 1] - h0.y);  // row g + 8: lo
        a[c][3] = Ops::pack(s[8 * c + 4] - h2.x, s[8 * c + 5] - h2.y);
      } else {
        a[c][0] = Ops::pack(s[8 * c], s[8 * c + 1]);      // row g,     tokens 2 tq, + 1
        a[c][1] = Ops::pack(s[8 * c + 2], s[8 * c + 3]);  // row g + 8
        a[c][2] = Ops::pack(s[8 * c + 4], s[8 * c + 5]);  // row g,     tokens 8 + 2 tq, + 1
        a[c][3] = Ops::pack(s[8 * c + 6], s[8 * c + 7]);  // row g + 8
      }
      fence_fragments(a[c]);  // written before the fence
    }
  };
  const auto rescale = [&](const float (&alpha)[2]) {
    if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
      for (int n = 0; n < kColBlocks; ++n) {
        o[4 * n] *= alpha[0];
        o[4 * n + 1] *= alpha[0];
        o[4 * n + 2] *= alpha[1];
        o[4 * n + 3] *= alpha[1];
      }
    }
  };

  // Each thread's rows: query_row(h), columns 8 n + 2 tq, + 1 (packed: O's hi and lo halves added).
  // Their states go to the output (one split), the partials (the fused or separate merge), or this
  // block's shared memory, where the blocks of its cluster merge them (row_cluster_merge.cuh).
  const bool in_cluster = args.fused_merge == kClusterMerge;
  // Where the merged rows go and their sinks (identity rows for q_len 1; none in the plain kernels).
  using Out = std::conditional_t<kVariant, VariantRowOutput, PlainRowOutput>;
  Out out{};
  if constexpr (kVariant) out = variant_row_output(args, variant, item);
  static_assert((Tr::kRows * D + Tr::kRows) * 4 <= Tr::kPipeBytes, "a cluster merge's state fits the stages");
  // The rows' states of the item whose first query row is first_row, once O is complete (its P V
  // waited for).
  const auto write_rows = [&](int first_row) {
    if constexpr (kPacked) {
#pragma unroll
      for (int n = 0; n < kColBlocks; ++n) {
        o[4 * n] += o[4 * n + 2];
        o[4 * n + 1] += o[4 * n + 3];
      }
    }
#pragma unroll
    for (int h = 0; h < kRowHalves; ++h) {
      l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
      l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
      const int r = query_row(h);
      if (r >= nrows) continue;
      float l = l_run[h], m = m_run[h], o_mul = 1.f;
      if constexpr (kVariant) {
        // An unsplit item's sink (log2 domain) joins the max and the sum (a split item's joins in
        // the merge); o and l are relative to m until then.
        const float sink2 = work.splits == 1 ? out.sink(first_row + r) * kLog2e : -INFINITY;
        if (sink2 != -INFINITY) {
          const float mx = fmaxf(m, sink2);
          o_mul = exp2f(m - mx);  // 0 for a row that saw no token
          l = l * o_mul + exp2f(sink2 - mx);
          m = mx;
        }
      }
      const float inv = l > 0.f ? o_mul / l : 0.f;
      float* dst = in_cluster ? scratch + r * D : state_o(args, work, first_row + r, args.head_dim);
#pragma unroll
      for (int n = 0; n < kColBlocks; ++n)
        if (8 * n < args.head_dim)
          *reinterpret_cast<float2*>(dst + 8 * n + 2 * tq) = make_float2(o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
      if (tq == 0)
        *(in_cluster ? scratch + Tr::kRows * D + r : state_lse(args, work, first_row + r)) =
            l > 0.f ? (m + log2f(l)) * kLn2 : -INFINITY;
    }
  };

  // Timeline only (kernels/block_timeline.hpp): when the first tile has arrived; the loop's own
  // wait then finds it there (a mark inside the loop costs a branch a tile with the timeline off).
  if (args.timeline != nullptr && num_tiles > 0) {
    cp_async_wait<Tr::kAhead - 1>();
    __syncthreads();
    mark_block(args.timeline, BlockMark::first_tile);
  }
  std::uint32_t a[Tr::kPvSteps][4];  // P's A fragments (with the overlap: the previous tile's, until its P V's wait)
  float alpha[2];
  // Without the overlap, the rest of a tile's work once its S is issued and the copies ahead with
  // it: S waited for, the softmax, O's rescale, P packed and its P V issued from the tile's stage
  // (waited for at the next tile's top, or after the loop).
  const auto finish_tile = [&](int tile, int stage_tile) {
    wgmma_wait<0>();
    fence_registers(s);
    fence_registers(o);
    softmax(tile, alpha);
    rescale(alpha);
    pack_p(a);
    pv(v_stage(stage_tile), a);
  };
  if constexpr (Tr::kOverlap) {
    // Tile 0 alone (no P V behind its S), then each tile's S with the previous tile's P V behind.
    if (num_tiles > 0) {
      begin_tile();
      issue_s(0);
      refill(0);
      wgmma_wait<0>();
      fence_registers(s);
      softmax(0, alpha);
      rescale(alpha);
      pack_p(a);
    }
    for (int tile = 1; tile < num_tiles; ++tile) {
      begin_tile();
      issue_s(tile);
      pv(v_stage(tile - 1), a);
      refill(tile);
      wgmma_wait<1>();  // S; the P V behind it may still run
      fence_registers(s);
      softmax(tile, alpha);
      wgmma_wait<0>();  // the P V: O may be rescaled, and a rewritten
      fence_registers(o);
#pragma unroll
      for (int c = 0; c < Tr::kPvSteps; ++c) fence_fragments(a[c]);  // kept until the wait
      rescale(alpha);
      pack_p(a);
    }
    if (num_tiles > 0) pv(v_stage(num_tiles - 1), a);
  } else if constexpr (kStream) {
    // The block's items one after another as one stream of tiles (item n's tile t at position
    // n x num_tiles + t, in stage position % kStages): the copies kAhead positions ahead cross into
    // the next item, so no item after the first waits for its first tiles, and the next item's Q
    // is copied with the current item's last tile. Every item has num_tiles > kAhead tiles (the
    // plan streams only such; kernels/row_attention.hpp, stream_grid_blocks), so that copy comes
    // after the current item's Q was read (at its first tile's barrier or before) and the copies
    // ahead reach at most one item past the current one.
    const int blocks = static_cast<int>(gridDim.x), first = static_cast<int>(blockIdx.x);
    const int items_here = (num_items - first + blocks - 1) / blocks;
    // The block's n-th item (the uniform grid's (sequence, KV head) order): its first query row
    // and its K/V rows.
    const auto first_row_at = [&](int n) {
      const int id = first + n * blocks, seq = id / args.heads_kv;
      return seq * args.heads_q + (id - seq * args.heads_kv) * args.group;
    };
    const auto locator_at = [&](int n) {
      const int id = first + n * blocks, seq = id / args.heads_kv;
      return RowLocator<KV>(kv, seq, id - seq * args.heads_kv, page_div);
    };
    RowLocator<KV> loc_next = items_here > 1 ? locator_at(1) : loc;
    int copy_item = 0, copy_tile = Tr::kAhead;  // the next tile to copy (the prologue copied 0 .. kAhead - 1)
    int n = 0, tile = 0, first_row = row0;
    for (int pos = 0; pos < items_here * num_tiles; ++pos) {
      begin_tile();
      issue_s(pos);
      if (copy_item < items_here) {
        const std::uint32_t ks = k_stage((pos + Tr::kAhead) % kStages);
        // Chosen by value: a reference to either kept both locators in local memory.
        const RowLocator<KV> from = copy_item == n ? loc : loc_next;
        stage_tile_sw128<KV, kTile, Tr::kThreads, Tr::kChunks>(kv, from,
                                                               t_begin + static_cast<std::int64_t>(copy_tile) * kTile,
                                                               t_end, ks, ks + Tr::kTileBytes);
        if (copy_tile == num_tiles - 1 && copy_item + 1 < items_here) copy_q(first_row_at(copy_item + 1), nrows);
        if (++copy_tile == num_tiles) copy_tile = 0, ++copy_item;
      }
      cp_async_commit();
      finish_tile(tile, pos);
      if (++tile < num_tiles) continue;
      // The item's last tile: its O complete, its rows written; the next item's Q (in since this
      // tile's barrier) into registers and its state fresh.
      tile = 0;
      wgmma_wait<0>();
      fence_registers(o);
      write_rows(first_row);
      if (++n == items_here) break;
      build_q();
      first_row = first_row_at(n);
      loc = loc_next;
      if (n + 1 < items_here) loc_next = locator_at(n + 1);
#pragma unroll
      for (int i = 0; i < 4 * kColBlocks; ++i) o[i] = 0.f;
#pragma unroll
      for (int h = 0; h < 2; ++h) m_run[h] = -INFINITY, l_run[h] = 0.f;
    }
    wgmma_wait<0>();  // on every path already; without it ptxas adds one where the loop ends (info C7517)
    cp_async_wait<0>();
    mark_block(args.timeline, BlockMark::loop_end);
    mark_block(args.timeline, BlockMark::end);
    return;
  } else {
    for (int tile = 0; tile < num_tiles; ++tile) {
      begin_tile();
      issue_s(tile);
      refill(tile);
      finish_tile(tile, tile);
    }
  }
  wgmma_wait<0>();
  fence_registers(o);
  cp_async_wait<0>();
  __syncthreads();  // the stages are free: the split merge's scratch
  mark_block(args.timeline, BlockMark::loop_end);

  write_rows(row0);
  if (in_cluster)
    merge_rows_in_cluster<D, Tr::kRows, Tr::kThreads>(args, row0, nrows, scratch);
  else
    merge_if_last<Tr::kD, Tr::kThreads>(args, work, row0, nrows, scratch, Tr::kPipeBytes / static_cast<int>(sizeof(float)),
                                        false, out);
  mark_block(args.timeline, BlockMark::end);
#else
  __trap();  // compiled for sm_90a only; the planner never launches it elsewhere (wgmma_row_kernel)
#endif
}

template <class KV, int kWG, int D = 128, int kTileTokens = 64, bool kHostLength = false>
__global__ void __launch_bounds__(128 * kWG, D == 64 && kTileTokens == 64 ? 2 : 1)
    row_attention_wgmma_kernel(const KV kv, const RowAttentionArgs args, const FastDivmod page_div,
                               const int host_len) {
  row_attention_wgmma_body<KV, kWG, D, kTileTokens, kHostLength, false>(kv, args, page_div, host_len,
                                                                        RowAttentionVariant{});
}

// The streamed grid (kStream above): the grouped decodes' host-length blocks at d 128 (one
// warpgroup, 64-token tiles), gridDim.x blocks taking num_items decode items in turn, each item
// unsplit; its shared memory is RowWgmmaTraits::stream_shared_bytes.
template <class KV, int D>
__global__ void __launch_bounds__(128, 1)
    row_attention_wgmma_stream_kernel(const KV kv, const RowAttentionArgs args, const FastDivmod page_div,
                                      const int host_len, const int num_items) {
  row_attention_wgmma_body<KV, 1, D, 64, true, false, true>(kv, args, page_div, host_len, RowAttentionVariant{},
                                                            num_items);
}

// The one-token attention variants' twin (kVariant above), blocks of one warpgroup over 64-token
// tiles; the fourth argument unused.
template <class KV, int D>
__global__ void __launch_bounds__(128, D == 64 ? 2 : 1)
    row_attention_wgmma_variant_kernel(const KV kv, const RowAttentionArgs args, const FastDivmod page_div,
                                       const int unused, const RowAttentionVariant variant) {
  row_attention_wgmma_body<KV, 1, D, 64, false, true>(kv, args, page_div, unused, variant);
}

}  // namespace decode_bench::device
