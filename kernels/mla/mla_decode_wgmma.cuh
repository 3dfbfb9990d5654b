#pragma once
// The MLA decode kernel on Hopper's warpgroup MMA (wgmma.mma_async, sm_90a): FP16 and BF16 latent
// caches, 64 query rows of one sequence per block (rows past a sequence's last are zero), built for
// the compute-bound side of the ridge (h_q x q_len >= 64) and taken by the dispatch for fewer rows
// too (kernels/mla/mla_decode_wgmma.hpp, mla_prefers_wgmma). Included only by
// kernels/instantiate/mla_decode_wgmma.cu, compiled for sm_90a alone
// (kernels/CMakeLists.txt); the plan and the launch are kernels/mla/mla_decode_wgmma.hpp.
//
// Why 64 rows per block. O (64 rows x 512 values, FP32) is 128 KiB of registers, half an SM's
// register file; 128 rows would need all of it. So a block is 64 rows and 2 warpgroups that split
// O by value columns (warpgroup w owns columns 256 w .. + 255: 128 accumulators a thread), and a
// sequence's row blocks are neighbours in the grid so the second reads the tiles from L2.
//
// Two tilings (MlaWgmmaTraits<kTile>; the plan's tile_tokens picks one, DECODE_BENCH_MLA_TILE):
//   kTile 64, 2 stages: one tile in flight while another is computed
//   kTile 32, 4 stages: three tiles in flight ahead of the one computed (more bytes outstanding per
//             SM for the same shared memory), at the price of S's Q reads: N = 32 reads Q from
//             shared memory once per 32 tokens instead of once per 64
// Shared memory (1 KiB aligned; both tilings fit the 227 KiB an H100 block may take):
//   Q        64 rows x 576 in the MMA's type, 72 KiB, copied once (cp.async)
//   stages   kStages x (kTile tokens x 576): 2 x 72 KiB or 4 x 36 KiB (cp.async by warpgroup 1)
//   P        warpgroup 0's P fragments (kTile / 4 words a thread): 8 or 4 KiB
//   row      2 floats a thread of warpgroup 0: the tile's O rescale
//   inv_l    2 floats a thread of warpgroup 0: v_scale / l, at the end
// A 576-wide row is 9 panels of 64 elements (128 bytes); each panel is its rows x 128 B (Q: 64
// rows, 8 KiB; a stage: kTile rows) in the 128-byte swizzle (row r at r x 128, its 16-byte chunk c
// at (c ^ (r & 7)) x 16), the layout of kernels/row_attention_wgmma.cuh with 9 panels where that
// kernel's d128 tile has 2.
// Per tile (both warpgroups' rows are the same 64; no score work is done twice):
//   warpgroup 0: S (64 x kTile) = Q K^T, 36 wgmma m64n{kTile}k16 with both operands in shared
//                memory (K-major: A = Q, B = the tile; the k16 step kk at panel kk / 4 + (kk % 4) x
//                32 B); the online softmax on the accumulators (log2 domain, the reference max that
//                moves only by more than 2^8, as in row_attention_wgmma.cuh); P re-packed as
//                register A fragments, written with the rescale factors to shared memory, the named
//                barrier; O[:, 0:256] += P V, kTile / 16 wgmma m64n256k16 (A from registers)
//   warpgroup 1: stages the tile kStages - 1 ahead (cp.async into the stage the previous tile left),
//                waits at the named barrier, reads P and the rescale factors (its thread i holds
//                the same rows as warpgroup 0's thread i: the fragment layout depends on the warp
//                in the warpgroup and the lane only), rescales its O, O[:, 256:512] += P V
//   V is the tile's first 512 columns, MN-major B (tokens are the reduction): leading byte offset
//   one stage panel (kTile x 128 B: panel to panel, 64 value columns each), stride 1024 (8
//   tokens), the k16 step c at c x 2048.
// Synchronisation (the conventions of row_attention_wgmma.cuh): each thread of warpgroup 1 commits
// one cp.async group per tile (the prologue the first kStages - 1, each tile's top the one
// kStages - 1 ahead; empty past the end, so the count stays uniform); at each tile's top it waits
// until at most kStages - 2 groups are pending (its own copies of this tile are in), fences them
// into the async proxy, waits for its warpgroup's last P V (wgmma.wait_group 0), and the block
// meets at the tile barrier; only then is the stage of the previous tile refilled, and P's buffer
// rewritten (warpgroup 1 read the previous P before that barrier). The named barrier (id 1, 256
// threads, both warpgroups bar.sync) hands P over once a tile. Warpgroup 0 meets it with bar.sync,
// not bar.arrive: warpgroup 1 is already waiting there in almost every tile (it only refills a
// stage after the tile barrier), so the wait is free, and compute-sanitizer's racecheck then sees
// the hand-over as ordered (with bar.arrive it reported warpgroup 1's reads of P intermittently).
// Splits: FP32 partials merged by the merge kernel (run_mla_merge_splits), or, in a cluster plan
// (MlaDecodePlan::cluster_merge: 2-8 splits, each row block's splits one cluster), each block's o
// and lse staged in its stages and folded over distributed shared memory by the cluster, or, in a
// fused plan, folded by each row block's last split, or in a spread plan by all of its splits
// (kernels/mla/mla_fused_merge.cuh).
// Rounding as the mma.sync kernel's (kernels/mla/mla_decode.cuh): q (as it comes) and P in the
// MMA's type, FP32 accumulation, l over the unrounded weights, scores scaled in FP32 after the MMA;
// o rounded to T once at the end (split partials FP32).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/cp_async.cuh"
#include "kernels/dependent_launch.cuh"  // allow_dependent_grid
#include "kernels/kv_accessor.hpp"        // kv_scale
#include "kernels/log2_domain.cuh"
#include "kernels/mla/mla_args.hpp"       // MlaArgs
#include "kernels/mla/mla_fused_merge.cuh"  // mla_merge_if_last_split
#include "kernels/mla/mla_q_load.cuh"     // copy_q_rows_async
#include "kernels/mla/mla_shape.hpp"      // mla_visible_tokens
#include "kernels/row_attention_mma.cuh"  // MmaStorage (pack), fast_exp2, advance_row_max
#include "kernels/row_cluster_merge.cuh"  // fold_states_in_cluster
#include "kernels/row_locator.cuh"        // RowLocator: the block table read a tile ahead
#include "kernels/store_converted.cuh"    // store_pair, store_quad
#include "kernels/wgmma_ops.cuh"          // descriptors, fences, commit and wait

