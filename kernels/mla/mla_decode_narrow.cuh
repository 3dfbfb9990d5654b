#pragma once
// The MLA decode kernel for few query rows per sequence (rows = heads_q x q_len <= 32: h_q 16 at
// q_len 1 and 2, h_q 32 at q_len 1), the memory-bound side of the ridge. Included only by
// kernels/mla/mla_decode.cu, beside the 64-row kernel of kernels/mla/mla_decode.cuh, whose
// arguments (MlaArgs) and split merge it shares.
//
// At 16 rows the 64-row kernel spends three quarters of its MMA work on zero rows and computes
// every score twice; what it must do per token is small next to the 1152 bytes it reads. This one
// keeps the tensor work to the rows (rounded up to 16) and splits it over the warps so that each
// warp's share of a tile is short next to the tile's time on the DRAM bus:
//
// A block is 8 warps (256 threads) over M = 16 x kMFrags query rows (16 or 32) of one sequence and
// one token range of it, streaming 64-token tiles:
//   shared memory: Q (M rows x 576), 2 cp.async stages of 64 latent rows (pitch 584 elements as in
//                  the 64-row kernel: an odd number of 16-byte chunks per row, so the 8 rows an
//                  ldmatrix phase reads fall in distinct bank groups), P (M x 64 in the mma's type,
//                  pitch 72: 9 chunks, odd), and 8 x M floats for the row maxima and sums
//   copies:        thread i copies row i / 4 of a tile, chunks i % 4 + 4j (one page look-up per
//                  thread and tile; a warp's copy instruction covers 64 bytes of each of 8 rows)
//   per tile:      S: warp w computes S (M x 8) = Q K^T for tokens 8w .. 8w + 7 over all 576
//                  columns (two independent accumulator chains per 16 rows: the even and odd
//                  k16 steps); no score is computed twice
//                  each warp's row maxima over its 8 tokens go to shared memory; after a barrier
//                  every warp reads all 8 and takes the same running max (same values, same order:
//                  every warp holds identical m), rescales its own O and l, and writes its
//                  weights P (rounded to the mma's type) to shared memory
//                  after a second barrier, warp w computes O (M x 64) += P (M x 64) V for value
//                  columns 64w .. 64w + 63 (P by ldmatrix, V by ldmatrix.trans of the tile)
//   pipeline:      tile t + 1 is copied while tile t is computed (2 stages x 74,752 bytes: one to
//                  two tiles in flight per SM); a third barrier ends the tile before its stage is
//                  refilled
//   end:           each warp's l (its tokens' weights) is summed over the warps through shared
//                  memory; warp w writes its 64 columns of o, warp 0 the lse
// FP8 E4M3 (value = stored x the cache's one scale): tiles are staged as bytes (3 cp.async stages
// of 64 x 576 bytes), widened to FP16 into one work tile (exact: E4M3 values are all FP16 values)
// and run on the FP16 path; the scale multiplies the scores and the output in FP32. The widening
// pass's barrier also orders the work tile's reuse, so the FP8 path needs no third barrier.
// Rounding: q comes in the mma's type (FP16 for FP8), P is rounded to it, l sums the unrounded
// weights and o is rounded to it at the end, as in the 64-row kernel (docs/kernels/mla.md gives the
// bound).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/kv_accessor.hpp"    // kv_scale
#include "kernels/log2_domain.cuh"
#include "kernels/mla/mla_decode.cuh"  // MlaArgs, the split merge
#include "kernels/mla/mla_decode.hpp"  // MlaIo
#include "kernels/mla/mla_q_load.cuh"  // copy_q_rows_async
#include "kernels/store_converted.cuh"  // store_pair
#include "kernels/mla/mla_shape.hpp"
#include "kernels/row_attention_mma.cuh"  // MmaStorage (mma, pack), ldmatrix_x4, ldmatrix_x4_trans

