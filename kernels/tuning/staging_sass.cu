// One K/V tile's staging (stage_kv_tile, kernels/row_attention_common.cuh) alone, in a loop over
// tiles, for reading its SASS: scripts/staging_sass.sh compiles this file for sm_90 and counts the
// instructions of each loop (docs/history/kernel-notes.md, "Paged rows resolved once per warp"). Not linked
// into any target. The staging is the narrow tensor-core tiling's (FP16, D 128, 128 threads), with
// paged rows resolved once per warp (kResolveRowsOnce) and in every lane (the form before it).
#include <cuda_fp16.h>

#include "kernels/row_attention_common.cuh"

namespace decode_bench {

template <class KV, bool kResolveRowsOnce>
__global__ void stage_tiles(const KV kv, FastDivmod page_div, std::int64_t t0, std::int64_t t_end, int tiles) {
  extern __shared__ __align__(128) unsigned char smem[];
  const device::RowLocator<KV> loc(kv, 0, 0, page_div);
  const std::uint32_t base = device::shared_address(smem);
  for (int j = 0; j < tiles; ++j) {
    device::stage_kv_tile<KV, 128, 64, 128, kResolveRowsOnce>(kv, loc, t0 + 64 * j, t_end, base, base + 64 * 128 * 2);
    device::cp_async_commit();
  }
}

template __global__ void stage_tiles<PagedKV<__half>, true>(const PagedKV<__half>, FastDivmod, std::int64_t,
                                                           std::int64_t, int);
template __global__ void stage_tiles<PagedKV<__half>, false>(const PagedKV<__half>, FastDivmod, std::int64_t,
                                                            std::int64_t, int);
template __global__ void stage_tiles<ContiguousKV<__half>, false>(const ContiguousKV<__half>, FastDivmod,
                                                                 std::int64_t, std::int64_t, int);

}  // namespace decode_bench