namespace decode_bench::device {

template <int Tile>
struct MlaWgmmaTraits {
  static_assert(Tile == 64 || Tile == 32, "tiles of 64 tokens (2 stages) or 32 (4 stages)");
  static constexpr int kKd = 576, kVd = 512;
  static constexpr int kRows = 64;  // query rows per block: wgmma's M
  static constexpr int kTile = Tile;  // tokens per stage: S's N and P V's K
  // The same shared memory in either tiling: 2 x 64 or 4 x 32 tokens staged.
  static constexpr int kStages = Tile == 64 ? 2 : 4;
  static constexpr int kWarpgroups = 2;
  static constexpr int kThreads = 128 * kWarpgroups;
  static constexpr int kPanels = kKd / 64;        // 9 panels of 64 columns (128 bytes)
  static constexpr int kQPanelBytes = kRows * 128;      // 64 rows of one panel
  static constexpr int kStagePanelBytes = kTile * 128;  // kTile tokens of one panel
  static constexpr int kQBytes = kPanels * kQPanelBytes;
  static constexpr int kStageBytes = kPanels * kStagePanelBytes;
  static constexpr int kKSteps = kTile / 16;       // P V's k16 steps (tokens) a tile
  static constexpr int kSAcc = kTile / 2;          // S's accumulators per thread (64 x kTile / 128)
  static constexpr int kPWords = 4 * kKSteps;      // P's A fragments per thread (4 words a k16 step)
  static constexpr int kPBytes = kPWords * 128 * 4;
  static constexpr int kRowStateBytes = 2 * 128 * 4;
  static constexpr int kQOffset = 0;
  static constexpr int kStageOffset = kQOffset + kQBytes;
  static constexpr int kPOffset = kStageOffset + kStages * kStageBytes;
  static constexpr int kRowStateOffset = kPOffset + kPBytes;
  static constexpr int kInvLOffset = kRowStateOffset + kRowStateBytes;  // v_scale / l at the end
  // O's staging after the loop, in the stages: rows of 512 floats 8 floats apart, so that a warp's
  // float2 stores of 8 rows land in distinct bank groups.
  static constexpr int kOStageStride = kVd + 8;
  static_assert((kRows * kOStageStride + kRows) * 4 <= kStages * kStageBytes, "O's staging and lse fit the stages");
  // 1 KiB of slack to align the swizzle atoms (the dynamic window's start is not promised that).
  static constexpr std::size_t shared_bytes() { return 1024 + kInvLOffset + kRowStateBytes; }
  // Stages and panels start on 1 KiB (the 128-byte swizzle's 8-row atom).
  static_assert(kStagePanelBytes % 1024 == 0 && kStageOffset % 1024 == 0, "swizzle atoms aligned");
};
static_assert(MlaWgmmaTraits<64>::shared_bytes() <= 227 * 1024, "an H100 block takes at most 227 KiB of shared memory");
static_assert(MlaWgmmaTraits<32>::shared_bytes() <= 227 * 1024, "an H100 block takes at most 227 KiB of shared memory");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// d (64 x 64, FP32) (+)= A (64 x 16) B (16 x 64), both K-major in shared memory (descriptors).
// accumulate 0 overwrites d.
template <class T>
__device__ __forceinline__ void mla_wgmma_m64n64k16_ss(float (&d)[32], std::uint64_t a_desc, std::uint64_t b_desc,
                                                       int accumulate) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " DB_WGMMA_D32_LIST ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : DB_WGMMA_D32_OPERANDS(d)
                 : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " DB_WGMMA_D32_LIST ", %32, %33, p, 1, 1, 0, 0;\n}\n"
                 : DB_WGMMA_D32_OPERANDS(d)
                 : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  }
}

