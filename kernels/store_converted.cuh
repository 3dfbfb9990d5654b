#pragma once
// FP32 results stored in an output's type: FP32 as they are, FP16 / BF16 rounded to nearest. The
// MLA kernels and their split merge write o in the 16-bit type q came in; split partials stay FP32.
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace decode_bench::device {

// dst[0], dst[1] = x, y (dst 4-byte aligned for 16-bit Out, 8-byte for float).
template <class Out>
__device__ __forceinline__ void store_pair(Out* dst, float x, float y) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, __half> || std::is_same_v<Out, __nv_bfloat16>,
                "FP32, FP16 or BF16 output");
  if constexpr (std::is_same_v<Out, float>)
    *reinterpret_cast<float2*>(dst) = make_float2(x, y);
  else if constexpr (std::is_same_v<Out, __half>)
    *reinterpret_cast<__half2*>(dst) = __floats2half2_rn(x, y);
  else
    *reinterpret_cast<__nv_bfloat162*>(dst) = __floats2bfloat162_rn(x, y);
}

// dst[0..3] = v (dst 8-byte aligned for 16-bit Out, 16-byte for float): one store.
template <class Out>
__device__ __forceinline__ void store_quad(Out* dst, float4 v) {
  if constexpr (std::is_same_v<Out, float>) {
    *reinterpret_cast<float4*>(dst) = v;
  } else {
    alignas(8) Out pair[4];
    store_pair(pair, v.x, v.y);
    store_pair(pair + 2, v.z, v.w);
    *reinterpret_cast<uint2*>(dst) = *reinterpret_cast<const uint2*>(pair);
  }
}

}  // namespace decode_bench::device
