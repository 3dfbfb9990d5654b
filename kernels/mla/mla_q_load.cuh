#pragma once
// The MLA kernels' Q load (FP32 in global memory, rounded to the MMA's type in shared memory), in
// batches: each thread takes chunks tid, tid + Threads, ... of a block's Q, and every global load of
// a batch is issued before the first of them is converted and stored. A loop that loaded, converted
// and stored one chunk at a time left a block waiting a global round trip per chunk, with nothing
// else resident at one block an SM (results/reference/h100/ab-100d25a/stall-phases-100d25a.md).
#include <cstdint>

#include <cuda_runtime.h>

namespace decode_bench::device {

// Chunk i of Chunks, each Width floats (4 or 8): load(i, chunk) fills `chunk` (zeros where the
// chunk's row is past the problem's rows), store(i, chunk) converts and writes it. Chunks must be
// a multiple of Threads, and the chunks a thread takes a multiple of Batch.
template <int Chunks, int Threads, int Batch, int Width, class Load, class Store>
__device__ __forceinline__ void load_q_in_batches(int tid, Load load, Store store) {
  static_assert(Width == 4 || Width == 8, "chunks of one or two float4");
  static_assert(Chunks % Threads == 0, "every thread takes the same number of chunks");
  constexpr int kPerThread = Chunks / Threads;
  static_assert(kPerThread % Batch == 0, "whole batches");
#pragma unroll
  for (int batch = 0; batch < kPerThread; batch += Batch) {
    float4 chunk[Batch][Width / 4];
#pragma unroll
    for (int k = 0; k < Batch; ++k) load(tid + (batch + k) * Threads, chunk[k]);
#pragma unroll
    for (int k = 0; k < Batch; ++k) store(tid + (batch + k) * Threads, chunk[k]);
  }
}

}  // namespace decode_bench::device
