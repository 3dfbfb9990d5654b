#include "sweeps/decode_fill.hpp"

#include <algorithm>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/kv_generator.hpp"
#include "sweeps/generated_element.cuh"

namespace decode_bench::sweeps {
namespace {

// Every token t < seq_lens[s] of every sequence, its own coordinates (s, h, t).
template <class KV>
__global__ void fill_kv_kernel(KV kv, const std::int32_t* seq_lens, int batch, std::int64_t max_len, int heads_kv,
                               int head_dim, std::uint64_t seed) {
  for_each_row_by_warp(batch, heads_kv, max_len, [&](int s, int h, std::int64_t t, int lane) {
    if (t < seq_lens[s]) write_generated_row(kv, s, h, t, s, t, head_dim, seed, lane);
  });
}

__global__ void fill_q_kernel(float* q, std::uint64_t seed, int batch, int heads_q, int head_dim) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * heads_q * head_dim;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / head_dim;
    q[i] = generated_value(generated_row_key(seed, GeneratedTensor::q, static_cast<int>(row / heads_q),
                                             static_cast<int>(row % heads_q), 0),
                           static_cast<int>(i % head_dim));
  }
}

}  // namespace

std::uint64_t kv_seed(std::uint64_t point_seed) { return point_seed * 1000003 + 1; }
std::uint64_t q_seed(std::uint64_t point_seed) { return point_seed * 7919 + 5; }

template <class T>
void fill_kv_host(std::span<T> out, bool is_v, std::uint64_t point_seed, int seq, int heads_kv, std::int64_t len,
                  int head_dim) {
  const GeneratedTensor which = is_v ? GeneratedTensor::v : GeneratedTensor::k;
  std::size_t at = 0;
  for (int h = 0; h < heads_kv; ++h)
    for (std::int64_t t = 0; t < len; ++t) {
      const std::uint64_t key = generated_row_key(kv_seed(point_seed), which, seq, h, t);
      for (int i = 0; i < head_dim; ++i) out[at++] = generated_element<T>(key, i);
    }
}

void fill_q_host(std::span<float> out, std::uint64_t point_seed, int batch, int heads_q, int head_dim) {
  std::size_t at = 0;
  for (int s = 0; s < batch; ++s)
    for (int h = 0; h < heads_q; ++h) {
      const std::uint64_t key = generated_row_key(q_seed(point_seed), GeneratedTensor::q, s, h, 0);
      for (int i = 0; i < head_dim; ++i) out[at++] = generated_value(key, i);
    }
}

template <class KV>
cudaError_t fill_kv_device(const KV& kv, const std::int32_t* seq_lens, int batch, std::int64_t max_len, int heads_kv,
                           int head_dim, std::uint64_t point_seed, cudaStream_t stream) {
  const std::int64_t rows = static_cast<std::int64_t>(batch) * heads_kv * max_len;
  if (rows == 0) return cudaSuccess;
  const int blocks = static_cast<int>(std::min<std::int64_t>((rows + 7) / 8, 65536));
  fill_kv_kernel<<<blocks, 256, 0, stream>>>(kv, seq_lens, batch, max_len, heads_kv, head_dim, kv_seed(point_seed));
  return cudaGetLastError();
}

cudaError_t fill_q_device(float* q, std::uint64_t point_seed, int batch, int heads_q, int head_dim,
                          cudaStream_t stream) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * heads_q * head_dim;
  if (n == 0) return cudaSuccess;
  fill_q_kernel<<<static_cast<int>(std::min<std::int64_t>((n + 255) / 256, 4096)), 256, 0, stream>>>(
      q, q_seed(point_seed), batch, heads_q, head_dim);
  return cudaGetLastError();
}

#define DECODE_BENCH_INSTANTIATE_FILL(T)                                                                        \
  template void fill_kv_host<T>(std::span<T>, bool, std::uint64_t, int, int, std::int64_t, int);               \
  template cudaError_t fill_kv_device<ContiguousKV<T>>(const ContiguousKV<T>&, const std::int32_t*, int,        \
                                                       std::int64_t, int, int, std::uint64_t, cudaStream_t);    \
  template cudaError_t fill_kv_device<PagedKV<T>>(const PagedKV<T>&, const std::int32_t*, int, std::int64_t,    \
                                                  int, int, std::uint64_t, cudaStream_t);
DECODE_BENCH_INSTANTIATE_FILL(float)
DECODE_BENCH_INSTANTIATE_FILL(__half)
DECODE_BENCH_INSTANTIATE_FILL(__nv_bfloat16)
DECODE_BENCH_INSTANTIATE_FILL(__nv_fp8_e4m3)
DECODE_BENCH_INSTANTIATE_FILL(__nv_fp8_e5m2)
#undef DECODE_BENCH_INSTANTIATE_FILL

}  // namespace decode_bench::sweeps
