#pragma once
// Tensor-core row attention (FP16 / BF16 / FP8 storage): mma.sync m16n8k16, FP32 accumulation.
//
// A block (4 warps) holds rows_per_block = 16 x WR query rows of one item and streams one token
// split of the item's K/V through shared memory (cp.async, 2 or 3 stages of 64-token tiles),
// each tile read from global memory once for all the block's rows. Warps are WR x WT (WR x WT = 4,
// WR from the planner at run time): warp (wr, wt) computes row tile wr against the wt-th quarter,
// half or whole of every tile. Grouped decode (<= 16 rows) is 1 x 4: all warps share one row tile
// and split the tokens; a shared prefix (many rows) is 4 x 1: warps own row tiles and share every
// K/V tile. Per tile and warp:
//   S (16 x n) = Q K^T   by mma, Q pre-scaled by softmax_scale * log2(e) (log2-domain scores)
//   online softmax on the accumulator fragments (row max / sum over the quad of lanes that hold a row)
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
// FP8 (E4M3 / E5M2, value = stored x per-KV-head scale): tiles stay FP8 bytes in shared memory and
// widen exactly to FP16 B fragments (kernels/row_attention_fp8.cuh); the FP16 mma runs on them.
// The reference reads the same stored bytes, so harness/verify.cpp holds FP8 to FP32's 1e-5: q and
// P are split hi + lo FP16 parts as for BF16 (22 significant bits), q pre-multiplied by 16 and P
// by 256 (powers of two, undone in FP32) so that the lo parts stay FP16 normals. One item is one KV
// head: the K scale multiplies its scores, the V scale its output, in FP32.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/row_attention_common.cuh"

