#pragma once
// The warpgroup-MMA (wgmma, sm_90a) tensor ceilings' kernels as the ceiling list sees them. The
// kernels need sm_90a, so they live in a translation unit of their own (harness/ceiling_wgmma.cu,
// built for 90a when the build targets Hopper; harness/ceiling_wgmma_none.cpp otherwise) and reach
// harness/ceiling_kernels.cu only through this lookup.
//
// Each kernel is a GEMM-like loop with no global traffic: every warpgroup of a block issues
// m64n256 wgmma instructions (A 64 x K and B K x 256, both from one shared 128-byte-swizzled tile,
// FP32 accumulators in registers), 4 per commit group, one group left in flight while the next
// is issued, so the tensor cores never wait for the issue.
namespace decode_bench {

enum class WgmmaCeilingInput { f16, bf16, e4m3 };

struct WgmmaCeilingKernel {
  const void* kernel = nullptr;  // nullptr: not in this build; launched as kernel(int steps, unsigned bits, unsigned* sink)
  int threads = 0;               // 128 per warpgroup
  int instructions_per_step = 0; // wgmma instructions per warpgroup per loop step
  double flops_per_instruction = 0;  // 2 x 64 x 256 x K
};

// The kernel for `input` with blocks of `warpgroups` (1 or 2) warpgroups.
WgmmaCeilingKernel wgmma_ceiling_kernel(WgmmaCeilingInput input, int warpgroups);

// Empty when this build carries the kernels and `major`.`minor` runs them (9.0: H100, H200), else
// why not.
const char* wgmma_ceiling_refusal(int major, int minor);

}  // namespace decode_bench
