// The warpgroup-MMA row-attention kernels (sm_90a only: kernels/CMakeLists.txt) for FP16 K/V,
// contiguous and paged (kernels/row_attention_wgmma_table.cuh lists them).
#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_wgmma_table.cuh"

namespace decode_bench {

template <class KV>
WgmmaRowKernel wgmma_row_kernel(int rows_per_block, int d, int tile, bool host_length) {
  return wgmma_table::kernel<KV>(rows_per_block, d, tile, host_length);
}

bool wgmma_row_kernel_runs_on(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return false;
  return major == 9 && minor == 0;
}

template WgmmaRowKernel wgmma_row_kernel<ContiguousKV<__half>>(int, int, int, bool);
template WgmmaRowKernel wgmma_row_kernel<PagedKV<__half>>(int, int, int, bool);

}  // namespace decode_bench
