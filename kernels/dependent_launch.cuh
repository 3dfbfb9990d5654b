#pragma once
// Programmatic dependent launch (compute capability 9.0 and later) of a split merge: the second
// kernel of a split plan, which reads only what the attention kernel before it wrote, is launched
// as that kernel's programmatic dependent. The attention kernel lets dependents launch as soon as
// each of its blocks has started (allow_dependent_grid), so the merge's blocks are placed on the
// SMs the attention grid leaves free, or as its blocks finish, and wait in dependent_grid_wait,
// which returns once the attention grid has completed and its writes are visible. The launch
// boundary between the two kernels (a second kernel's blocks start only after the first has
// drained) is then overlapped with the attention kernel's tail.
//
// Both instructions are no-ops where the kernel was not launched that way (an ordinary stream-
// ordered launch, DECODE_BENCH_MERGE_PDL=off, a GPU before 9.0: the plans' dependent_merge is false
// there), so the kernels carry them unconditionally.
#include <utility>

#include <cuda_runtime.h>

namespace decode_bench {

namespace device {

// In a dependent grid: waits for the grids it depends on to complete, their writes visible.
__device__ __forceinline__ void dependent_grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// In a primary grid: this block no longer holds back the launch of a dependent grid.
__device__ __forceinline__ void allow_dependent_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

}  // namespace device

// Launches kernel<<<grid, block, 0, stream>>>(args...), as a programmatic dependent of the work
// before it on the stream when `dependent` (which the caller sets only on compute capability 9.0
// and later).
template <class... Params, class... Args>
cudaError_t launch_merge_kernel(bool dependent, void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                                Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = dependent ? &attribute : nullptr;
  config.numAttrs = dependent ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace decode_bench
