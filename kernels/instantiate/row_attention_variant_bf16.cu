// The attention variants' twins of the tensor-core row kernel (row_attention_mma_variant_kernel,
// narrow and wide tilings), BF16 K/V at head dim 128, contiguous and paged. A translation unit of
// their own: compiled beside the plain kernels, they changed ptxas's schedule of the plain wide
// kernel (same size, other instruction order; nvcc 13.0, sm_90 cubins compared against aee4226).
#include <cuda_bf16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_mma.cuh"
#include "kernels/row_attention_variant.hpp"

namespace decode_bench {

template <class KV, int D>
const void* row_attention_variant_kernel(bool wide) {
  return wide ? reinterpret_cast<const void*>(&device::row_attention_mma_variant_kernel<KV, D, 8, 2>)
              : reinterpret_cast<const void*>(&device::row_attention_mma_variant_kernel<KV, D, 4, 1>);
}

template const void* row_attention_variant_kernel<ContiguousKV<__nv_bfloat16>, 128>(bool);
template const void* row_attention_variant_kernel<PagedKV<__nv_bfloat16>, 128>(bool);

}  // namespace decode_bench
