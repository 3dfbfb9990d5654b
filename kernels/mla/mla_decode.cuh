#pragma once
// The MLA decode kernel on mma.sync m16n8k16 (FP16 / BF16 latent cache, FP32 accumulation), the
// simple tensor-core version: correct on every GPU with mma.sync (sm_80 and later), the baseline a
// warpgroup-MMA version is measured against. Included only by kernels/mla/mla_decode.cu.
//
// A block is 8 warps (256 threads) over 64 query rows of one sequence and one token range of it:
//   shared memory: Q (64 rows x 576, the latent type) and 2 stages of 32 latent rows (cp.async),
//                  rows padded to 584 elements (1168 bytes, an odd number of 16-byte chunks, so
//                  the 8 rows an ldmatrix phase reads fall in distinct bank groups)
//   warp w:        rows 16 (w % 4) .. + 15, output columns 256 (w / 4) .. + 255
//   per tile:      S (16 x 32) = Q K^T over all 576 columns (36 k16 steps, Q and K fragments by
//                  ldmatrix); the two warps of a row group compute the same S (the duplicated
//                  score work is the price of this version's simplicity: no exchange of P)
//                  online softmax in the log2 domain on the accumulators (exact exp2f)
//                  O (16 x 256) += P V, V = the tile's first 512 columns (ldmatrix.trans)
// FP8 E4M3 (value = stored x the cache's one scale): tiles are staged as bytes (2 cp.async stages
// of 32 x 576 bytes), widened to FP16 into one work tile (E4M3 values are all FP16 values, so the
// widening is exact), and run on the FP16 path; the scale multiplies the scores and the output in
// FP32.
// Rounding: q comes in the mma's type (MlaIo: FP16 for FP8 caches); P is rounded to it, l sums the
// unrounded weights, and o is rounded to it once at the end (split partials stay FP32). The
// verification bound this sets is in docs/kernels/mla.md.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"
#include "kernels/log2_domain.cuh"
#include "kernels/mla/mla_args.hpp"  // MlaArgs
#include "kernels/mla/mla_decode.hpp"  // MlaIo
#include "kernels/mla/mla_q_load.cuh"  // copy_q_rows_async
#include "kernels/mla/mla_shape.hpp"
#include "kernels/row_attention_mma.cuh"  // MmaStorage (mma, pack), ldmatrix_x4, ldmatrix_x4_trans (kernels/mma_sync.cuh)
#include "kernels/dependent_launch.cuh"   // allow_dependent_grid, dependent_grid_wait
#include "kernels/split_merge.cuh"        // merge_split_states
#include "kernels/store_converted.cuh"    // store_pair, store_quad

