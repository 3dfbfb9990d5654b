#pragma once
// harness/verify.hpp's rule applied on the device: a kernel's (o, lse) against the float64
// reference of kernels/gpu_reference.hpp, both in device memory. Only the error summary
// (max abs / rel / lse error, non-finite count) comes back to the host, a few bytes whatever the
// batch; the result equals what verify_decode + accumulate give over the same arrays.
#include <cstddef>

#include <cuda_runtime.h>

#include "harness/verify.hpp"
#include "kernels/gpu_reference.hpp"

namespace decode_bench {

// o: (n_heads, D) and lse: (n_heads) float, device; ref in device memory of the same shapes.
// Synchronizes `stream` (the summary is copied back). Throws CudaError on a CUDA failure.
VerificationResult verify_decode_on_device(const float* o, const float* lse, const GpuReferenceOutput& ref,
                                           std::size_t n_heads, int head_dim, DType kv_dtype, cudaStream_t stream);

}  // namespace decode_bench
