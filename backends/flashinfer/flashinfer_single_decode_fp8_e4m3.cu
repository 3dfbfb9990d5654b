// FlashInfer's single decode for FP8 E4M3 K/V with per-KV-head scales, FP16 q
// and o (flashinfer_single_decode_impl.cuh).
#include "backends/flashinfer/flashinfer_single_decode_impl.cuh"

namespace decode_bench::flashinfer_launch {

template cudaError_t single_decode<__nv_fp8_e4m3>(const SingleDecodeArgs<__nv_fp8_e4m3>&, void*, std::size_t,
                                                  cudaStream_t, std::string*);

}  // namespace decode_bench::flashinfer_launch