namespace decode_bench::device {

// Everything the tensor-core path knows about a storage type, in one place: the mma instruction
// on two-element registers of it, the float -> storage pair packing of q and P, and whether q / P
// need a hi + lo split. Another storage type (FP8 E4M3/E5M2 with a per-head scale, say) adds a
// specialisation here that converts its staged tile to a supported operand type.
template <class T> struct MmaStorage;

template <> struct MmaStorage<__half> {
  static constexpr bool kSplit = false;
  static constexpr bool kFp8 = false;
  static constexpr float kQBoost = 1.f, kPBoost = 1.f;  // exact pre-scales of q and P (FP8 only)
  __device__ __forceinline__ static std::uint32_t pack(float a, float b) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
  __device__ __forceinline__ static float2 unpack(std::uint32_t w) {
    return __half22float2(*reinterpret_cast<const __half2*>(&w));
  }
  __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <> struct MmaStorage<__nv_bfloat16> {
  static constexpr bool kSplit = true;
  static constexpr bool kFp8 = false;
  static constexpr float kQBoost = 1.f, kPBoost = 1.f;
  __device__ __forceinline__ static std::uint32_t pack(float a, float b) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
  __device__ __forceinline__ static float2 unpack(std::uint32_t w) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  }
  __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

// FP8: the FP16 mma and packing on widened fragments, q and P split hi + lo.
struct MmaStorageFp8 : MmaStorage<__half> {
  static constexpr bool kSplit = true;
  static constexpr bool kFp8 = true;
  static constexpr float kQBoost = 16.f, kPBoost = 256.f;
};
template <> struct MmaStorage<__nv_fp8_e4m3> : MmaStorageFp8 {};
template <> struct MmaStorage<__nv_fp8_e5m2> : MmaStorageFp8 {};

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

template <class KV, int D>
struct RowMmaTraits {
  using T = typename KV::value_type;
  using Ops = MmaStorage<T>;
  static constexpr int kWarps = 4;
  static constexpr int kThreads = 32 * kWarps;
  static constexpr int kTile = 64;                    // tokens per stage
  static constexpr int kTileBytes = kTile * D * static_cast<int>(sizeof(T));  // one of K, V
  static constexpr int kMaxStages = 2 * kTileBytes >= 64 * 1024 ? 2 : 3;  // FP16 D = 128: 32 KiB per stage
  static constexpr int kChunks = D / 8;               // 16-byte chunks per row of Q (FP16) and of FP16/BF16 K/V
  static constexpr int kKvChunks = D * static_cast<int>(sizeof(T)) / 16;  // per K/V row (FP8: D / 16)
  static constexpr int kQParts = Ops::kSplit ? 2 : 1; // hi (+ lo) copies of Q
  static constexpr int kMaxRows = 16 * kWarps;
  // Dynamic shared memory: the K/V stages, then Q (rows_per_block x D per part). The epilogue
  // reuses both for each warp's (O, m, l): 4 x 16 x (D + 2) floats.
  static_assert(kWarps * 16 * (D + 2) * 4 <= 2 * 2 * kTileBytes + kQParts * 16 * D * 2, "epilogue fits");
  static constexpr std::size_t pipe_bytes(int stages) { return static_cast<std::size_t>(stages) * 2 * kTileBytes; }
  static constexpr std::size_t shared_bytes(int rows_per_block, int stages) {
    return pipe_bytes(stages) + static_cast<std::size_t>(kQParts) * rows_per_block * D * 2;
  }
};

template <class KV, int D>
__global__ void __launch_bounds__(128) row_attention_mma_kernel(const KV kv, const RowAttentionArgs args,
                                                               const FastDivmod page_div) {
  using Tr = RowMmaTraits<KV, D>;
  using Ops = typename Tr::Ops;
  using T = typename Tr::T;
  constexpr int kTile = Tr::kTile, kChunks = Tr::kChunks, kKvChunks = Tr::kKvChunks;
  const int stages = args.stages;  // 2 .. Tr::kMaxStages K/V tiles in shared memory
  extern __shared__ __align__(128) unsigned char smem[];

  // The block's item, row block and token chunk (the uniform grid or a work-list entry).
  const BlockWork work = locate_block_work<kTile>(args);
  const ItemView& item = work.item;
  const int row0 = item.row_begin + work.row_block * args.rows_per_block;
  const int nrows = min(args.rows_per_block, item.row_end - row0);
  if (nrows <= 0) return;  // the item has fewer rows than the widest one: nothing to do (whole block)
  // Split s takes one contiguous chunk of whole tiles (split_range). Taking turns tile by tile, as
  // flash_decode does, measured no better here (H100, 32/8 heads d = 128: 1 x 64K 102.2 -> 103.6 us,
  // BF16 16 x 4K 103.4 -> 114.9 us; decode-row-probe, 2026-11-23).
  const std::int64_t t_begin = work.t_begin, t_end = work.t_end;
  const int num_tiles = static_cast<int>((t_end - t_begin + kTile - 1) / kTile);
  const auto tile_start = [&](int i) { return t_begin + static_cast<std::int64_t>(i) * kTile; };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wr_count = args.rows_per_block / 16, wt_count = Tr::kWarps / wr_count;
  const int wr = warp / wt_count, wt = warp - wr * wt_count;
  const int sub = kTile / wt_count;  // tokens of each tile this warp takes: 16, 32 or 64
  const int nsub = sub / 16;

  const std::uint32_t smem_base = shared_address(smem);
  const std::uint32_t q_smem = smem_base + static_cast<std::uint32_t>(Tr::pipe_bytes(stages));
  const std::uint32_t q_part_bytes = static_cast<std::uint32_t>(args.rows_per_block) * D * 2;

  // Q: rows_per_block x D, scaled into the log2 domain, stored as hi (+ lo) parts, swizzled like
  // the K/V tiles. Padding rows are zero (their scores are 0; they are never written out).
  for (int i = threadIdx.x; i < args.rows_per_block * kChunks; i += Tr::kThreads) {
    const int r = i / kChunks, c = i - r * kChunks;
    float x[8] = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
    if (r < nrows) {
      const int row = row0 + r;
      const std::int64_t qrow = args.row_q != nullptr ? args.row_q[row] : row;
      if constexpr (Ops::kFp8) {
        // Slots 8 (c & 1) .. + 7 of k16 step c / 2 hold the dims the FP8 K fragments pair them with.
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          const int d = q_dim_of_slot(c >> 1, 8 * (c & 1) + 2 * j);
          const float2 v = *reinterpret_cast<const float2*>(args.q + qrow * D + d);
          x[2 * j] = v.x;
          x[2 * j + 1] = v.y;
        }
      } else {
        const float4* src = reinterpret_cast<const float4*>(args.q + qrow * D + c * 8);
        const float4 a = src[0], b = src[1];
        x[0] = a.x; x[1] = a.y; x[2] = a.z; x[3] = a.w; x[4] = b.x; x[5] = b.y; x[6] = b.z; x[7] = b.w;
      }
    }
    const float q_mul = args.q_scale * Ops::kQBoost;
    std::uint32_t hi[4], lo[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float a = x[2 * j] * q_mul, b = x[2 * j + 1] * q_mul;
      hi[j] = Ops::pack(a, b);
      const float2 h = Ops::unpack(hi[j]);
      lo[j] = Ops::pack(a - h.x, b - h.y);
    }
    const std::uint32_t dst = q_smem + static_cast<std::uint32_t>(r * kChunks + (c ^ (r & 7))) * 16u;
    asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(dst), "r"(hi[0]), "r"(hi[1]), "r"(hi[2]), "r"(hi[3]));
    if constexpr (Ops::kSplit)
      asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};" ::"r"(dst + q_part_bytes), "r"(lo[0]), "r"(lo[1]),
                   "r"(lo[2]), "r"(lo[3]));
  }

  const RowLocator<KV> loc(kv, item.seq, item.kv_head, page_div);
  const auto k_stage = [&](int s) { return smem_base + static_cast<std::uint32_t>(s) * 2u * Tr::kTileBytes; };
  for (int s = 0; s < stages - 1; ++s) {
    if (s < num_tiles) stage_kv_tile<KV, D, kTile, Tr::kThreads>(kv, loc, tile_start(s), t_end, k_stage(s),
                                                                   k_stage(s) + Tr::kTileBytes);
    cp_async_commit();
  }

  // Per-thread fragment state: rows g = lane / 4 and g + 8 of the warp's row tile.
  const int g = lane / 4, tq = lane % 4;
  float o_acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) o_acc[n][0] = o_acc[n][1] = o_acc[n][2] = o_acc[n][3] = 0.f;
  float m_run[2] = {-INFINITY, -INFINITY}, l_run[2] = {0.f, 0.f};
  const bool active = wr * 16 < nrows;  // a row tile of padding only skips the math

  // ldmatrix lane addresses (row / chunk offsets within a 16 x 16 operand block).
  const int q_row = wr * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, q_chunk = lane >> 4;
  const int k_tok = (lane & 7) + ((lane >> 4) << 3), k_chunk = (lane >> 3) & 1;
  const int v_tok = (lane & 7) + ((lane >> 3) & 1) * 8, v_chunk = lane >> 4;

  // FP8: this item's (one KV head's) dequantization scales, with the widening's unit scale and the
  // q / P boosts folded in: scores x k_mul, the normalised output x out_mul.
  float k_mul = 1.f, out_mul = 1.f;
  if constexpr (Ops::kFp8) {
    k_mul = kv_scale(kv.k_scale, item.kv_head) * fp8_pair_unit_scale<T>() / Ops::kQBoost;
    out_mul = kv_scale(kv.v_scale, item.kv_head) * fp8_pair_unit_scale<T>() / Ops::kPBoost;
  }

  for (int tile = 0; tile < num_tiles; ++tile) {
    if (stages >= 3) cp_async_wait<1>();
    else cp_async_wait<0>();
    __syncthreads();  // tile `tile` is visible; everyone is done with the stage refilled below
    {
      const int next = tile + stages - 1;
      if (next < num_tiles)
        stage_kv_tile<KV, D, kTile, Tr::kThreads>(kv, loc, tile_start(next), t_end,
                                                  k_stage(next % stages), k_stage(next % stages) + Tr::kTileBytes);
      cp_async_commit();
    }
    if (!active) continue;
    const std::uint32_t ks = k_stage(tile % stages), vs = ks + Tr::kTileBytes;
    const std::int64_t tile_t0 = tile_start(tile);

    // S = Q K^T over this warp's sub-tiles of 16 tokens (two n8 accumulators each).
    float s[4][2][4];
#pragma unroll
    for (int c = 0; c < 4; ++c)
#pragma unroll
      for (int j = 0; j < 2; ++j) s[c][j][0] = s[c][j][1] = s[c][j][2] = s[c][j][3] = 0.f;
    if constexpr (Ops::kFp8) {
#pragma unroll
      for (int span = 0; span < D / 64; ++span) {
        std::uint32_t a[4][4], a_lo[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int qc = 2 * (4 * span + i) + q_chunk;
          const std::uint32_t qa = q_smem + static_cast<std::uint32_t>(q_row * kChunks + (qc ^ (q_row & 7))) * 16u;
          ldmatrix_x4(a[i], qa);
          ldmatrix_x4(a_lo[i], qa + q_part_bytes);
        }
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          if (c < nsub) {
#pragma unroll
            for (int j = 0; j < 2; ++j) {
              std::uint32_t b[4][2];
              load_k_fragments<T, kKvChunks>(ks, wt * sub + c * 16 + j * 8 + g, span, tq, b);
#pragma unroll
              for (int i = 0; i < 4; ++i) {
                Ops::mma(s[c][j], a[i], b[i][0], b[i][1]);
                Ops::mma(s[c][j], a_lo[i], b[i][0], b[i][1]);
              }
            }
          }
        }
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        std::uint32_t a[4], a_lo[4];
        const int qc = 2 * kk + q_chunk;
        const std::uint32_t qa = q_smem + static_cast<std::uint32_t>(q_row * kChunks + (qc ^ (q_row & 7))) * 16u;
        ldmatrix_x4(a, qa);
        if constexpr (Ops::kSplit) ldmatrix_x4(a_lo, qa + q_part_bytes);
#pragma unroll
        for (int c = 0; c < 4; ++c) {
          if (c < nsub) {
            const int tok = wt * sub + c * 16 + k_tok, kc = 2 * kk + k_chunk;
            std::uint32_t b[4];
            ldmatrix_x4(b, ks + static_cast<std::uint32_t>(tok * kChunks + (kc ^ (tok & 7))) * 16u);
            Ops::mma(s[c][0], a, b[0], b[1]);
            Ops::mma(s[c][1], a, b[2], b[3]);
            if constexpr (Ops::kSplit) {
              Ops::mma(s[c][0], a_lo, b[0], b[1]);
              Ops::mma(s[c][1], a_lo, b[2], b[3]);
            }
          }
        }
      }
    }

    // Online softmax in the log2 domain. Tokens past the split's end score -inf.
    float mx[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (c < nsub) {
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const std::int64_t t = tile_t0 + wt * sub + c * 16 + j * 8 + 2 * tq + (e & 1);
            if constexpr (Ops::kFp8) s[c][j][e] *= k_mul;
            if (t >= t_end) s[c][j][e] = -INFINITY;
            mx[e >> 1] = fmaxf(mx[e >> 1], s[c][j][e]);
          }
      }
    }
    float base[2], alpha[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 1));
      mx[h] = fmaxf(mx[h], __shfl_xor_sync(0xffffffffu, mx[h], 2));
      const float m_new = fmaxf(m_run[h], mx[h]);
      base[h] = m_new == -INFINITY ? 0.f : m_new;  // nothing seen yet: exp2(-inf - 0) = 0, no NaN
      alpha[h] = exp2f(m_run[h] - base[h]);
      m_run[h] = m_new;
      l_run[h] *= alpha[h];
    }
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      o_acc[n][0] *= alpha[0];
      o_acc[n][1] *= alpha[0];
      o_acc[n][2] *= alpha[1];
      o_acc[n][3] *= alpha[1];
    }

    // O += P V, 16 tokens (one k16 step) per sub-tile.
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      if (c < nsub) {
        float p[2][4];
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            p[j][e] = exp2f(s[c][j][e] - base[e >> 1]);
            l_run[e >> 1] += p[j][e];
          }
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) p[j][e] *= Ops::kPBoost;  // l_run summed the unboosted weights
        std::uint32_t a[4] = {Ops::pack(p[0][0], p[0][1]), Ops::pack(p[0][2], p[0][3]), Ops::pack(p[1][0], p[1][1]),
                              Ops::pack(p[1][2], p[1][3])};
        std::uint32_t a_lo[4];
        if constexpr (Ops::kSplit) {
#pragma unroll
          for (int w = 0; w < 4; ++w) {
            const float2 h = Ops::unpack(a[w]);
            const int j = w >> 1, e = (w & 1) * 2;
            a_lo[w] = Ops::pack(p[j][e] - h.x, p[j][e + 1] - h.y);
          }
        }
        if constexpr (Ops::kFp8) {
#pragma unroll
          for (int blk = 0; blk < D / 32; ++blk) {
            std::uint32_t b[4][2];
            load_v_fragments<T, kKvChunks>(vs, wt * sub + c * 16, blk, g, tq, b);
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              Ops::mma(o_acc[4 * blk + q], a, b[q][0], b[q][1]);
              Ops::mma(o_acc[4 * blk + q], a_lo, b[q][0], b[q][1]);
            }
          }
        } else {
          const int tok = wt * sub + c * 16 + v_tok;
#pragma unroll
          for (int dn = 0; dn < D / 16; ++dn) {
            const int vc = 2 * dn + v_chunk;
            std::uint32_t b[4];
            ldmatrix_x4_trans(b, vs + static_cast<std::uint32_t>(tok * kChunks + (vc ^ (tok & 7))) * 16u);
            Ops::mma(o_acc[2 * dn], a, b[0], b[1]);
            Ops::mma(o_acc[2 * dn + 1], a, b[2], b[3]);
            if constexpr (Ops::kSplit) {
              Ops::mma(o_acc[2 * dn], a_lo, b[0], b[1]);
              Ops::mma(o_acc[2 * dn + 1], a_lo, b[2], b[3]);
            }
          }
        }
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the stages and Q are free: reuse them for the cross-warp merge

  // Each warp's unnormalised (O, m, l) of its 16 rows: O at [warp][16][D], then m and l.
  float* red_o = reinterpret_cast<float*>(smem);
  float* red_m = red_o + Tr::kWarps * 16 * D;
  float* red_l = red_m + Tr::kWarps * 16;
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 1);
    l_run[h] += __shfl_xor_sync(0xffffffffu, l_run[h], 2);
  }
  if (active) {
    if constexpr (Ops::kFp8) {
      // Columns 2tq, 2tq + 1 of n8 blocks 4 blk + 0..3 are dims 32 blk + 8 tq + 0..3 and + 4..7 (o_dim_of).
#pragma unroll
      for (int blk = 0; blk < D / 32; ++blk) {
        const float(&o0)[4] = o_acc[4 * blk];
        const float(&o1)[4] = o_acc[4 * blk + 1];
        const float(&o2)[4] = o_acc[4 * blk + 2];
        const float(&o3)[4] = o_acc[4 * blk + 3];
        float* r0 = red_o + (warp * 16 + g) * D + o_dim_of(4 * blk, 2 * tq);
        reinterpret_cast<float4*>(r0)[0] = make_float4(o0[0], o1[0], o2[0], o3[0]);
        reinterpret_cast<float4*>(r0)[1] = make_float4(o0[1], o1[1], o2[1], o3[1]);
        reinterpret_cast<float4*>(r0 + 8 * D)[0] = make_float4(o0[2], o1[2], o2[2], o3[2]);
        reinterpret_cast<float4*>(r0 + 8 * D)[1] = make_float4(o0[3], o1[3], o2[3], o3[3]);
      }
    } else {
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        float* r0 = red_o + (warp * 16 + g) * D + n * 8 + 2 * tq;
        *reinterpret_cast<float2*>(r0) = make_float2(o_acc[n][0], o_acc[n][1]);
        *reinterpret_cast<float2*>(r0 + 8 * D) = make_float2(o_acc[n][2], o_acc[n][3]);
      }
    }
    if (tq == 0) {
      red_m[warp * 16 + g] = m_run[0];
      red_m[warp * 16 + g + 8] = m_run[1];
      red_l[warp * 16 + g] = l_run[0];
      red_l[warp * 16 + g + 8] = l_run[1];
    }
  }
  __syncthreads();

  // Row r of the block sits in row tile r / 16, held by warps (r / 16) * WT + 0 .. WT - 1.
  for (int i = threadIdx.x; i < nrows * (D / 4); i += Tr::kThreads) {
    const int r = i / (D / 4), d4 = i - r * (D / 4);
    const int w0 = (r / 16) * wt_count, rr = r % 16;
    float m = -INFINITY;
    for (int w = 0; w < wt_count; ++w) m = fmaxf(m, red_m[(w0 + w) * 16 + rr]);
    float l = 0.f;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    if (m != -INFINITY) {
      for (int w = 0; w < wt_count; ++w) {
        const float mw = red_m[(w0 + w) * 16 + rr];
        const float sc = mw == -INFINITY ? 0.f : exp2f(mw - m);
        l += sc * red_l[(w0 + w) * 16 + rr];
        const float4 ow = reinterpret_cast<const float4*>(red_o + ((w0 + w) * 16 + rr) * D)[d4];
        acc.x += sc * ow.x;
        acc.y += sc * ow.y;
        acc.z += sc * ow.z;
        acc.w += sc * ow.w;
      }
    }
    const float inv = l > 0.f ? out_mul / l : 0.f;
    const int row = row0 + r;
    reinterpret_cast<float4*>(state_o(args, work, row, D))[d4] =
        make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv);
    if (d4 == 0) *state_lse(args, work, row) = l > 0.f ? (m + log2f(l)) * 0.69314718055994531f : -INFINITY;
  }
  merge_if_last<D, Tr::kThreads>(args, work, row0, nrows, reinterpret_cast<float*>(smem),
                                 static_cast<int>(Tr::shared_bytes(args.rows_per_block, stages) / sizeof(float)));
}

}  // namespace decode_bench::device
