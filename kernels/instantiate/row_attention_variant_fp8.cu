// The attention variants' twins of the tensor-core row kernel for FP8 K/V (E4M3 and E5M2) at head
// dim 128, contiguous and paged: the narrow tiling only (FP8's; the wide one's two row tiles are
// FP16 / BF16 only, RowMmaTraits), so row_attention_variant_kernel(true) is nullptr and the planner
// never asks for it (its wide test fails for FP8). One translation unit for the four kernels, apart
// from the plain FP8 units, as the FP16 / BF16 twins are (row_attention_variant_fp16.cu).
#include <cuda_fp8.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_mma.cuh"
#include "kernels/row_attention_variant.hpp"

namespace decode_bench {

template <class KV, int D>
const void* row_attention_variant_kernel(bool wide) {
  return wide ? nullptr : reinterpret_cast<const void*>(&device::row_attention_mma_variant_kernel<KV, D, 4, 1>);
}

template const void* row_attention_variant_kernel<ContiguousKV<__nv_fp8_e4m3>, 128>(bool);
template const void* row_attention_variant_kernel<PagedKV<__nv_fp8_e4m3>, 128>(bool);
template const void* row_attention_variant_kernel<ContiguousKV<__nv_fp8_e5m2>, 128>(bool);
template const void* row_attention_variant_kernel<PagedKV<__nv_fp8_e5m2>, 128>(bool);

}  // namespace decode_bench
