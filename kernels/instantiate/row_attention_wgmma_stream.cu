// The warpgroup-MMA row-attention kernel's streamed grid (sm_90a only: kernels/CMakeLists.txt):
// the grouped decodes' host-length blocks of one warpgroup at d 128, FP16 (64 rows) and BF16 (32,
// the packed split), contiguous and paged. A unit of its own, as the variant twins are, so the
// plain kernels' units compile as they did.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_wgmma.cuh"
#include "kernels/row_attention_wgmma.hpp"

namespace decode_bench {

template <class KV>
WgmmaRowKernel wgmma_row_stream_kernel(int rows_per_block, int d) {
  using Tr = device::RowWgmmaTraits<1, 128, 64, std::is_same_v<typename KV::value_type, __nv_bfloat16>>;
  static_assert(Tr::kAhead < kRowStreamMinTiles, "the copies ahead reach at most the next item (kernels/row_attention.hpp)");
  static_assert(!Tr::kOverlap, "the streamed loop is the one without the P V overlap");
  if (d != 128 || rows_per_block != Tr::kRows) return {};
  return {reinterpret_cast<const void*>(&device::row_attention_wgmma_stream_kernel<KV, 128>),
          Tr::stream_shared_bytes(), Tr::kThreads, Tr::kTile, Tr::kStages};
}

template WgmmaRowKernel wgmma_row_stream_kernel<ContiguousKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_stream_kernel<PagedKV<__half>>(int, int);
template WgmmaRowKernel wgmma_row_stream_kernel<ContiguousKV<__nv_bfloat16>>(int, int);
template WgmmaRowKernel wgmma_row_stream_kernel<PagedKV<__nv_bfloat16>>(int, int);

}  // namespace decode_bench