namespace decode_bench::device {

struct MlaTraits {
  static constexpr int kKd = 576, kVd = 512;
  static constexpr int kRows = 64, kTile = 32, kStages = 2, kThreads = 256;
  static constexpr int kPitch = kKd + 8;         // elements per shared row
  static constexpr int kRowBytes = kPitch * 2;   // 1168
  static constexpr int kChunks = kKd / 8;        // 16-byte chunks per latent row: 72
  static constexpr int kQBytes = kRows * kRowBytes;
  static constexpr int kStageBytes = kTile * kRowBytes;
  static constexpr int kRawStageBytes = kTile * kKd;  // an FP8 tile as stored
  // 16-bit caches: Q and the stages. FP8: Q, one 16-bit work tile and the FP8 stages.
  static constexpr int shared_bytes(bool fp8) {
    return fp8 ? kQBytes + kStageBytes + kStages * kRawStageBytes : kQBytes + kStages * kStageBytes;
  }
};

template <class T, class KV>
__global__ void __launch_bounds__(MlaTraits::kThreads, 1) mla_decode_kernel(const KV cache, const MlaArgs args) {
  using Tr = MlaTraits;
  constexpr bool kFp8 = std::is_same_v<T, __nv_fp8_e4m3>;
  using Io = MlaIo<T>;  // q and o; the MMA's type
  using Ops = MmaStorage<Io>;
  extern __shared__ __align__(128) unsigned char smem[];
  allow_dependent_grid();  // the split merge may launch (kernels/dependent_launch.cuh)
  // blockIdx.x = sequence x row_blocks + row block: a sequence's row blocks are neighbours (they
  // share its tiles through L2), and x holds any batch (z would stop at 65535).
  const int row_blocks = (args.rows + MlaTraits::kRows - 1) / MlaTraits::kRows;
  const int b = static_cast<int>(blockIdx.x) / row_blocks, row_block = static_cast<int>(blockIdx.x) % row_blocks;
  const int split = blockIdx.y;
  const int row0 = row_block * Tr::kRows;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, tq = lane % 4;
  const int rg = warp & 3, ch = warp >> 2;
  const std::int64_t len = args.seq_lens[b];
  const std::int64_t t0 = static_cast<std::int64_t>(split) * args.chunk;
  const std::int64_t t1 = t0 + args.chunk < len ? t0 + args.chunk : len;
  const int tiles = t1 > t0 ? static_cast<int>((t1 - t0 + Tr::kTile - 1) / Tr::kTile) : 0;

  const std::uint32_t q_smem = shared_address(smem);
  const std::uint32_t stage0 = q_smem + Tr::kQBytes;  // FP8: the work tile, then the byte stages
  const std::uint32_t raw0 = stage0 + Tr::kStageBytes;
  constexpr int kRowChunks = Tr::kKd * static_cast<int>(sizeof(T)) / 16;  // 16-byte chunks of a stored row
  const auto stage = [&](int tile) {  // tokens [t0 + 32 tile, + 32) into stage tile % 2, zero past t1
    const std::int64_t base = t0 + static_cast<std::int64_t>(tile) * Tr::kTile;
    const std::uint32_t dst = kFp8 ? raw0 + static_cast<std::uint32_t>(tile % Tr::kStages) * Tr::kRawStageBytes
                                   : stage0 + static_cast<std::uint32_t>(tile % Tr::kStages) * Tr::kStageBytes;
    const int pitch = kFp8 ? Tr::kKd : Tr::kRowBytes;
    for (int i = tid; i < Tr::kTile * kRowChunks; i += Tr::kThreads) {
      const int r = i / kRowChunks, c = i % kRowChunks;
      const std::int64_t t = base + r;
      const bool valid = t < t1;
      const std::int64_t off = cache.row_offset(b, 0, valid ? t : base) + c * (16 / static_cast<int>(sizeof(T)));
      cp_async_16B(dst + r * pitch + c * 16, cache.k + off, valid);
    }
  };
  if (tiles > 0) stage(0);
  // Q rows (rows past args.rows zero) into shared rows kRowBytes apart, in the first tile's group
  // (copy_q_rows_async, kernels/mla/mla_q_load.cuh).
  copy_q_rows_async<Tr::kRows, Tr::kThreads>(tid, args.q_as<Io>(), b, row0, args.rows,
                                             [&](int r, int c) { return q_smem + r * Tr::kRowBytes + c * 16; });
  cp_async_commit();

  // Each thread's two rows (h = 0: g, h = 1: g + 8 of the warp's 16) and the tokens they see.
  std::int64_t limit[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int r = row0 + rg * 16 + g + 8 * h;
    const int pos = r < args.rows ? r / args.heads_q : args.q_len - 1;
    const std::int64_t visible = mla_visible_tokens(len, args.q_len, pos);
    limit[h] = visible < t1 ? visible : t1;
  }

  // The cache's scale (FP8; 1 otherwise) on the scores and on the output, in FP32.
  const float scale_log2 = args.scale_log2 * kv_scale(cache.k_scale, 0);
  const float v_scale = kv_scale(cache.v_scale, 0);

  float o[32][4];
#pragma unroll
  for (int n = 0; n < 32; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f};

  for (int tile = 0; tile < tiles; ++tile) {
    if (tile + 1 < tiles) stage(tile + 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    std::uint32_t st = stage0 + static_cast<std::uint32_t>(tile % Tr::kStages) * Tr::kStageBytes;
    if constexpr (kFp8) {  // widen the byte stage into the FP16 work tile (exact), then compute on it
      const std::uint32_t raw = raw0 + static_cast<std::uint32_t>(tile % Tr::kStages) * Tr::kRawStageBytes;
      for (int i = tid; i < Tr::kTile * kRowChunks; i += Tr::kThreads) {
        const int r = i / kRowChunks, c = i % kRowChunks;
        const uint4 bytes = load_shared_16B(raw + r * Tr::kKd + c * 16);
        const std::uint32_t w[4] = {bytes.x, bytes.y, bytes.z, bytes.w};
        std::uint32_t h[8];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const __half2_raw lo = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w[k] & 0xffffu), __NV_E4M3);
          const __half2_raw hi = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w[k] >> 16), __NV_E4M3);
          h[2 * k] = static_cast<std::uint32_t>(lo.x) | (static_cast<std::uint32_t>(lo.y) << 16);
          h[2 * k + 1] = static_cast<std::uint32_t>(hi.x) | (static_cast<std::uint32_t>(hi.y) << 16);
        }
        auto* dst = reinterpret_cast<uint4*>(smem + Tr::kQBytes + r * Tr::kRowBytes + c * 32);
        dst[0] = make_uint4(h[0], h[1], h[2], h[3]);
        dst[1] = make_uint4(h[4], h[5], h[6], h[7]);
      }
      __syncthreads();
      st = stage0;
    }
    const std::int64_t tile_t0 = t0 + static_cast<std::int64_t>(tile) * Tr::kTile;

    // S = Q K^T over the 576 key columns.
    float s[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll 4
    for (int kk = 0; kk < Tr::kKd / 16; ++kk) {
      std::uint32_t a[4];
      ldmatrix_x4(a, q_smem + (rg * 16 + lane % 16) * Tr::kRowBytes + (kk * 16 + 8 * (lane / 16)) * 2);
#pragma unroll
      for (int jp = 0; jp < 2; ++jp) {
        std::uint32_t bk[4];
        ldmatrix_x4(bk, st + (16 * jp + lane % 8 + 8 * (lane / 16)) * Tr::kRowBytes + (kk * 16 + 8 * ((lane / 8) % 2)) * 2);
        Ops::mma(s[2 * jp], a, bk[0], bk[1]);
        Ops::mma(s[2 * jp + 1], a, bk[2], bk[3]);
      }
    }

    // Online softmax (log2 domain); tokens past a row's limit score -inf.
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const std::int64_t t = tile_t0 + 8 * j + 2 * tq + (e & 1);
        s[j][e] = t < limit[e >> 1] ? s[j][e] * scale_log2 : -INFINITY;
        mx[e >> 1] = fmaxf(mx[e >> 1], s[j][e]);
      }
    float base[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      const float m_new = fmaxf(m_run[h], mx[h]);
      base[h] = m_new == -INFINITY ? 0.f : m_new;
      const float alpha = exp2f(m_run[h] - base[h]);  // 0 while the row has seen nothing (O, l are 0)
      l_run[h] *= alpha;
#pragma unroll
      for (int n = 0; n < 32; ++n) {
        o[n][2 * h] *= alpha;
        o[n][2 * h + 1] *= alpha;
      }
      m_run[h] = m_new;
    }
    std::uint32_t pa[2][4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float p[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        p[e] = exp2f(s[j][e] - base[e >> 1]);
        l_run[e >> 1] += p[e];
      }
      pa[j / 2][2 * (j % 2)] = Ops::pack(p[0], p[1]);      // row g,     tokens 8 j + 2 tq, + 1
      pa[j / 2][2 * (j % 2) + 1] = Ops::pack(p[2], p[3]);  // row g + 8
    }

    // O += P V over the warp's 256 value columns.
