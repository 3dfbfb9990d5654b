// FlashInfer's Hopper MLA decode over paged latents (flashinfer_mla.hpp), FP16 q, latents and o:
// its one sm_90a configuration (flashinfer_mla_fa3_run.cuh).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/flashinfer/flashinfer_mla_fa3_run.cuh"

namespace decode_bench::flashinfer_launch {

cudaError_t mla_fa3_run_fp16(const MlaArgs& args, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                             cudaStream_t stream, std::string* error) {
  return mla_detail::run_fa3<__half>(args, plan, float_workspace, int_workspace, stream, error);
}

}  // namespace decode_bench::flashinfer_launch
