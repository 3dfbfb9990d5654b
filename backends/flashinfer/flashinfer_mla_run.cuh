#pragma once
// The body of mla_run_<dtype> (flashinfer_mla.hpp), included by one translation unit per dtype:
// FlashInfer's BatchMLAPagedAttention (its FA2 kernel) at kv_lora_rank 512 and rope_dim 64, causal
// mask, q, latents and o in one 16-bit type. FlashInfer picks, at run time, its KV tile and stage
// count from the device's shared memory per SM (three configurations, all compiled; an H100's 228 KB
// takes the largest: 64-token KV tiles, two stages, the QK product split over both warpgroups).
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/mla.cuh>

#include "backends/flashinfer/flashinfer_mla_params.cuh"  // run_mla_kernel

namespace decode_bench::flashinfer_launch::mla_detail {

template <class T>
cudaError_t run(const MlaArgs& a, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                cudaStream_t stream, std::string* error) {
  using flashinfer::MaskMode;
  const auto kernel = [](auto& p, std::uint32_t blks_x, std::uint32_t blks_y, cudaStream_t s) {
    return flashinfer::mla::BatchMLAPagedAttention<MaskMode::kCausal, kCkvDim, kKpeDim>(p, blks_x, blks_y, s);
  };
  return run_mla_kernel<T>(a, plan, float_workspace, int_workspace, stream, error, kernel);
}

}  // namespace decode_bench::flashinfer_launch::mla_detail
