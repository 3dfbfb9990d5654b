// FlashInfer's paged batch decode (plan and run) for FP16 K/V, q and o
// (flashinfer_batch_decode_impl.cuh).
#include "backends/flashinfer/flashinfer_batch_decode_impl.cuh"

namespace decode_bench::flashinfer_launch {

template cudaError_t paged_decode_workspace_bytes<__half>(const PagedDecodeArgs<__half>&, const std::int32_t*,
                                                          std::size_t*, std::size_t*, std::string*);
template cudaError_t paged_decode_plan<__half>(const PagedDecodeArgs<__half>&, const std::int32_t*, void*, std::size_t,
                                               void*, void*, std::size_t, cudaStream_t, PagedDecodePlan*, std::string*);
template cudaError_t paged_decode_run<__half>(const PagedDecodeArgs<__half>&, const PagedDecodePlan&, void*, void*,
                                              cudaStream_t, std::string*);

}  // namespace decode_bench::flashinfer_launch
