// A build without sm_90a (CMAKE_CUDA_ARCHITECTURES without 90): no warpgroup-MMA MLA kernel, so
// plan_mla_decode_for_device keeps the mma.sync kernel everywhere.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_decode_wgmma.hpp"

namespace decode_bench {

bool mla_decode_wgmma_compiled() { return false; }

template <class KV>
cudaError_t run_mla_decode_wgmma(const MlaShape&, const KV&, const std::int32_t*, const float*, float*, float*, void*,
                                 const MlaDecodePlan&, cudaStream_t) {
  return cudaErrorNotSupported;
}

template cudaError_t run_mla_decode_wgmma<ContiguousKV<__half>>(const MlaShape&, const ContiguousKV<__half>&,
                                                                const std::int32_t*, const float*, float*, float*,
                                                                void*, const MlaDecodePlan&, cudaStream_t);
template cudaError_t run_mla_decode_wgmma<PagedKV<__half>>(const MlaShape&, const PagedKV<__half>&, const std::int32_t*,
                                                           const float*, float*, float*, void*, const MlaDecodePlan&,
                                                           cudaStream_t);
template cudaError_t run_mla_decode_wgmma<ContiguousKV<__nv_bfloat16>>(const MlaShape&,
                                                                       const ContiguousKV<__nv_bfloat16>&,
                                                                       const std::int32_t*, const float*, float*,
                                                                       float*, void*, const MlaDecodePlan&,
                                                                       cudaStream_t);
template cudaError_t run_mla_decode_wgmma<PagedKV<__nv_bfloat16>>(const MlaShape&, const PagedKV<__nv_bfloat16>&,
                                                                  const std::int32_t*, const float*, float*, float*,
                                                                  void*, const MlaDecodePlan&, cudaStream_t);

}  // namespace decode_bench
