// FlashInfer's single decode for BF16 K/V, q and o
// (flashinfer_single_decode_impl.cuh).
#include "backends/flashinfer/flashinfer_single_decode_impl.cuh"

namespace decode_bench::flashinfer_launch {

template cudaError_t single_decode<__nv_bfloat16>(const SingleDecodeArgs<__nv_bfloat16>&, void*, std::size_t,
                                                  cudaStream_t, std::string*);

}  // namespace decode_bench::flashinfer_launch