#pragma unroll
    for (int c = 0; c < 2; ++c)
#pragma unroll
      for (int np = 0; np < 16; ++np) {
        std::uint32_t bv[4];
        ldmatrix_x4_trans(bv, st + (16 * c + lane % 8 + 8 * ((lane / 8) % 2)) * Tr::kRowBytes +
                                  (ch * 256 + np * 16 + 8 * (lane / 16)) * 2);
        Ops::mma(o[2 * np], pa[c], bv[0], bv[1]);
        Ops::mma(o[2 * np + 1], pa[c], bv[2], bv[3]);
      }
    __syncthreads();  // the stage is refilled by the next iteration
  }
  cp_async_wait<0>();

#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
    const int r = row0 + rg * 16 + g + 8 * h;
    if (r >= args.rows) continue;
    const std::int64_t row = (args.partial ? static_cast<std::int64_t>(split) * args.batch + b : b) * args.rows + r;
    const float l = l_run[h];
    const float inv = l > 0.f ? v_scale / l : 0.f;
    const std::int64_t at = row * Tr::kVd + ch * 256 + 2 * tq;
#pragma unroll
    for (int n = 0; n < 32; ++n) {
      if (args.partial)
        store_pair(args.partial_o() + at + 8 * n, o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
      else
        store_pair(args.o_as<Io>() + at + 8 * n, o[n][2 * h] * inv, o[n][2 * h + 1] * inv);
    }
    if (ch == 0 && tq == 0) args.lse[row] = l > 0.f ? (m_run[h] + log2f(l)) * kLn2 : -INFINITY;
  }
}

