#pragma once
// The MLA kernels' Q load: a block's query rows of q, already in the MMA's 16-bit type (MlaIo),
// copied into shared memory by cp.async, 16 bytes (8 values) a copy, so that every copy of the
// block is in flight at once and no register holds Q on its way. A register path (load, convert,
// store) left a block waiting a global round trip per batch of loads, with nothing else resident
// at one block an SM (results/reference/h100/ab-100d25a/stall-phases-100d25a.md).
#include <cstdint>

#include "kernels/cp_async.cuh"

namespace decode_bench::device {

// Rows row0 .. row0 + Rows - 1 of sequence b's `rows` query rows of q ((batch, rows, 576), 16-bit):
// row r's chunk c (values 8 c .. 8 c + 7, c < 72) to dst(r, c), a shared-window address; rows at or
// past `rows` are zero-filled. Each thread takes chunks tid, tid + Threads, ...; the copies join
// the caller's next cp.async commit group, which the caller waits for before Q is read.
template <int Rows, int Threads, class Io, class Dst>
__device__ __forceinline__ void copy_q_rows_async(int tid, const Io* q, int b, int row0, int rows, Dst dst) {
  static_assert(sizeof(Io) == 2, "q in the MMA's 16-bit type");
  constexpr int kKd = 576, kChunks = kKd * 2 / 16;
  constexpr int kCopies = Rows * kChunks;
  const Io* const block_q = q + (static_cast<std::int64_t>(b) * rows + row0) * kKd;
#pragma unroll 6
  for (int i = tid; i < kCopies; i += Threads) {
    const int r = i / kChunks, c = i % kChunks;
    const bool valid = row0 + r < rows;
    cp_async_16B(dst(r, c), block_q + (valid ? r : 0) * kKd + 8 * c, valid);  // row0 < rows: row 0 is mapped
  }
}

}  // namespace decode_bench::device
