#pragma once
// The Hopper warpgroup-MMA row-attention kernel (kernels/row_attention_wgmma.cuh) as the planner
// sees it. The kernel needs sm_90a, so it lives in a translation unit of its own
// (kernels/instantiate/row_attention_wgmma_fp16.cu, built for 90a when the build targets Hopper;
// kernels/row_attention_wgmma_none.cpp otherwise) and reaches the row-attention launcher only
// through these two functions.
#include <cstddef>

namespace decode_bench {

struct WgmmaRowKernel {
  const void* kernel = nullptr;  // nullptr: not in this build, or no such block size
  std::size_t shared_bytes = 0;  // dynamic shared memory of every launch
  int threads = 0;
  int tile = 0;    // tokens per stage
  int stages = 0;  // K/V tiles in shared memory
};

// The FP16 kernel compiled for head dim d (64 or 128) for blocks of rows_per_block (64: one
// warpgroup, 128: two) rows over tiles of `tile` tokens (64; 128 only at d 64 in blocks of 128
// rows), over KV = ContiguousKV<__half> or PagedKV<__half> (the explicit instantiations).
// host_length: its twin that takes a uniform grid's sequence length as its fourth argument and
// reads no seq_lens (RowAttentionPlan::uniform_len; d 64 blocks of 128 rows only).
template <class KV>
WgmmaRowKernel wgmma_row_kernel(int rows_per_block, int d, int tile = 64, bool host_length = false);

// Whether this build carries the kernel and `device` runs it (compute capability 9.0: H100, H200).
bool wgmma_row_kernel_runs_on(int device);

}  // namespace decode_bench