namespace decode_bench::device {

template <int kMFrags>
struct MlaNarrowTraits {
  static_assert(kMFrags == 1 || kMFrags == 2, "16 or 32 rows per block");
  static constexpr int kKd = 576, kVd = 512;
  static constexpr int kRows = 16 * kMFrags;
  static constexpr int kTile = 64, kWarps = 8, kThreads = 32 * kWarps;
  static constexpr int kWarpTokens = kTile / kWarps;  // 8: one n8 fragment of S per warp
  static constexpr int kWarpCols = kVd / kWarps;      // 64 value columns per warp
  static constexpr int kStages = 2;                   // 16-bit caches
  static constexpr int kRawStages = 3;                // FP8 byte stages
  static constexpr int kPitch = kKd + 8;              // elements per shared latent or Q row
  static constexpr int kRowBytes = kPitch * 2;        // 1168
  static constexpr int kPPitch = kTile + 8;           // elements per shared P row (144 bytes)
  static constexpr int kQBytes = kRows * kRowBytes;
  static constexpr int kPBytes = kRows * kPPitch * 2;
  static constexpr int kRedBytes = kWarps * kRows * 4;
  static constexpr int kStageBytes = kTile * kRowBytes;  // 74,752
  static constexpr int kRawStageBytes = kTile * kKd;     // an FP8 tile as stored: 36,864
  static constexpr int kCopiersPerRow = kThreads / kTile;  // 4
  // Q, P, the row reductions, then the 16-bit stages, or the FP16 work tile and the byte stages.
  static constexpr int shared_bytes(bool fp8) {
    return kQBytes + kPBytes + kRedBytes + (fp8 ? kStageBytes + kRawStages * kRawStageBytes : kStages * kStageBytes);
  }
  static_assert(kCopiersPerRow * kTile == kThreads, "every thread copies one row of a tile");
  static_assert(kWarpTokens == 8 && kWarpCols % 16 == 0, "warp shares: one n8 score fragment, whole x4 V loads");
  // sm_90's largest block (227 KiB), and over half an SM's 228 KiB: one block per SM, as the plan
  // assumes.
  static_assert(shared_bytes(false) <= 232448 && shared_bytes(true) <= 232448, "fits one sm_90 block");
  static_assert(shared_bytes(false) > 116736 && shared_bytes(true) > 116736, "one block per SM");
};

// 8 bytes from a shared-window address (LDS.64).
__device__ __forceinline__ uint2 mla_load_shared_8B(std::uint32_t shared_src) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(shared_src) : "memory");
  return v;
}

