// A build without sm_90a (CMAKE_CUDA_ARCHITECTURES without 90): no warpgroup-MMA kernel, so the
// planner keeps the mma.sync tilings everywhere.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_wgmma.hpp"

namespace decode_bench {

template <class KV>
WgmmaRowKernel wgmma_row_kernel(int, int, int, bool) {
  return {};
}

template <class KV>
WgmmaRowKernel wgmma_row_variant_kernel(int, int) {
  return {};
}

template <class KV>
WgmmaRowKernel wgmma_row_stream_kernel(int, int) {
  return {};
}

bool wgmma_row_kernel_runs_on(int) { return false; }

template WgmmaRowKernel wgmma_row_kernel<ContiguousKV<__half>>(int, int, int, bool);
template WgmmaRowKernel wgmma_row_kernel<PagedKV<__half>>(int, int, int, bool);
template WgmmaRowKernel wgmma_row_kernel<ContiguousKV<__nv_bfloat16>>(int, int, int, bool);
template WgmmaRowKernel wgmma_row_kernel<PagedKV<__nv_bfloat16>>(int, int, int, bool);
template WgmmaRowKernel wgmma_row_variant_kernel<ContiguousKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_variant_kernel<PagedKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_variant_kernel<ContiguousKV<__nv_bfloat16>>(int, int);
template WgmmaRowKernel wgmma_row_variant_kernel<PagedKV<__nv_bfloat16>>(int, int);
template WgmmaRowKernel wgmma_row_stream_kernel<ContiguousKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_stream_kernel<PagedKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_stream_kernel<ContiguousKV<__nv_bfloat16>>(int, int);
template WgmmaRowKernel wgmma_row_stream_kernel<PagedKV<__nv_bfloat16>>(int, int);

}  // namespace decode_bench
