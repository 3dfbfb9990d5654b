#pragma once
// tanh in one instruction: PTX tanh.approx.f32 (sm_75 and later) is a single MUFU operation with a
// maximum relative error of about 2^-11 (PTX ISA, "tanh"), where tanhf is a sequence of a dozen or
// more instructions accurate to a few ulp. The logit soft-cap's cost and accuracy with it:
// docs/kernels/rows_mma.md, "Attention variants". Below sm_75 (no such instruction) it is tanhf.
namespace decode_bench::device {

__device__ __forceinline__ float tanh_approx(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return tanhf(x);
#endif
}

}  // namespace decode_bench::device
