#pragma once
// FP8 (E4M3 / E5M2) K/V on the tensor-core row-attention path (kernels/row_attention_mma.cuh).
// The tiles stay FP8 bytes in shared memory (cp.async moves half FP16's bytes; a stage is half the
// size) and become FP16 B operands of mma.m16n8k16 in registers. ldmatrix moves 16-bit elements,
// so the fragments are built from plain shared loads and byte permutes:
//   K (S = Q K^T, B[k][n] = K[token n][dim k]): a lane (g = lane / 4, tq = lane % 4) needs 4 dims
//     of token g per k16 step. k is only a summation index, so the dims of each 64-dim span are
//     permuted: in step i of the span lane tq takes dims 16 tq + 4 i .. + 3. One 16-byte load of
//     its token serves the 4 steps of the span, and Q is stored in the same order (q_dim_of_slot).
//   V (O += P V, B[k][n] = V[token k][dim n]): a lane needs tokens 2tq, 2tq+1, 2tq+8, 2tq+9 of the
//     16 at one dim per n8 block. A 4-byte load per token gives 4 dims = 4 n8 blocks, block q of a
//     32-dim block holding dim 4 col + q in column col; the output columns come out in that order
//     and the epilogue puts them back (o_dim_of).
// The widening is an integer move: E5M2 is the top byte of an FP16; E4M3 placed as
// s|0eeee|mmm0000000 reads as its value x 2^-8 (fp8_pair_unit_scale = 256), subnormals included.
// Both are exact: the roundings left are those of q and P. (Vec16's E4M3 widening may use the
// conversion unit instead; this path has its own unit scale, so the two never mix.)
#include <cstdint>

#include <cuda_fp8.h>

#include "kernels/cp_async.cuh"

namespace decode_bench::device {

// 16-byte chunk c of row r of an FP8 tile sits at chunk kv_chunk_slot (row_attention_common.cuh):
// c ^ h(r) with h(0..7) = 0, 4, 2, 6, 4, 0, 6, 2 (D >= 128: rows of 128 B or more). The K loads
// (rows 2i and 2i + 1 in one 8-lane phase, 4 aligned chunks each) then use the two halves of the
// banks, and the V loads (rows 0, 2, 4, 6 or 1, 3, 5, 7 at one chunk pair) four distinct quarters.
// D = 64 (4 chunks, two rows per 128 B) has two layouts of h left: K is conflict-free, V 2-way.
template <int kChunks>
__device__ __forceinline__ int fp8_chunk_slot(int r, int c) {
  if constexpr (kChunks >= 8) return c ^ (((r & 1) << 2) ^ (((r >> 1) & 3) << 1));
  else return c ^ (((r >> 1) & 1) << 1);
}

__device__ __forceinline__ std::uint32_t load_shared_u32(std::uint32_t shared_src) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(shared_src) : "memory");
  return v;
}

// Two FP8 values in bytes 1 and 3 of p (bytes 0 and 2 are ignored) -> an FP16 pair, low half
// from byte 1: E5M2 exactly, E4M3 times 2^-8 = 1 / fp8_pair_unit_scale.
template <class T> constexpr float fp8_pair_unit_scale();
template <> constexpr float fp8_pair_unit_scale<__nv_fp8_e5m2>() { return 1.f; }
template <> constexpr float fp8_pair_unit_scale<__nv_fp8_e4m3>() { return 256.f; }
template <class T> __device__ __forceinline__ std::uint32_t fp8_pair_to_half2(std::uint32_t p);
template <> __device__ __forceinline__ std::uint32_t fp8_pair_to_half2<__nv_fp8_e5m2>(std::uint32_t p) {
  return p & 0xff00ff00u;
}
template <> __device__ __forceinline__ std::uint32_t fp8_pair_to_half2<__nv_fp8_e4m3>(std::uint32_t p) {
  return (p & 0x80008000u) | ((p >> 1) & 0x3f803f80u);
}

// Dim of Q in slot j (0..15) of k16 step kb: the permutation load_k_fragments reads K in.
__device__ __forceinline__ int q_dim_of_slot(int kb, int j) {
  return (kb >> 2) * 64 + 16 * ((j & 7) >> 1) + 4 * (kb & 3) + 2 * (j >> 3) + (j & 1);
}

// Dim of output column col (0..7) of n8 block n (load_v_fragments' order).
__device__ __forceinline__ int o_dim_of(int n, int col) { return (n >> 2) * 32 + 4 * col + (n & 3); }

// B fragments of S = Q K^T from token row tok of a K tile, dims [64 span, 64 span + 64):
// b[i] for k16 step 4 span + i (dims 16 tq + 4 i .. + 3 of the span, in q_dim_of_slot order).
template <class T, int kChunks>
__device__ __forceinline__ void load_k_fragments(std::uint32_t tile, int tok, int span, int tq,
                                                 std::uint32_t (&b)[4][2]) {
  const int slot = tok * kChunks + fp8_chunk_slot<kChunks>(tok, 4 * span + tq);
  const uint4 w = load_shared_16B(tile + static_cast<std::uint32_t>(slot) * 16u);
  const std::uint32_t words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    b[i][0] = fp8_pair_to_half2<T>(__byte_perm(words[i], 0u, 0x1100));  // dims +0, +1
    b[i][1] = fp8_pair_to_half2<T>(__byte_perm(words[i], 0u, 0x3322));  // dims +2, +3
  }
}

// B fragments of O += P V for the 16 tokens from row tok0 of a V tile and the 32-dim block blk:
// b[q] is n8 block 4 blk + q (column col = dim 32 blk + 4 col + q).
template <class T, int kChunks>
__device__ __forceinline__ void load_v_fragments(std::uint32_t tile, int tok0, int blk, int g, int tq,
                                                 std::uint32_t (&b)[4][2]) {
  const int chunk = 2 * blk + (g >> 2);
  const std::uint32_t in_chunk = static_cast<std::uint32_t>(g & 3) * 4u;
  std::uint32_t w[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const int tok = tok0 + 2 * tq + (k & 1) + (k >> 1) * 8;  // k slots 2tq, 2tq+1, 2tq+8, 2tq+9
    const int slot = tok * kChunks + fp8_chunk_slot<kChunks>(tok, chunk);
    w[k] = load_shared_u32(tile + static_cast<std::uint32_t>(slot) * 16u + in_chunk);
  }
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    // Byte q of x in bytes 0-1, byte q of y in bytes 2-3.
    const unsigned sel = static_cast<unsigned>(((4 + q) << 12) | ((4 + q) << 8) | (q << 4) | q);
    b[q][0] = fp8_pair_to_half2<T>(__byte_perm(w[0], w[1], sel));
    b[q][1] = fp8_pair_to_half2<T>(__byte_perm(w[2], w[3], sel));
  }
}

}  // namespace decode_bench::device
