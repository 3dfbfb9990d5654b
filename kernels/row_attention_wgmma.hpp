#pragma once
// The Hopper warpgroup-MMA row-attention kernel (kernels/row_attention_wgmma.cuh) as the planner
// sees it. The kernel needs sm_90a, so it lives in translation units of its own
// (kernels/instantiate/row_attention_wgmma_{fp16,bf16}.cu, built for 90a when the build targets
// Hopper; kernels/row_attention_wgmma_none.cpp otherwise) and reaches the row-attention launcher
// only through these functions.
#include <cstddef>
#include <type_traits>

#include <cuda_bf16.h>

namespace decode_bench {

struct WgmmaRowKernel {
  const void* kernel = nullptr;  // nullptr: not in this build, or no such block size
  std::size_t shared_bytes = 0;  // dynamic shared memory of every launch
  int threads = 0;
  int tile = 0;    // tokens per stage
  int stages = 0;  // K/V tiles in shared memory
};

// The kernel compiled for head dim d (64 or 128) for blocks of rows_per_block rows over tiles of
// `tile` tokens, over KV = ContiguousKV or PagedKV of __half or __nv_bfloat16 (the explicit
// instantiations). FP16: 64 rows (one warpgroup) or 128 (two), tiles of 64 tokens (128 only at
// d 64 in blocks of 128 rows). BF16: 32 rows (one warpgroup, the packed split), 64-token tiles.
// host_length: its twin that takes a uniform grid's sequence length as its fourth argument and
// reads no seq_lens (RowAttentionPlan::uniform_len; FP16 d 64 blocks of 128 rows only).
template <class KV>
WgmmaRowKernel wgmma_row_kernel(int rows_per_block, int d, int tile = 64, bool host_length = false);

// The kernel's twin for attention variants of one query token (a window, a logits soft-cap,
// sinks; decode items), compiled for blocks of one warpgroup over 64-token tiles where a preset
// uses it: FP16 at d 128, BF16 at d 64 (gpt-oss); elsewhere none (nullptr kernel).
// kernels/instantiate/row_attention_wgmma_variant.cu.
template <class KV>
WgmmaRowKernel wgmma_row_variant_kernel(int rows_per_block, int d);

// The kernel's streamed grid (RowAttentionPlan::stream_blocks): the grouped decodes' host-length
// blocks of one warpgroup at d 128 (rows_per_block: 64 FP16, 32 BF16), fewer blocks than items,
// each streaming its items' tiles one into the next; its fifth argument is the item count.
// Elsewhere none (nullptr kernel). kernels/instantiate/row_attention_wgmma_stream.cu.
template <class KV>
WgmmaRowKernel wgmma_row_stream_kernel(int rows_per_block, int d);

// The query rows of a one-warpgroup block of storage type T: 64, or 32 for BF16, whose q and P
// split hi + lo into the accumulator rows the query rows leave free (the packed split).
template <class T>
constexpr int wgmma_warpgroup_rows() {
  return std::is_same_v<T, __nv_bfloat16> ? 32 : 64;
}

// Whether this build carries the kernel and `device` runs it (compute capability 9.0: H100, H200).
bool wgmma_row_kernel_runs_on(int device);

}  // namespace decode_bench
