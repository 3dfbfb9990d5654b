#pragma once
// The MLA kernels' Q load (FP32 in global memory, rounded to the MMA's type in shared memory), in
// batches: each thread takes chunks tid, tid + Threads, ... of a block's Q, and every global load of
// a batch is issued before the first of them is converted and stored. A loop that loaded, converted
// and stored one chunk at a time left a block waiting a global round trip per chunk, with nothing
// else resident at one block an SM (results/reference/h100/ab-100d25a/stall-phases-100d25a.md).
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/mla/mla_args.hpp"  // MlaArgs

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

// The mma.sync kernels' Q (Tr: MlaTraits or MlaNarrowTraits; Ops: MmaStorage of the MMA's type):
// the block's Tr::kRows rows from q_rows (row row0 + r at or past args.rows zero), each row's
// Tr::kKd values as chunks of 4 (chunk i is row i / (kKd / 4), columns 4 (i % (kKd / 4)) ..),
// packed to the MMA's type into shared rows Tr::kRowBytes apart; 9 chunks a thread a batch. The
// row count is read from args where it is needed, as the kernels did before this helper, so that
// the kernels' code stays what it was.
template <class Tr, class Ops>
__device__ __forceinline__ void load_q_rows_pitched(int tid, const float* q_rows, int row0, const MlaArgs& args,
                                                    unsigned char* smem) {
  load_q_in_batches<Tr::kRows * (Tr::kKd / 4), Tr::kThreads, 9, 4>(
      tid,
      [&](int i, float4 (&x)[1]) {
        const int r = i / (Tr::kKd / 4), c4 = i % (Tr::kKd / 4);
        x[0] = make_float4(0.f, 0.f, 0.f, 0.f);
        if (row0 + r < args.rows) x[0] = *reinterpret_cast<const float4*>(q_rows + r * Tr::kKd + 4 * c4);
      },
      [&](int i, const float4 (&x)[1]) {
        const int r = i / (Tr::kKd / 4), c4 = i % (Tr::kKd / 4);
        *reinterpret_cast<uint2*>(smem + r * Tr::kRowBytes + c4 * 8) =
            make_uint2(Ops::pack(x[0].x, x[0].y), Ops::pack(x[0].z, x[0].w));
      });
}

}  // namespace decode_bench::device
