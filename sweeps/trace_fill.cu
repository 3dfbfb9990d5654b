#include "sweeps/trace_fill.hpp"

#include <algorithm>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/kv_generator.hpp"
#include "sweeps/generated_element.cuh"

namespace decode_bench::sweeps {
namespace {

constexpr int kThreads = 256;

// Whether two stored elements differ in any bit (a NaN equals nothing by ==, itself included).
template <class T>
__device__ __forceinline__ bool bits_differ(const T& a, const T& b) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "fp32, fp16 or bf16");
  if constexpr (sizeof(T) == 4)
    return *reinterpret_cast<const unsigned*>(&a) != *reinterpret_cast<const unsigned*>(&b);
  else
    return *reinterpret_cast<const unsigned short*>(&a) != *reinterpret_cast<const unsigned short*>(&b);
}

// One block per sequence; its warps take the (head, token) rows of the range in turn.
template <class KV>
__global__ void write_trace_kernel(KV kv, const TraceWrite* writes, int heads_kv, int head_dim, std::uint64_t seed) {
  const TraceWrite w = writes[blockIdx.x];
  const std::int64_t len = w.to - w.from;
  const std::int64_t rows = len * heads_kv;
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = threadIdx.x / 32; r < rows; r += blockDim.x / 32) {
    const int h = static_cast<int>(r / len);
    const std::int64_t t = w.from + r % len;
    write_generated_row(kv, w.batch_index, h, t, trace_row_key(w, t), t, head_dim, seed, lane);
  }
}

template <class KV>
__global__ void check_trace_kernel(KV kv, const TraceWrite* seqs, int heads_kv, int head_dim, std::uint64_t seed,
                                   unsigned long long* mismatches) {
  using T = typename KV::value_type;
  const TraceWrite w = seqs[blockIdx.x];
  const std::int64_t rows = static_cast<std::int64_t>(w.to) * heads_kv;
  const int lane = threadIdx.x % 32;
  unsigned long long bad = 0;
  for (std::int64_t r = threadIdx.x / 32; r < rows; r += blockDim.x / 32) {
    const int h = static_cast<int>(r / w.to);
    const std::int64_t t = r % w.to;
    const std::int64_t at = kv.row_offset(w.batch_index, h, t);
    const std::uint64_t key_k = generated_row_key(seed, GeneratedTensor::k, trace_row_key(w, t), h, t);
    const std::uint64_t key_v = generated_row_key(seed, GeneratedTensor::v, trace_row_key(w, t), h, t);
    bool differs = false;
    for (int i = lane; i < head_dim; i += 32) {
      const T k = generated_element<T>(key_k, i), v = generated_element<T>(key_v, i);
      // Bitwise: the stored element is the generator's, rounded once, or it is wrong.
      differs |= bits_differ(kv.k[at + i], k) || bits_differ(kv.v[at + i], v);
    }
    if (__any_sync(0xffffffffu, differs) && lane == 0) ++bad;
  }
  if (bad) atomicAdd(mismatches, bad);
}

__global__ void trace_q_kernel(float* q, const TraceWrite* seqs, int n, int heads_q, int head_dim, std::uint64_t seed,
                               std::int64_t step) {
  const std::int64_t total = static_cast<std::int64_t>(n) * heads_q * head_dim;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / head_dim;
    const TraceWrite w = seqs[row / heads_q];
    q[i] = generated_value(generated_row_key(seed, GeneratedTensor::q, w.request, static_cast<int>(row % heads_q), step),
                           static_cast<int>(i % head_dim));
  }
}

}  // namespace

template <class KV>
cudaError_t write_trace_tokens(const KV& kv, const TraceWrite* writes, int n, int heads_kv, int head_dim,
                               std::uint64_t seed, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  write_trace_kernel<<<n, kThreads, 0, stream>>>(kv, writes, heads_kv, head_dim, seed);
  return cudaGetLastError();
}

template <class KV>
cudaError_t check_trace_rows(const KV& kv, const TraceWrite* sequences, int n, int heads_kv, int head_dim,
                             std::uint64_t seed, unsigned long long* mismatches, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  check_trace_kernel<<<n, kThreads, 0, stream>>>(kv, sequences, heads_kv, head_dim, seed, mismatches);
  return cudaGetLastError();
}

cudaError_t fill_trace_q(float* q, const TraceWrite* sequences, int n, int heads_q, int head_dim, std::uint64_t seed,
                         std::int64_t step, cudaStream_t stream) {
  const std::int64_t total = static_cast<std::int64_t>(n) * heads_q * head_dim;
  if (total == 0) return cudaSuccess;
  const int blocks = static_cast<int>(std::min<std::int64_t>((total + kThreads - 1) / kThreads, 4096));
  trace_q_kernel<<<blocks, kThreads, 0, stream>>>(q, sequences, n, heads_q, head_dim, seed, step);
  return cudaGetLastError();
}

#define DECODE_BENCH_INSTANTIATE_TRACE_FILL(T)                                                                     \
  template cudaError_t write_trace_tokens<ContiguousKV<T>>(const ContiguousKV<T>&, const TraceWrite*, int, int,    \
                                                           int, std::uint64_t, cudaStream_t);                      \
  template cudaError_t write_trace_tokens<PagedKV<T>>(const PagedKV<T>&, const TraceWrite*, int, int, int,         \
                                                      std::uint64_t, cudaStream_t);                                \
  template cudaError_t check_trace_rows<ContiguousKV<T>>(const ContiguousKV<T>&, const TraceWrite*, int, int, int, \
                                                         std::uint64_t, unsigned long long*, cudaStream_t);        \
  template cudaError_t check_trace_rows<PagedKV<T>>(const PagedKV<T>&, const TraceWrite*, int, int, int,           \
                                                    std::uint64_t, unsigned long long*, cudaStream_t);
DECODE_BENCH_INSTANTIATE_TRACE_FILL(float)
DECODE_BENCH_INSTANTIATE_TRACE_FILL(__half)
DECODE_BENCH_INSTANTIATE_TRACE_FILL(__nv_bfloat16)
#undef DECODE_BENCH_INSTANTIATE_TRACE_FILL

}  // namespace decode_bench::sweeps