template <class T, class KV, int kMFrags>
__global__ void __launch_bounds__(MlaNarrowTraits<kMFrags>::kThreads, 1)
    mla_decode_narrow_kernel(const KV cache, const MlaArgs args) {
  using Tr = MlaNarrowTraits<kMFrags>;
  constexpr bool kFp8 = std::is_same_v<T, __nv_fp8_e4m3>;
  using Io = MlaIo<T>;  // q and o; the MMA's type
  using Ops = MmaStorage<Io>;
  constexpr int kS = kFp8 ? Tr::kRawStages : Tr::kStages;  // copy stages
  extern __shared__ __align__(128) unsigned char smem[];
  allow_dependent_grid();  // the split merge may launch (kernels/dependent_launch.cuh)
  // blockIdx.x = sequence x row_blocks + row block (one row block at h_q x q_len <= 32; kept
  // general), blockIdx.y = split.
  const int row_blocks = (args.rows + Tr::kRows - 1) / Tr::kRows;
  const int b = static_cast<int>(blockIdx.x) / row_blocks, row_block = static_cast<int>(blockIdx.x) % row_blocks;
  const int split = blockIdx.y;
  const int row0 = row_block * Tr::kRows;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, tq = lane % 4;
  const std::int64_t len = args.seq_lens[b];
  const std::int64_t t0 = static_cast<std::int64_t>(split) * args.chunk;
  const std::int64_t t1 = t0 + args.chunk < len ? t0 + args.chunk : len;
  const int tiles = t1 > t0 ? static_cast<int>((t1 - t0 + Tr::kTile - 1) / Tr::kTile) : 0;

  // Shared layout: Q | P | row reductions | stages (FP8: the work tile, then the byte stages).
  constexpr int kWorkOffset = Tr::kQBytes + Tr::kPBytes + Tr::kRedBytes;  // the stages (FP8: the work tile)
  const std::uint32_t q_smem = shared_address(smem);
  const std::uint32_t p_smem = q_smem + Tr::kQBytes;
  float* red = reinterpret_cast<float*>(smem + Tr::kQBytes + Tr::kPBytes);  // [warp][row]
  const std::uint32_t stage0 = q_smem + kWorkOffset;
  const std::uint32_t raw0 = stage0 + Tr::kStageBytes;  // FP8 only
  const auto copy_slot = [&](int tile) -> std::uint32_t {
    return kFp8 ? raw0 + static_cast<std::uint32_t>(tile % kS) * Tr::kRawStageBytes
                : stage0 + static_cast<std::uint32_t>(tile % kS) * Tr::kStageBytes;
  };

  // Copies tokens [t0 + 64 tile, + 64) into the tile's stage, zero past t1: this thread copies
  // row tid / 4, chunks tid % 4 + 4j, resolving the row's offset once.
  constexpr int kRowChunks = Tr::kKd * static_cast<int>(sizeof(T)) / 16;  // 16-byte chunks of a stored row
  constexpr int kChunkElems = 16 / static_cast<int>(sizeof(T));
  const int copy_row = tid / Tr::kCopiersPerRow, copy_first = tid % Tr::kCopiersPerRow;
  const auto stage = [&](int tile) {
    const std::int64_t base = t0 + static_cast<std::int64_t>(tile) * Tr::kTile;  // < t1: a stored token
    const std::int64_t t = base + copy_row;
    const bool valid = t < t1;
    const T* src = cache.k + cache.row_offset(b, 0, valid ? t : base);
    const std::uint32_t dst = copy_slot(tile) + static_cast<std::uint32_t>(copy_row * (kFp8 ? Tr::kKd : Tr::kRowBytes));
#pragma unroll
    for (int j = 0; j < kRowChunks / Tr::kCopiersPerRow; ++j) {
      const int c = copy_first + Tr::kCopiersPerRow * j;
      cp_async_16B(dst + c * 16, src + c * kChunkElems, valid);
    }
  };
  // Q rows (rows past args.rows zero) into shared rows kRowBytes apart, in the first tile's group
  // (copy_q_rows_async, kernels/mla/mla_q_load.cuh); then the first kS - 1 tiles in flight (one
  // commit group each, empty past the last tile).
  copy_q_rows_async<Tr::kRows, Tr::kThreads>(tid, args.q_as<Io>(), b, row0, args.rows,
                                             [&](int r, int c) { return q_smem + r * Tr::kRowBytes + c * 16; });
#pragma unroll
  for (int s = 0; s < kS - 1; ++s) {
    if (s < tiles) stage(s);
    cp_async_commit();
  }

  // This thread's rows: (f, h) is row 16 f + g + 8 h of the block; the tokens each sees.
  std::int64_t limit[kMFrags][2];
#pragma unroll
  for (int f = 0; f < kMFrags; ++f)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = row0 + 16 * f + g + 8 * h;
      const int pos = r < args.rows ? r / args.heads_q : args.q_len - 1;
      const std::int64_t visible = mla_visible_tokens(len, args.q_len, pos);
      limit[f][h] = visible < t1 ? visible : t1;
    }

  // The cache's scale (FP8; 1 otherwise) on the scores and on the output, in FP32.
  const float scale_log2 = args.scale_log2 * kv_scale(cache.k_scale, 0);
  const float v_scale = kv_scale(cache.v_scale, 0);

  float o[kMFrags][Tr::kWarpCols / 8][4];
#pragma unroll
  for (int f = 0; f < kMFrags; ++f)
#pragma unroll
    for (int n = 0; n < Tr::kWarpCols / 8; ++n) o[f][n][0] = o[f][n][1] = o[f][n][2] = o[f][n][3] = 0.f;
  // m: the row's running max (the same in every warp); l: this thread's share of the row's sum.
  float m_run[kMFrags][2], l_run[kMFrags][2];
