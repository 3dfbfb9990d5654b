// The attention variants' twins of the tensor-core row kernel at head dim 64 (narrow and wide
// tilings), BF16 K/V, contiguous and paged: gpt-oss's attention (head_dim 64, a window of 128 on
// alternate layers, sinks on every layer; the models preset). A translation unit of its own, as the
// head-dim-128 twins (row_attention_variant_bf16.cu), so no plain kernel is compiled beside them.
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

template const void* row_attention_variant_kernel<ContiguousKV<__nv_bfloat16>, 64>(bool);
template const void* row_attention_variant_kernel<PagedKV<__nv_bfloat16>, 64>(bool);

}  // namespace decode_bench
