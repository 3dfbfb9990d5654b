#pragma once
// One element of a generated K/V row in its storage type, the same on host and device: the
// generator's float (kernels/kv_generator.hpp) rounded to T, or for FP8 the generator's byte
// (kernels/fp8_generator.hpp). Shared by the decode fill (sweeps/decode_fill.cu) and the
// shared-prefix fill (sweeps/shared_prefix_fill.cu).
#include <cstdint>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/fp8_generator.hpp"
#include "kernels/kv_generator.hpp"

namespace decode_bench::sweeps {

template <class T>
__host__ __device__ __forceinline__ T stored(float x);
template <>
__host__ __device__ __forceinline__ float stored<float>(float x) { return x; }
template <>
__host__ __device__ __forceinline__ __half stored<__half>(float x) { return __float2half_rn(x); }
template <>
__host__ __device__ __forceinline__ __nv_bfloat16 stored<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// Element `dim` of a row: the generator's float rounded to T, or for FP8 the generator's byte (in
// units of the format; the per-head scales give it its magnitude, kernels/fp8_generator.hpp).
template <class T>
__host__ __device__ __forceinline__ T generated_element(std::uint64_t row_key, int dim) {
  if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>)
    return fp8_generated<T>(row_key, dim);
  else
    return stored<T>(generated_value(row_key, dim));
}

}  // namespace decode_bench::sweeps