#pragma unroll
  for (int f = 0; f < kMFrags; ++f)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      m_run[f][h] = -INFINITY;
      l_run[f][h] = 0.f;
    }

  const int tok0 = warp * Tr::kWarpTokens;  // this warp's tokens of a tile
  const int col0 = warp * Tr::kWarpCols;    // this warp's value columns

  for (int tile = 0; tile < tiles; ++tile) {
    // Tile + kS - 1 goes into the slot tile - 1 used: its readers passed the barrier that ended
    // tile - 1 (16-bit: the third barrier; FP8: the widening's).
    if (tile + kS - 1 < tiles) stage(tile + kS - 1);
    cp_async_commit();
    cp_async_wait<kS - 1>();  // this thread's copies of `tile` landed
    __syncthreads();          // everyone's did (Q's too: they are in the first tile's group)
    std::uint32_t st = copy_slot(tile);
    if constexpr (kFp8) {  // widen the byte stage into the FP16 work tile (exact), then compute on it
      for (int i = tid; i < Tr::kTile * (Tr::kKd / 8); i += Tr::kThreads) {
        const int r = i / (Tr::kKd / 8), c8 = i % (Tr::kKd / 8);  // 8 bytes in, 16 bytes out
        const uint2 bytes = mla_load_shared_8B(st + r * Tr::kKd + c8 * 8);
        const std::uint32_t w[2] = {bytes.x, bytes.y};
        std::uint32_t hv[4];
#pragma unroll
        for (int k = 0; k < 2; ++k) {
          const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w[k] & 0xffffu), __NV_E4M3);
          const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w[k] >> 16), __NV_E4M3);
          hv[2 * k] = static_cast<std::uint32_t>(lo.x) | (static_cast<std::uint32_t>(lo.y) << 16);
          hv[2 * k + 1] = static_cast<std::uint32_t>(hi.x) | (static_cast<std::uint32_t>(hi.y) << 16);
        }
        *reinterpret_cast<uint4*>(smem + kWorkOffset + r * Tr::kRowBytes + c8 * 16) = make_uint4(hv[0], hv[1], hv[2], hv[3]);
      }
      __syncthreads();
      st = stage0;
    }
    const std::int64_t tile_t0 = t0 + static_cast<std::int64_t>(tile) * Tr::kTile;

    // S (M x 8) = Q K^T for this warp's 8 tokens over the 576 columns: per two k16 steps one x4
    // load of K (matrices: columns +0, +8, +16, +24 of tokens tok0 .. + 7) and one of Q per 16 rows
    // and step; chains [f][0] and [f][1] take the even and the odd step.
    float s[kMFrags][2][4];
#pragma unroll
    for (int f = 0; f < kMFrags; ++f)
#pragma unroll
      for (int c = 0; c < 2; ++c) s[f][c][0] = s[f][c][1] = s[f][c][2] = s[f][c][3] = 0.f;
#pragma unroll 6
    for (int k2 = 0; k2 < Tr::kKd / 32; ++k2) {
      std::uint32_t bk[4];
      ldmatrix_x4(bk, st + (tok0 + lane % 8) * Tr::kRowBytes + (k2 * 32 + 8 * (lane / 8)) * 2);
#pragma unroll
      for (int f = 0; f < kMFrags; ++f) {
        std::uint32_t a0[4], a1[4];
        const std::uint32_t qa = q_smem + (16 * f + lane % 16) * Tr::kRowBytes + (k2 * 32 + 8 * (lane / 16)) * 2;
        ldmatrix_x4(a0, qa);
        ldmatrix_x4(a1, qa + 32);  // 16 columns on
        Ops::mma(s[f][0], a0, bk[0], bk[1]);
        Ops::mma(s[f][1], a1, bk[2], bk[3]);
      }
    }

    // This warp's row maxima (log2 domain; tokens past a row's limit score -inf) to shared memory.
    float sc[kMFrags][4];
#pragma unroll
    for (int f = 0; f < kMFrags; ++f) {
      float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t t = tile_t0 + tok0 + 2 * tq + (e & 1);
        sc[f][e] = t < limit[f][e >> 1] ? (s[f][0][e] + s[f][1][e]) * scale_log2 : -INFINITY;
        mx[e >> 1] = fmaxf(mx[e >> 1], sc[f][e]);
      }
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
        mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
        if (tq == 0) red[warp * Tr::kRows + 16 * f + g + 8 * h] = mx[h];
      }
    }
    __syncthreads();  // every warp's maxima are in

    // The tile's max over the 8 warps, the running max, and this warp's weights into P.
