#pragma once
// The storage types the FlashInfer launchers are instantiated for (backends/flashinfer/, one
// translation unit per path and K/V type): the K/V type and the q/o type FlashInfer's CUDA-core
// decode reads and writes with it.
//   FP16 K/V   q and o FP16
//   BF16 K/V   q and o BF16
//   FP8 K/V    (E4M3 or E5M2) q and o FP16; the per-KV-head dequantization scales are applied
//              inside FlashInfer's kernel by an attention variant (flashinfer_kv_head_scale.cuh)
#include <optional>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace decode_bench::flashinfer_launch {

template <class KV>
inline constexpr bool is_fp8_kv = std::is_same_v<KV, __nv_fp8_e4m3> || std::is_same_v<KV, __nv_fp8_e5m2>;

// q / o type of each instantiated K/V type.
template <class KV>
struct IoTypeOf;
template <>
struct IoTypeOf<__half> {
  using type = __half;
};
template <>
struct IoTypeOf<__nv_bfloat16> {
  using type = __nv_bfloat16;
};
template <>
struct IoTypeOf<__nv_fp8_e4m3> {
  using type = __half;
};
template <>
struct IoTypeOf<__nv_fp8_e5m2> {
  using type = __half;
};
template <class KV>
using io_type_of = typename IoTypeOf<KV>::type;

// A K/V type with a compiled launcher (q / o then io_type_of<KV>).
template <class KV>
concept InstantiatedKv = std::is_same_v<KV, __half> || std::is_same_v<KV, __nv_bfloat16> || is_fp8_kv<KV>;

// FP8 K/V carry one K and one V scale per KV head (device arrays); the 16-bit types none.
template <InstantiatedKv KV>
std::optional<std::string> kv_scales_reason(const float* k_scale, const float* v_scale) {
  if constexpr (is_fp8_kv<KV>) {
    if (k_scale == nullptr || v_scale == nullptr) return "FP8 K/V need k_scale and v_scale (one per KV head)";
  } else if (k_scale != nullptr || v_scale != nullptr) {
    return "k_scale and v_scale are for FP8 K/V only";
  }
  return std::nullopt;
}

}  // namespace decode_bench::flashinfer_launch
