// A build without sm_90a (CMAKE_CUDA_ARCHITECTURES without 90): no warpgroup-MMA ceiling kernels;
// their variants are listed and refused with this reason.
#include "harness/ceiling_wgmma.hpp"

namespace decode_bench {

WgmmaCeilingKernel wgmma_ceiling_kernel(WgmmaCeilingInput, int) { return {}; }

const char* wgmma_ceiling_refusal(int, int) {
  return "this build has no sm_90a code (CMAKE_CUDA_ARCHITECTURES does not include 90)";
}

}  // namespace decode_bench