#pragma unroll
    for (int f = 0; f < kMFrags; ++f)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = 16 * f + g + 8 * h;
        float mx = red[r];
#pragma unroll
        for (int w = 1; w < Tr::kWarps; ++w) mx = fmaxf(mx, red[w * Tr::kRows + r]);
        const float m_new = fmaxf(m_run[f][h], mx);
        const float base = m_new == -INFINITY ? 0.f : m_new;
        const float alpha = exp2f(m_run[f][h] - base);  // 0 while the row has seen nothing (O, l are 0)
        m_run[f][h] = m_new;
        l_run[f][h] *= alpha;
#pragma unroll
        for (int n = 0; n < Tr::kWarpCols / 8; ++n) {
          o[f][n][2 * h] *= alpha;
          o[f][n][2 * h + 1] *= alpha;
        }
        const float p0 = exp2f(sc[f][2 * h] - base), p1 = exp2f(sc[f][2 * h + 1] - base);
        l_run[f][h] += p0 + p1;
        // Row r, tokens tok0 + 2 tq, + 1: quads of a warp hit 32 distinct banks (pitch 36 words).
        *reinterpret_cast<std::uint32_t*>(smem + Tr::kQBytes + (r * Tr::kPPitch + tok0 + 2 * tq) * 2) = Ops::pack(p0, p1);
      }
    __syncthreads();  // P is whole

    // O (M x 64) += P (M x 64 tokens) V (64 tokens x this warp's 64 columns).
#pragma unroll
    for (int c = 0; c < Tr::kTile / 16; ++c) {
      std::uint32_t pa[kMFrags][4];
#pragma unroll
      for (int f = 0; f < kMFrags; ++f)
        ldmatrix_x4(pa[f], p_smem + ((16 * f + lane % 16) * Tr::kPPitch + 16 * c + 8 * (lane / 16)) * 2);
#pragma unroll
      for (int np = 0; np < Tr::kWarpCols / 16; ++np) {
        std::uint32_t bv[4];
        ldmatrix_x4_trans(bv, st + (16 * c + lane % 8 + 8 * ((lane / 8) % 2)) * Tr::kRowBytes +
                                  (col0 + 16 * np + 8 * (lane / 16)) * 2);
#pragma unroll
        for (int f = 0; f < kMFrags; ++f) {
          Ops::mma(o[f][2 * np], pa[f], bv[0], bv[1]);
          Ops::mma(o[f][2 * np + 1], pa[f], bv[2], bv[3]);
        }
      }
    }
    if constexpr (!kFp8) __syncthreads();  // the stage is refilled by the next iteration
  }
  cp_async_wait<0>();

  // l over the row's 64 tokens of every tile: this quad's, then the 8 warps' (every warp passed
  // the last tile's P barrier, so none still reads the maxima these overwrite).
#pragma unroll
  for (int f = 0; f < kMFrags; ++f)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float l = l_run[f][h];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      if (tq == 0) red[warp * Tr::kRows + 16 * f + g + 8 * h] = l;
    }
  __syncthreads();
#pragma unroll
  for (int f = 0; f < kMFrags; ++f)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int rr = 16 * f + g + 8 * h, r = row0 + rr;
      if (r >= args.rows) continue;
      float l = 0.f;
#pragma unroll
      for (int w = 0; w < Tr::kWarps; ++w) l += red[w * Tr::kRows + rr];
      const std::int64_t row = (args.partial ? static_cast<std::int64_t>(split) * args.batch + b : b) * args.rows + r;
      const float inv = l > 0.f ? v_scale / l : 0.f;
      const std::int64_t at = row * Tr::kVd + col0 + 2 * tq;
#pragma unroll
      for (int n = 0; n < Tr::kWarpCols / 8; ++n) {
        if (args.partial)
          store_pair(args.partial_o() + at + 8 * n, o[f][n][2 * h] * inv, o[f][n][2 * h + 1] * inv);
        else
          store_pair(args.o_as<Io>() + at + 8 * n, o[f][n][2 * h] * inv, o[f][n][2 * h + 1] * inv);
      }
      if (warp == 0 && tq == 0) args.lse[row] = l > 0.f ? (m_run[f][h] + log2f(l)) * kLn2 : -INFINITY;
    }
}

}  // namespace decode_bench::device
