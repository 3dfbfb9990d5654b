#pragma once
#include <cuda_runtime.h>

namespace decode_bench::test {
cudaError_t launch_illegal_write(cudaStream_t stream);
}  // namespace decode_bench::test
