// FlashInfer's batch prefill over paged KV (flashinfer_batch_prefill.hpp), BF16 q, K/V and o: the
// kernels of its three query tiles (flashinfer_batch_prefill_run.cuh) and its merge.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/flashinfer/flashinfer_batch_prefill_run.cuh"

namespace decode_bench::flashinfer_launch {

cudaError_t paged_prefill_run_bf16(const PagedPrefillArgs& args, const PagedPrefillPlan& plan, void* float_workspace,
                                   void* int_workspace, cudaStream_t stream, std::string* error) {
  return prefill_detail::run<__nv_bfloat16>(args, plan, float_workspace, int_workspace, stream, error);
}

}  // namespace decode_bench::flashinfer_launch
