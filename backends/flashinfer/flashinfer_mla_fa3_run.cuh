#pragma once
// The body of mla_fa3_run_<dtype> (flashinfer_mla.hpp), included by one translation unit per dtype
// and compiled for sm_90a alone (backends/flashinfer/CMakeLists.txt): FlashInfer's Hopper MLA kernel
// (BatchMLAPageAttentionHopper of attention/mla_hopper.cuh, warpgroup MMA on CUTLASS 3's pipelines),
// at kv_lora_rank 512 and rope_dim 64, causal mask, q, latents and o in one 16-bit type. One
// configuration: 64 query rows and 64 KV tokens a tile, two stages. It runs the same MLAPlan work
// list as the FA2 kernel (its 64-row query tiles are the plan's), with the same parameters
// (flashinfer_mla_params.cuh), and merges split partials inside the kernel after a grid-wide sync.
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/mla_hopper.cuh>

#include "backends/flashinfer/flashinfer_mla_params.cuh"  // run_mla_kernel

namespace decode_bench::flashinfer_launch::mla_detail {

template <class T>
cudaError_t run_fa3(const MlaArgs& a, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                    cudaStream_t stream, std::string* error) {
  using flashinfer::MaskMode;
  const auto kernel = [](auto& p, std::uint32_t blks_x, std::uint32_t blks_y, cudaStream_t s) {
    return flashinfer::mla::BatchMLAPageAttentionHopper<MaskMode::kCausal, kCkvDim, kKpeDim>(p, blks_x, blks_y, s);
  };
  return run_mla_kernel<T>(a, plan, float_workspace, int_workspace, stream, error, kernel);
}

}  // namespace decode_bench::flashinfer_launch::mla_detail
