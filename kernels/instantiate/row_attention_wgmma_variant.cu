// The warpgroup-MMA row-attention kernel's twins for attention variants of one query token
// (sm_90a only: kernels/CMakeLists.txt), blocks of one warpgroup over 64-token tiles, contiguous
// and paged, where a preset uses them: FP16 at d 128 (the variants preset's 32 / 8 heads) and BF16
// at d 64 (gpt-oss's 64 / 8 heads, with sinks). Apart from the plain kernels' units, whose code
// they leave as it was.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_wgmma.cuh"
#include "kernels/row_attention_wgmma.hpp"

namespace decode_bench {

template <class KV>
WgmmaRowKernel wgmma_row_variant_kernel(int rows_per_block, int d) {
  using T = typename KV::value_type;
  constexpr bool kBf16 = std::is_same_v<T, __nv_bfloat16>;
  constexpr int D = kBf16 ? 64 : 128;
  using Tr = device::RowWgmmaTraits<1, D, 64, kBf16>;
  if (d != D || rows_per_block != Tr::kRows) return {};
  return {reinterpret_cast<const void*>(&device::row_attention_wgmma_variant_kernel<KV, D>), Tr::shared_bytes(),
          Tr::kThreads, Tr::kTile, Tr::kStages};
}

template WgmmaRowKernel wgmma_row_variant_kernel<ContiguousKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_variant_kernel<PagedKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_variant_kernel<ContiguousKV<__nv_bfloat16>>(int, int);
template WgmmaRowKernel wgmma_row_variant_kernel<PagedKV<__nv_bfloat16>>(int, int);

}  // namespace decode_bench
