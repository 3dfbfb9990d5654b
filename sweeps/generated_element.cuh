#pragma once
// One element of a generated K/V row in its storage type, the same on host and device: the
// generator's float (kernels/kv_generator.hpp) rounded to T, or for FP8 the generator's byte
// (kernels/fp8_generator.hpp). Shared by the decode fill (sweeps/decode_fill.cu) and the
// shared-prefix fill (sweeps/shared_prefix_fill.cu), and the row loop both fill kernels run.
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

// Writes K and V of row (s, h, t) of the view `kv` (written through its const pointers) with the
// generator's values of coordinates (coord_seq, h, coord_token); the warp's lanes split the row.
template <class KV>
__device__ __forceinline__ void write_generated_row(const KV& kv, int s, int h, std::int64_t t, int coord_seq,
                                                    std::int64_t coord_token, int head_dim, std::uint64_t seed,
                                                    int lane) {
  using T = typename KV::value_type;
  const std::int64_t at = kv.row_offset(s, h, t);
  T* k = const_cast<T*>(kv.k) + at;
  T* v = const_cast<T*>(kv.v) + at;
  const std::uint64_t key_k = generated_row_key(seed, GeneratedTensor::k, coord_seq, h, coord_token);
  const std::uint64_t key_v = generated_row_key(seed, GeneratedTensor::v, coord_seq, h, coord_token);
  for (int i = lane; i < head_dim; i += 32) {
    k[i] = generated_element<T>(key_k, i);
    v[i] = generated_element<T>(key_v, i);
  }
}

// Every row (sequence s, KV head h, token t < max_len) of a batch, one warp per row over a
// grid-stride loop: row(s, h, t, lane) for each, the lanes then splitting the row's D values.
template <class RowFn>
__device__ __forceinline__ void for_each_row_by_warp(int batch, int heads_kv, std::int64_t max_len, RowFn&& row) {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * heads_kv * max_len;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32; r < rows; r += warps)
    row(static_cast<int>(r / (max_len * heads_kv)), static_cast<int>((r / max_len) % heads_kv), r % max_len, lane);
}

}  // namespace decode_bench::sweeps
