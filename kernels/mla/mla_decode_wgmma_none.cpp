// A build without sm_90a (CMAKE_CUDA_ARCHITECTURES without 90): no warpgroup-MMA MLA kernel, so
// plan_mla_decode_for_device keeps the mma.sync kernel everywhere.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_decode_wgmma.hpp"

namespace decode_bench {

bool mla_decode_wgmma_compiled() { return false; }

template <class KV>
cudaError_t run_mla_decode_wgmma(const MlaShape&, const KV&, const std::int32_t*, const typename KV::value_type*,
                                 typename KV::value_type*, float*, void*, const MlaDecodePlan&, cudaStream_t) {
  return cudaErrorNotSupported;
}

cudaError_t mla_decode_wgmma_resident_clusters(int, int, int* clusters) {
  *clusters = 0;
  return cudaErrorNotSupported;
}

cudaError_t mla_decode_wgmma_resident_blocks(int, int* blocks) {
  *blocks = 0;
  return cudaErrorNotSupported;
}

DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCES

}  // namespace decode_bench
