// A kernel that faults on purpose (illegal address), for the sticky-error test.
#include "tests/gpu_fault_kernel.hpp"

namespace decode_bench::test {
namespace {

__global__ void illegal_write_kernel(int* p) { p[threadIdx.x] = 1; }

}  // namespace

cudaError_t launch_illegal_write(cudaStream_t stream) {
  // An address no allocation covers: the write raises cudaErrorIllegalAddress asynchronously.
  illegal_write_kernel<<<1, 32, 0, stream>>>(reinterpret_cast<int*>(0x10));
  return cudaGetLastError();
}

}  // namespace decode_bench::test
