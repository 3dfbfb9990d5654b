// The warpgroup-MMA row-attention kernels (sm_90a only: kernels/CMakeLists.txt) for BF16 K/V, the
// packed split in blocks of one warpgroup, contiguous and paged (kernels/row_attention_wgmma_table.cuh).
#include <cuda_bf16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_wgmma_table.cuh"

namespace decode_bench {

template <class KV>
WgmmaRowKernel wgmma_row_kernel(int rows_per_block, int d, int tile, bool host_length) {
  return wgmma_table::kernel<KV>(rows_per_block, d, tile, host_length);
}

template WgmmaRowKernel wgmma_row_kernel<ContiguousKV<__nv_bfloat16>>(int, int, int, bool);
template WgmmaRowKernel wgmma_row_kernel<PagedKV<__nv_bfloat16>>(int, int, int, bool);

}  // namespace decode_bench
