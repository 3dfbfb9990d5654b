#include "backends/flashinfer/lse_natural_log.hpp"

#include <numbers>

namespace decode_bench::flashinfer_launch {
namespace {

__global__ void scale_by_ln2(float* lse, std::int64_t count) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) lse[i] *= std::numbers::ln2_v<float>;
}

}  // namespace

cudaError_t lse_log2_to_natural(float* lse, std::int64_t count, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  scale_by_ln2<<<blocks, kThreads, 0, stream>>>(lse, count);
  return cudaGetLastError();
}

}  // namespace decode_bench::flashinfer_launch
