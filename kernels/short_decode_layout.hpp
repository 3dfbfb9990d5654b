#pragma once
// Shared memory of one short-path block (kernels/short_decode.cuh), computed once by the planner,
// carried by the plan (DecodePlan::short_layout) and handed to the kernel, so both sides agree on
// every offset. All offsets are bytes from the (16-byte aligned) dynamic window, each region
// 16-byte aligned:
//   q       (heads, h) fp32                  the block's query rows, as stored (scaled at the scores)
//   k, v    (rows, pitch) bytes              the sequence's K and V rows of the block's KV head
//   scores  (heads, rows) fp32               log2-domain scores, then the unnormalized
//                                            probabilities exp2(s - max) in place (0 past the length)
//   stats   (heads) fp32                     each head's output scale (V scale over the softmax sum)
// rows is the staged tokens rounded up to the kernel's row multiple: P V reads the probabilities
// and the V rows past the length (zeroed by the block) up to the next multiple of it. The CUDA-core
// P V (BF16, FP8) takes 4 tokens at a time (one broadcast float4 a head); the tensor-core one (FP16)
// 16, the k-step of mma.m16n8k16, whose K operand rows the scores' ldmatrix also reads.
// A row of h elements is `chunks` 16-byte chunks; the pitch is an odd number of chunks, so the 8
// lanes of one LDS.128 phase that read the same chunk of 8 consecutive rows (the scores: a token a
// lane) hit 8 different 16-byte bank groups.
#include <cstdint>

#include "kernels/host_device.hpp"

namespace decode_bench {

// The staged rows' multiple (above) of the CUDA-core kernels and of the tensor-core (FP16) ones.
inline constexpr int kShortRowMultiple = 4;
inline constexpr int kShortMmaRowMultiple = 16;

struct ShortDecodeLayout {
  int chunks = 0;       // 16-byte chunks of a K/V row of the runtime head dim
  int chunk_shift = 0;  // log2 of the chunks rounded up to a power of two (threads a row in the copies)
  int pitch = 0;        // bytes from one staged row to the next
  int rows = 0;         // staged rows: the capacity rounded up to the row multiple
  int heads = 0;        // query heads the regions are sized for
  int q = 0, k = 0, v = 0, scores = 0, stats = 0;
  int bytes = 0;        // the dynamic shared memory of the launch
};

// heads: query heads of a block (the most any block of the launch takes); capacity: tokens staged
// at most (>= 1); row_multiple: kShortRowMultiple or kShortMmaRowMultiple.
DB_HD ShortDecodeLayout short_decode_layout(int head_dim, int elem_bytes, int heads, int capacity, int row_multiple) {
  ShortDecodeLayout l;
  l.chunks = head_dim * elem_bytes / 16;
  while ((1 << l.chunk_shift) < l.chunks) ++l.chunk_shift;
  l.pitch = 16 * (l.chunks % 2 == 0 ? l.chunks + 1 : l.chunks);
  l.rows = (capacity + row_multiple - 1) / row_multiple * row_multiple;
  l.heads = heads;
  l.q = 0;
  l.k = l.q + heads * head_dim * 4;
  l.v = l.k + l.rows * l.pitch;
  l.scores = l.v + l.rows * l.pitch;
  l.stats = l.scores + heads * l.rows * 4;  // rows is a multiple of 4: 16-byte aligned
  l.bytes = l.stats + (heads * 4 + 15) / 16 * 16;
  return l;
}

}  // namespace decode_bench
