#pragma once
// Shared memory of one short-path block (kernels/short_decode.cuh), computed once by the planner
// and handed to the kernel, so both sides agree on every offset. All offsets are bytes from the
// (16-byte aligned) dynamic window, each region 16-byte aligned:
//   q       (heads, h) fp32              the block's query rows, as stored (scaled at the scores)
//   k, v    (capacity, pitch) bytes      the sequence's K and V rows of the block's KV head
//   scores  (heads, capacity) fp32       log2-domain scores
//   partial (warps, h) fp32              only where warps split a head's tokens (heads < warps)
//   stats   (heads) fp32                 the softmax sums l of those heads
// A row of h elements is `chunks` 16-byte chunks; the pitch is an odd number of chunks, so the 8
// lanes of one LDS.128 phase that read the same chunk of 8 consecutive rows (the scores: a token a
// lane) hit 8 different 16-byte bank groups.
#include <cstdint>

#include "kernels/host_device.hpp"

namespace decode_bench {

struct ShortDecodeLayout {
  int chunks = 0;       // 16-byte chunks of a K/V row of the runtime head dim
  int chunk_shift = 0;  // log2 of the chunks rounded up to a power of two (lanes a row in the P V loop)
  int pitch = 0;        // bytes from one staged row to the next
  int q = 0, k = 0, v = 0, scores = 0, partial = 0, stats = 0;
  int bytes = 0;        // the dynamic shared memory of the launch
};

// heads: query heads of a block; fewest_heads: of the block with the fewest (the last part of a
// group split over blocks); capacity: tokens staged at most (>= 1); warps: of the block.
DB_HD ShortDecodeLayout short_decode_layout(int head_dim, int elem_bytes, int heads, int fewest_heads, int capacity,
                                            int warps) {
  const auto align16 = [](int b) { return (b + 15) / 16 * 16; };
  ShortDecodeLayout l;
  l.chunks = head_dim * elem_bytes / 16;
  while ((1 << l.chunk_shift) < l.chunks) ++l.chunk_shift;
  l.pitch = 16 * (l.chunks % 2 == 0 ? l.chunks + 1 : l.chunks);
  l.q = 0;
  l.k = l.q + heads * head_dim * 4;
  l.v = l.k + capacity * l.pitch;
  l.scores = l.v + capacity * l.pitch;
  l.partial = l.scores + align16(heads * capacity * 4);
  const bool split_heads = fewest_heads < warps;  // some block's warps share a head
  l.stats = l.partial + (split_heads ? warps * head_dim * 4 : 0);
  l.bytes = l.stats + (split_heads ? align16(heads * 4) : 0);
  return l;
}

}  // namespace decode_bench
