#pragma once
// Marks functions that must compile for both the host compiler and nvcc's device pass, so the
// CPU reference and the GPU kernels share one definition of layouts and the softmax merge.
#if defined(__CUDACC__)
#define DB_HD __host__ __device__ __forceinline__
#else
#define DB_HD inline
#endif