// d (64 x 32, FP32) (+)= A (64 x 16) B (16 x 32), both K-major in shared memory (descriptors).
// accumulate 0 overwrites d.
template <class T>
__device__ __forceinline__ void mla_wgmma_m64n32k16_ss(float (&d)[16], std::uint64_t a_desc, std::uint64_t b_desc,
                                                       int accumulate) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 " DB_WGMMA_D16_LIST ", %16, %17, p, 1, 1, 0, 0;\n}\n"
                 : DB_WGMMA_D16_OPERANDS(d)
                 : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 " DB_WGMMA_D16_LIST ", %16, %17, p, 1, 1, 0, 0;\n}\n"
                 : DB_WGMMA_D16_OPERANDS(d)
                 : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  }
}

// S's k16 step for either tiling: the m64n64 form on 32 accumulators, the m64n32 form on 16.
template <class T, int N>
__device__ __forceinline__ void mla_wgmma_s_ss(float (&d)[N], std::uint64_t a_desc, std::uint64_t b_desc,
                                               int accumulate) {
  static_assert(N == 32 || N == 16, "S of 64 or 32 tokens");
  if constexpr (N == 32)
    mla_wgmma_m64n64k16_ss<T>(d, a_desc, b_desc, accumulate);
  else
    mla_wgmma_m64n32k16_ss<T>(d, a_desc, b_desc, accumulate);
}

// d (64 x 256, FP32) += A (64 x 16, registers: mma.sync's m16n8k16 A layout per warp) B (16 x 256),
// B MN-major in shared memory (the transpose immediate 1).
template <class T>
__device__ __forceinline__ void mla_wgmma_m64n256k16_rs(float (&d)[128], const std::uint32_t (&a)[4],
                                                        std::uint64_t b_desc) {
  if constexpr (std::is_same_v<T, __half>) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " DB_WGMMA_D128_LIST
                 ", {%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n"
                 : DB_WGMMA_D128_OPERANDS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(1));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " DB_WGMMA_D128_LIST
                 ", {%128, %129, %130, %131}, %132, p, 1, 1, 1;\n}\n"
                 : DB_WGMMA_D128_OPERANDS(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "n"(1));
  }
}

