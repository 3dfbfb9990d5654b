#pragma once
// What the FlashInfer launchers (backends/flashinfer/) share: the version of the headers they were
// compiled against, and FlashInfer's own refusals turned into sentences.
//
// The launchers are thin: plain pointers, integers and a stream in, cudaError_t out. FlashInfer
// reports an unsupported configuration by throwing flashinfer::Error from its dispatch macros; the
// launchers catch it, return cudaErrorInvalidValue and put FlashInfer's message in *error.
#include <optional>
#include <string>
#include <string_view>

namespace decode_bench::flashinfer_launch {

// The flashinfer-python version whose headers this build compiled (cmake/FlashInfer.cmake).
std::string_view flashinfer_version();

// Head dimensions the launchers instantiate (one translation unit per path and head dimension).
inline constexpr int kHeadDim = 128;

// Why FlashInfer's CUDA-core decode kernels (SingleDecodeWithKVCache, BatchDecodeWithPagedKVCache)
// cannot run this head configuration, or nullopt. The GQA group is checked by FlashInfer's own
// dispatch table (DISPATCH_GQA_GROUP_SIZE in its utils.cuh), so the reason is its sentence, e.g.
// "Unsupported group_size: 7".
std::optional<std::string> cuda_core_decode_unsupported_reason(int heads_q, int heads_kv, int head_dim);

}  // namespace decode_bench::flashinfer_launch