// Combines the splits of each row by their log-sum-exp: o = sum_s exp(lse_s - L) o_s / W with
// L = max lse_s and W the sum of the weights; lse = L + log W (-inf and o = 0 with no token).
// Two kernels, by the split count (mla_merge_threads, kernels/mla/mla_decode.hpp):
//
// Few splits (large batches: 2-4): one block of 128 threads a row, each thread 4 columns walking
// the row's splits itself, 8 at a time: one or two batches of loads, no shared memory and no
// barrier, over the thousands of rows of such a batch.
template <class Io>
__global__ void __launch_bounds__(kMlaMergeThreadsFew)
    mla_merge_few_splits_kernel(const float* o_part, const float* lse_part, int splits, std::int64_t rows_total,
                                Io* o, float* lse) {
  static_assert(kMlaMergeThreadsFew * 4 == MlaTraits::kVd, "a thread a float4 column");
  dependent_grid_wait();  // a dependent launch: the partials are complete and visible after it
  const std::int64_t row = blockIdx.x;
  float L = -INFINITY;
#pragma unroll 8
  for (int s = 0; s < splits; ++s) L = fmaxf(L, lse_part[s * rows_total + row]);
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  float w_sum = 0.f;
  if (L != -INFINITY) {
    // Branch-free, so that the unrolled loads of several splits are in flight together: an empty
    // range's lse is -inf, its weight exp(-inf) = 0 and its o 0, so it adds exact zeros.
#pragma unroll 8
    for (int s = 0; s < splits; ++s) {
      const float w = expf(lse_part[s * rows_total + row] - L);
      w_sum += w;
      const float4 x = *reinterpret_cast<const float4*>(o_part + (s * rows_total + row) * MlaTraits::kVd + 4 * threadIdx.x);
      acc.x += w * x.x;
      acc.y += w * x.y;
      acc.z += w * x.z;
      acc.w += w * x.w;
    }
  }
  const float inv = w_sum > 0.f ? 1.f / w_sum : 0.f;
  store_quad(o + row * MlaTraits::kVd + 4 * threadIdx.x, make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv));
  if (threadIdx.x == 0) lse[row] = w_sum > 0.f ? L + logf(w_sum) : -INFINITY;
}

// Many splits (a long sequence: 64 or 128 at 1 x 32K): blocks of 512 threads (merge_split_states,
// kernels/split_merge.cuh), ColumnBlocks of them a row (blockIdx.y; MlaDecodePlan::
// merge_column_blocks). A whole row: 4 groups of 128 threads fold every fourth split, 8 splits'
// loads in flight each, so 64 splits are 2 batches of loads, not the 16 dependent round trips of
// the walk above. A quarter of a row: 16 groups of 32 fold every sixteenth split; a block a row
// left 16 rows (h_q 16 at 1 x 32K) on 16 SMs, each reading every split's 2 KiB of the row, and
// quarters spread the same bytes over four times the blocks. Every quarter computes the row's lse;
// the first writes it.
template <class Io, int ColumnBlocks>
__global__ void __launch_bounds__(kMlaMergeThreadsMany)
    mla_merge_many_splits_kernel(const float* o_part, const float* lse_part, int splits, std::int64_t rows_total,
                                 Io* o, float* lse) {
  static_assert(ColumnBlocks == 1 || ColumnBlocks == kMlaMergeQuarterBlocks, "a whole row or quarters");
  constexpr int kCols = MlaTraits::kVd / ColumnBlocks;
  dependent_grid_wait();  // a dependent launch: the partials are complete and visible after it
  const std::int64_t row = blockIdx.x;
  const int part = static_cast<int>(blockIdx.y);
  float unused_lse;
  merge_split_states<kCols, kMlaMergeThreadsMany, false, true, Io>(
      o_part + row * MlaTraits::kVd + part * kCols, lse_part + row, splits,
      o + row * MlaTraits::kVd + part * kCols, part == 0 ? lse + row : &unused_lse, kCols, -INFINITY,
      rows_total * MlaTraits::kVd, rows_total);
}

}  // namespace decode_bench::device
