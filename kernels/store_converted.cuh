#pragma once
// FP32 results stored in an output's type: FP32 as they are, FP16 / BF16 rounded to nearest by the
// mma.sync operands' pair packing (MmaStorage::pack, kernels/mma_sync.cuh). The MLA kernels and
// their split merge write o in the 16-bit type q came in; split partials stay FP32.
#include <cstdint>
#include <type_traits>

#include "kernels/mma_sync.cuh"  // MmaStorage

namespace decode_bench::device {

// dst[0], dst[1] = x, y (dst 4-byte aligned for 16-bit Out, 8-byte for float).
template <class Out>
__device__ __forceinline__ void store_pair(Out* dst, float x, float y) {
  static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, __half> || std::is_same_v<Out, __nv_bfloat16>,
                "FP32, FP16 or BF16 output");
  if constexpr (std::is_same_v<Out, float>)
    *reinterpret_cast<float2*>(dst) = make_float2(x, y);
  else
    *reinterpret_cast<std::uint32_t*>(dst) = MmaStorage<Out>::pack(x, y);
}

// dst[0..3] = v (dst 8-byte aligned for 16-bit Out, 16-byte for float): one store.
template <class Out>
__device__ __forceinline__ void store_quad(Out* dst, float4 v) {
  if constexpr (std::is_same_v<Out, float>)
    *reinterpret_cast<float4*>(dst) = v;
  else
    *reinterpret_cast<uint2*>(dst) = make_uint2(MmaStorage<Out>::pack(v.x, v.y), MmaStorage<Out>::pack(v.z, v.w));
}

}  // namespace decode_bench::device