// Named barrier 1 of `threads` threads (P's hand-over). Barrier 0 is __syncthreads.
__device__ __forceinline__ void mla_bar_sync(int threads) { asm volatile("bar.sync 1, %0;\n" ::"r"(threads) : "memory"); }
// Named barrier 2 of `threads` threads, met by both warpgroups at each tile's top from their own
// loops (so not __syncthreads, which the compiler expects at one program point).
__device__ __forceinline__ void mla_tile_barrier(int threads) {
  asm volatile("bar.sync 2, %0;\n" ::"r"(threads) : "memory");
}

// Byte offset of 16-byte chunk c (0-71) of row r of a rows x 576 operand (Q: 64 rows, a stage:
// the tile's tokens) whose panels are panel_bytes apart.
__device__ __forceinline__ std::uint32_t mla_sw128_chunk(int r, int c, int panel_bytes) {
  return static_cast<std::uint32_t>((c >> 3) * panel_bytes + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <class T, class KV, int Tile>
__global__ void __launch_bounds__(MlaWgmmaTraits<Tile>::kThreads, 1)
    mla_decode_wgmma_kernel(const KV cache, const MlaArgs args, const FastDivmod page_div) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using Tr = MlaWgmmaTraits<Tile>;
  static_assert(std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>, "FP16 or BF16 latent cache");
  static_assert(std::is_same_v<typename KV::value_type, T>, "the cache holds T");
  using Ops = MmaStorage<T>;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  allow_dependent_grid();  // the split merge may launch (kernels/dependent_launch.cuh)

  // blockIdx.x = sequence x row_blocks + row block: a sequence's row blocks are neighbours (they
  // share its tiles through L2). blockIdx.y = the split.
  const int row_blocks = (args.rows + Tr::kRows - 1) / Tr::kRows;
  const int b = static_cast<int>(blockIdx.x) / row_blocks, row_block = static_cast<int>(blockIdx.x) % row_blocks;
  const int split = static_cast<int>(blockIdx.y);
  const int row0 = row_block * Tr::kRows;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128, wtid = tid % 128;
  const int warp = wtid / 32, lane = tid % 32, g = lane / 4, tq = lane % 4;
  const std::int64_t len = args.seq_lens[b];
  const std::int64_t t0 = static_cast<std::int64_t>(split) * args.chunk;
  const std::int64_t t1 = t0 + args.chunk < len ? t0 + args.chunk : len;
  const int tiles = t1 > t0 ? static_cast<int>((t1 - t0 + Tr::kTile - 1) / Tr::kTile) : 0;

  const std::uint32_t raw = shared_address(smem_raw);
  const std::uint32_t base = (raw + 1023u) & ~1023u;
  unsigned char* const smem = smem_raw + (base - raw);
  const std::uint32_t q_smem = base + Tr::kQOffset;
  const auto stage_at = [&](int tile) {
    return base + Tr::kStageOffset + static_cast<std::uint32_t>(tile % Tr::kStages) * Tr::kStageBytes;
  };
  std::uint32_t* const p_buf = reinterpret_cast<std::uint32_t*>(smem + Tr::kPOffset);
  float* const row_state = reinterpret_cast<float*>(smem + Tr::kRowStateOffset);
  float* const inv_l = reinterpret_cast<float*>(smem + Tr::kInvLOffset);  // written once, after the loops

  // Warpgroup 1 stages tokens [t0 + kTile tile, + kTile) (zero past t1): thread i copies chunks
  // 8 k + i % 8 (k = 0..8: one per panel) of rows i / 8 + 16 p (p < kTile / 16), so 8 neighbouring
  // threads copy one row's 128 contiguous bytes into 8 distinct 16-byte slots of its swizzled panel
  // row. The rows' block-table entries are read a tile ahead (tickets, kernels/row_locator.cuh):
  // resolving each row where it is copied put a dependent global load and a division in front of
  // every row's copies, so warpgroup 1 reached the P hand-over late and warpgroup 0 waited there.
  constexpr int kRowsPerThread = Tr::kTile / 16;
  const RowLocator<KV> locator(cache, b, 0, page_div);
  typename RowLocator<KV>::Ticket tickets[kRowsPerThread];
  const auto fetch_tickets = [&](int tile) {  // tile < tiles, so its first token is below t1
    const std::int64_t tile_t0 = t0 + static_cast<std::int64_t>(tile) * Tr::kTile;
#pragma unroll
    for (int p = 0; p < kRowsPerThread; ++p) {
      const std::int64_t t = tile_t0 + wtid / 8 + 16 * p;
      tickets[p] = locator.fetch(t < t1 ? t : tile_t0);
    }
  };
  const auto load_tile = [&](int tile) {  // with the tickets fetch_tickets(tile) left
    const std::int64_t tile_t0 = t0 + static_cast<std::int64_t>(tile) * Tr::kTile;
    const std::uint32_t dst = stage_at(tile);
    const int c = wtid & 7;
#pragma unroll
    for (int p = 0; p < kRowsPerThread; ++p) {
      const int r = wtid / 8 + 16 * p;
      const bool valid = tile_t0 + r < t1;
      const T* src = cache.k + locator.offset(tickets[p]) + c * 8;
      const std::uint32_t row_dst = dst + mla_sw128_chunk(r, c, Tr::kStagePanelBytes);
#pragma unroll
      for (int k = 0; k < Tr::kPanels; ++k) cp_async_16B(row_dst + k * Tr::kStagePanelBytes, src + 64 * k, valid);
    }
  };
  // Loads tile `tile` and reads the block table for the one after it.
  const auto load_tile_and_fetch_next = [&](int tile) {
    load_tile(tile);
    if (tile + 1 < tiles) fetch_tickets(tile + 1);
  };
  // Q rows (rows past args.rows zero), swizzled as the A operand of S (row r's chunk c of 8 values
  // at mla_sw128_chunk), copied by every thread (copy_q_rows_async, kernels/mla/mla_q_load.cuh)
  // into the first commit group: warpgroup 1's with tile 0, which its loop waits for at tile 0;
  // warpgroup 0 waits for its own below. Then the first kStages - 1 tiles, one cp.async group each
  // (empty past the last tile): the loop's wait for tile j then leaves exactly the kStages - 2
  // groups after it pending.
  if (wg == 1 && tiles > 0) fetch_tickets(0);
  copy_q_rows_async<Tr::kRows, Tr::kThreads>(
      tid, args.q_as<T>(), b, row0, args.rows,
      [&](int r, int c) { return q_smem + mla_sw128_chunk(r, c, Tr::kQPanelBytes); });
#pragma unroll
  for (int j = 0; j < Tr::kStages - 1; ++j) {
    if (wg == 1 && j < tiles) load_tile_and_fetch_next(j);
    cp_async_commit();
  }
  if (wg == 0) {
    cp_async_wait<0>();          // warpgroup 0's copies of Q (it copies no tile)
    fence_proxy_async_shared();  // ... visible to wgmma (ordered by the first tile's barrier)
  }

  // Each thread's two rows (h = 0: 16 warp + g, h = 1: + 8; the same in both warpgroups) and the
  // tokens they see in this split.
  std::int64_t limit[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row0 + 16 * warp + g + 8 * h;
    const int pos = r < args.rows ? r / args.heads_q : args.q_len - 1;
    const std::int64_t visible = mla_visible_tokens(len, args.q_len, pos);
    limit[h] = visible < t1 ? visible : t1;
  }
  const std::int64_t limit_min = limit[0] < limit[1] ? limit[0] : limit[1];
  const float scale_log2 = args.scale_log2 * kv_scale(cache.k_scale, 0);
  const float v_scale = kv_scale(cache.v_scale, 0);

  float o[128];  // this warpgroup's 256 columns of O
#pragma unroll
  for (int i = 0; i < 128; ++i) o[i] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f};  // warpgroup 0's
  // P V's B operand: this warpgroup's 4 panels of the tile (value columns 256 wg .. + 255).
  const std::uint32_t v_offset = static_cast<std::uint32_t>(wg) * 4u * Tr::kStagePanelBytes;
  // O += P V over the kTile / 16 k16 steps of 16 tokens (P's rows are both warpgroups' rows);
  // waited for at the next tile's top (or after the loop).
  const auto pv = [&](std::uint32_t st, std::uint32_t (&a)[Tr::kKSteps][4]) {
#pragma unroll
    for (int c = 0; c < Tr::kKSteps; ++c) fence_fragments(a[c]);  // written before the fence
    fence_registers(o);
    wgmma_fence();
    const std::uint64_t v_desc = sw128_descriptor(st + v_offset, Tr::kStagePanelBytes, 1024);
#pragma unroll
    for (int c = 0; c < Tr::kKSteps; ++c) mla_wgmma_m64n256k16_rs<T>(o, a[c], v_desc + static_cast<std::uint64_t>((c * 2048) >> 4));
    wgmma_commit();
  };
  const auto rescale = [&](float alpha0, float alpha1) {  // with the slack, after the first tiles almost never
    if (__any_sync(0xffffffffu, alpha0 != 1.f || alpha1 != 1.f)) {
#pragma unroll
      for (int n = 0; n < 32; ++n) {
        o[4 * n] *= alpha0;
        o[4 * n + 1] *= alpha0;
        o[4 * n + 2] *= alpha1;
        o[4 * n + 3] *= alpha1;
      }
    }
  };

  // The warpgroups run loops of their own (one loop with the two roles as branches made ptxas
  // serialise the wgmma of P V, warning C7515); they meet at the tile barrier once a tile and at
  // the P hand-over.
  if (wg == 0) {
    float s[Tr::kSAcc];
#pragma unroll
    for (int i = 0; i < Tr::kSAcc; ++i) s[i] = 0.f;
    const std::uint64_t q_desc = sw128_descriptor(q_smem, 16, 1024);
    for (int tile = 0; tile < tiles; ++tile) {
      wgmma_wait<0>();  // this warpgroup's P V of the previous tile is done with its stage
      fence_registers(o);
      mla_tile_barrier(Tr::kThreads);  // the tile is in (warpgroup 1 fenced its copies before it)
      const std::uint32_t st = stage_at(tile);

      // S = Q K^T over the 576 key columns: 36 k16 steps, 4 per 128-byte panel row (Q's panels
      // and the stage's are apart by their rows x 128 B).
      const std::uint64_t k_desc = sw128_descriptor(st, 16, 1024);
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < Tr::kKd / 16; ++kk) {
        const int within = (kk & 3) * 32;
        const auto q_step = static_cast<std::uint64_t>(((kk >> 2) * Tr::kQPanelBytes + within) >> 4);
        const auto k_step = static_cast<std::uint64_t>(((kk >> 2) * Tr::kStagePanelBytes + within) >> 4);
        mla_wgmma_s_ss<T>(s, q_desc + q_step, k_desc + k_step, kk > 0);
      }
      wgmma_commit();
      wgmma_wait<0>();
      fence_registers(s);
      fence_registers(o);

      // Online softmax in the log2 domain. Tokens past a row's limit score -inf (before the max).
      const std::int64_t tile_t0 = t0 + static_cast<std::int64_t>(tile) * Tr::kTile;
      if (tile_t0 + Tr::kTile > limit_min) {
#pragma unroll
        for (int j = 0; j < Tr::kTile / 8; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (tile_t0 + 8 * j + 2 * tq + (e & 1) >= limit[e >> 1]) s[4 * j + e] = -INFINITY;
      }
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int j = 0; j < Tr::kTile / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) mx[e >> 1] = fmaxf(mx[e >> 1], s[4 * j + e]);
      constexpr float kSlack = 8.f;
      float base_m[2], alpha[2];
#pragma unroll
      for (int h = 0; h < 2; ++h) advance_row_max(mx[h] * scale_log2, kSlack, m_run[h], l_run[h], base_m[h], alpha[h]);
      // P as the A operand of the k16 step c (tokens 16 c .. 16 c + 15: n8 blocks 2 c and 2 c + 1).
      std::uint32_t a[Tr::kKSteps][4];
#pragma unroll
      for (int c = 0; c < Tr::kKSteps; ++c) {
        float p[8];
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          p[e] = fast_exp2(fmaf(s[8 * c + e], scale_log2, -base_m[(e >> 1) & 1]));
          l_run[(e >> 1) & 1] += p[e];
        }
        a[c][0] = Ops::pack(p[0], p[1]);  // row g,     tokens 16 c + 2 tq, + 1
        a[c][1] = Ops::pack(p[2], p[3]);  // row g + 8
        a[c][2] = Ops::pack(p[4], p[5]);  // row g,     tokens 16 c + 8 + 2 tq, + 1
        a[c][3] = Ops::pack(p[6], p[7]);  // row g + 8
      }
      // Hand P and the rescale to warpgroup 1 (its thread wtid holds the same rows). It read the
      // previous tile's before the tile barrier above.
#pragma unroll
      for (int c = 0; c < Tr::kKSteps; ++c)
#pragma unroll
        for (int i = 0; i < 4; ++i) p_buf[(4 * c + i) * 128 + wtid] = a[c][i];
      row_state[wtid] = alpha[0];
      row_state[128 + wtid] = alpha[1];
      mla_bar_sync(Tr::kThreads);
      rescale(alpha[0], alpha[1]);
      pv(st, a);
    }
  } else {
    for (int tile = 0; tile < tiles; ++tile) {
      // This thread's copies of the tile: groups tile + 1 .. tile + kStages - 2 (the tiles after
      // it) may stay pending.
      cp_async_wait<Tr::kStages - 2>();
      fence_proxy_async_shared();  // ... visible to wgmma
      wgmma_wait<0>();             // this warpgroup's P V of the previous tile is done with its stage
      fence_registers(o);
      mla_tile_barrier(Tr::kThreads);  // every wgmma of the previous tile is done: refill its stage
      // The previous tile's stage takes the tile kStages - 1 ahead; one group each tile, empty past
      // the end.
      if (tile + Tr::kStages - 1 < tiles) load_tile_and_fetch_next(tile + Tr::kStages - 1);
      cp_async_commit();
      mla_bar_sync(Tr::kThreads);  // warpgroup 0's P of this tile
      std::uint32_t a[Tr::kKSteps][4];
#pragma unroll
      for (int c = 0; c < Tr::kKSteps; ++c)
#pragma unroll
        for (int i = 0; i < 4; ++i) a[c][i] = p_buf[(4 * c + i) * 128 + wtid];
      rescale(row_state[wtid], row_state[128 + wtid]);
      pv(stage_at(tile), a);
    }
  }
  wgmma_wait<0>();
  fence_registers(o);
  cp_async_wait<0>();
  // The last hand-over, as every tile's P: warpgroup 0 writes v_scale / l into a buffer of its own
  // (not row_state, which warpgroup 1 read last: compute-sanitizer's racecheck did not order those
  // reads before warpgroup 0's writes across a barrier here) and meets warpgroup 1 at barrier 1.
  if (wg == 0) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
      l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
      inv_l[128 * h + wtid] = l_run[h] > 0.f ? v_scale / l_run[h] : 0.f;
    }
    mla_bar_sync(Tr::kThreads);
  } else {
    mla_bar_sync(Tr::kThreads);
  }
  // Warpgroup 0 writes lse; both write their 256 columns of o, scaled by v_scale / l. The block's
  // rows are consecutive rows of o (and of the partials): one contiguous range.
  const int block_rows = args.rows - row0 < Tr::kRows ? args.rows - row0 : Tr::kRows;
  const std::int64_t first_row =
      (args.partial ? static_cast<std::int64_t>(split) * args.batch + b : b) * args.rows + row0;
  // Where every warp holds a row with a head (more than 48 of the 64 rows), O is staged through the stages
  // (every copy and every wgmma that read them is done: each thread waited for its own before
  // barrier 1 above) and stored by all eight warps in 16-byte chunks of whole rows. With fewer rows
  // the staging's barrier and shared-memory round trip cost more than the stores they spread
  // (results/reference/h200/mla-epilogue-staged/), so the warps that hold rows store their
  // fragments directly.
  // A cluster plan (args.cluster_merge) stages every row, and its rows' lse after them: the cluster
  // folds its blocks' stages into the answer (fold_states_in_cluster, kernels/row_cluster_merge.cuh).
  constexpr int kRowsBelowLastWarp = Tr::kRows - 16;  // warp w of each warpgroup holds rows 16 w .. + 15
  const bool staged = args.cluster_merge || block_rows > kRowsBelowLastWarp;
  float* const o_stage = reinterpret_cast<float*>(smem + Tr::kStageOffset);
  float* const lse_stage = o_stage + Tr::kRows * Tr::kOStageStride;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = 16 * warp + g + 8 * h;
    if (r >= block_rows) continue;
    const float inv = inv_l[128 * h + wtid];
    // Called in each branch, not once over a selected pointer: a pointer that may be either space
    // compiles to generic stores.
    const auto store_row = [&](auto* row_dst) {
#pragma unroll
      for (int n = 0; n < 32; ++n) store_pair(row_dst + 8 * n + 2 * tq, o[4 * n + 2 * h] * inv, o[4 * n + 2 * h + 1] * inv);
    };
    const std::int64_t at = (first_row + r) * Tr::kVd + 256 * wg;
    if (staged)
      store_row(o_stage + r * Tr::kOStageStride + 256 * wg);
    else if (args.partial)
      store_row(args.partial_o() + at);
    else
      store_row(args.o_as<T>() + at);
    if (wg == 0 && tq == 0) {
      const float row_lse = l_run[h] > 0.f ? (m_run[h] + log2f(l_run[h])) * kLn2 : -INFINITY;
      if (args.cluster_merge)
        lse_stage[r] = row_lse;
      else
        args.lse[first_row + r] = row_lse;
    }
  }
  if (args.cluster_merge) {
    // The cluster's first barrier (in the fold) orders this block's staging before every block's
    // reads of it, as __syncthreads would within the block.
    fold_states_in_cluster<Tr::kThreads>(
        shared_address(o_stage), shared_address(lse_stage), Tr::kOStageStride, block_rows, Tr::kVd / 4,
        [&](int r, int c, float4 v) { store_quad(args.o_as<T>() + (first_row + r) * Tr::kVd + 4 * c, v); },
        [&](int r, float row_lse) { args.lse[first_row + r] = row_lse; });
    return;
  }
  if (staged) {
    __syncthreads();
    // Whole rows in chunks of 4 columns: FP32 partials or o in T.
    const auto store_rows = [&](auto* dst) {
      constexpr int kChunksPerRow = Tr::kVd / 4;
      for (int i = tid; i < block_rows * kChunksPerRow; i += Tr::kThreads) {
        const int r = i / kChunksPerRow, c = i % kChunksPerRow;
        store_quad(dst + static_cast<std::int64_t>(r) * Tr::kVd + 4 * c,
                   *reinterpret_cast<const float4*>(o_stage + r * Tr::kOStageStride + 4 * c));
      }
    };
    if (args.partial)
      store_rows(args.partial_o() + first_row * Tr::kVd);
    else
      store_rows(args.o_as<T>() + first_row * Tr::kVd);
  }
  // The fused merge (MlaDecodePlan::fused_merge): the row block's last split folds its splits. The
  // P buffer is free now (its last reader passed barrier 1 above).
  static_assert(Tr::kPBytes >= kMlaFusedMergeScratchBytes, "the fused merge's scratch fits the P buffer");
  // A spread plan (MlaDecodePlan::spread_merge) folds them over all of the row block's splits.
  if (args.split_counters != nullptr) {
    float* const scratch = reinterpret_cast<float*>(smem + Tr::kPOffset);
    if (args.spread_merge)
      mla_merge_spread<T, Tr::kThreads>(args, b, row_block, row_blocks, row0, block_rows, tid, scratch);
    else
      mla_merge_if_last_split<T, Tr::kThreads>(args, b, row_block, row_blocks, row0, block_rows, tid, scratch);
  }
#else
  (void)cache, (void)args;
  __trap();  // compiled for sm_90a only; the planner never picks it elsewhere (mla_decode_wgmma_available)
#endif
}

}  // namespace decode_bench::device
