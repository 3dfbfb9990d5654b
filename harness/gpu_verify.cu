#include "harness/gpu_verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "harness/cuda_check.hpp"

namespace decode_bench {
namespace {

// Maxima of non-negative doubles (+inf included) as unsigned bit patterns: for those, integer
// order is numeric order, so atomicMax on the bits is a max on the values.
struct ErrorSummary {
  unsigned long long max_abs_bits, max_rel_bits, max_lse_bits, non_finite;
};

__device__ __forceinline__ void atomic_max_nonneg(unsigned long long* slot, double x) {
  atomicMax(slot, static_cast<unsigned long long>(__double_as_longlong(x)));
}

__global__ void compare_kernel(const float* o, const float* lse, GpuReferenceOutput ref, std::size_t n_heads,
                               int head_dim, ErrorSummary* summary) {
  double max_abs = 0, max_rel = 0, max_lse = 0;
  unsigned long long non_finite = 0;
  const std::size_t n_o = n_heads * head_dim;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n_o; i += stride) {
    const double x = o[i];
    // A non-finite reference counts too: fmax drops the NaN of |x - NaN|, so a NaN reference would
    // otherwise pass with error 0.
    if (!isfinite(x) || !isfinite(ref.o[i]) || !isfinite(ref.o_abs[i])) {
      ++non_finite;
      continue;
    }
    const double err = fabs(x - ref.o[i]);
    max_abs = fmax(max_abs, err);
    // o_abs == 0 only when every weighted V element is 0; then any error is infinitely wrong.
    max_rel = fmax(max_rel, ref.o_abs[i] > 0 ? err / ref.o_abs[i] : (err > 0 ? INFINITY : 0.0));
  }
  for (std::size_t h = blockIdx.x * blockDim.x + threadIdx.x; h < n_heads; h += stride) {
    const double x = lse[h], want = ref.lse[h];
    if (isnan(want)) {
      ++non_finite;
      continue;
    }
    if (isinf(want)) {  // empty sequence: lse must be -inf too
      if (x != want) ++non_finite;
      continue;
    }
    if (!isfinite(x)) {
      ++non_finite;
      continue;
    }
    const double err = fabs(x - want);
    max_lse = fmax(max_lse, err);
    max_rel = fmax(max_rel, err / fmax(1.0, fabs(want)));
  }
  atomic_max_nonneg(&summary->max_abs_bits, max_abs);
  atomic_max_nonneg(&summary->max_rel_bits, max_rel);
  atomic_max_nonneg(&summary->max_lse_bits, max_lse);
  if (non_finite) atomicAdd(&summary->non_finite, non_finite);
}

double from_bits(unsigned long long bits) {
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

}  // namespace

VerificationResult verify_decode_on_device(const float* o, const float* lse, const GpuReferenceOutput& ref,
                                           std::size_t n_heads, int head_dim, DType kv_dtype, cudaStream_t stream) {
  ErrorSummary* summary = nullptr;
  DB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&summary), sizeof(ErrorSummary), stream));
  ErrorSummary host{};
  cudaError_t err = cudaMemsetAsync(summary, 0, sizeof(ErrorSummary), stream);
  if (err == cudaSuccess) {
    const std::size_t n = n_heads * static_cast<std::size_t>(head_dim);
    const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>(1024, (n + 255) / 256 + 1));
    compare_kernel<<<blocks, 256, 0, stream>>>(o, lse, ref, n_heads, head_dim, summary);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) err = cudaMemcpyAsync(&host, summary, sizeof host, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  cudaFreeAsync(summary, stream);
  DB_CUDA_CHECK(err);

  VerificationResult r;
  r.tolerance = verification_tolerance(kv_dtype);
  r.non_finite = static_cast<long long>(host.non_finite);
  r.max_abs_error = r.non_finite > 0 ? NAN : from_bits(host.max_abs_bits);
  r.max_rel_error = from_bits(host.max_rel_bits);
  r.max_lse_error = from_bits(host.max_lse_bits);
  r.passed = r.non_finite == 0 && r.max_rel_error <= r.tolerance;
  return r;
}

}  // namespace decode_bench
