// The planners' kernel preparation through kernels/kernel_occupancy_cache.hpp: the occupancy it
// returns, first and again from its table, equals the driver's answer to the same calls made
// directly, over launch shapes around the opt-in limit and with the max-shared carveout set.
#include <gtest/gtest.h>

#include "kernels/kernel_occupancy_cache.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

__global__ void dynamic_shared_kernel(float* out) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = static_cast<float>(threadIdx.x);
  __syncthreads();
  if (out) out[threadIdx.x] = scratch[blockDim.x - 1 - threadIdx.x];
}

__global__ void other_kernel(float* out) {
  extern __shared__ float scratch[];
  scratch[threadIdx.x] = 1.f;
  __syncthreads();
  if (out) out[threadIdx.x] = scratch[0];
}

int direct_occupancy(const void* kernel, std::size_t limit, bool carveout, int threads, std::size_t shared) {
  EXPECT_EQ(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(limit)),
            cudaSuccess);
  if (carveout)
    EXPECT_EQ(
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared),
        cudaSuccess);
  int blocks = -1;
  EXPECT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared), cudaSuccess);
  return blocks;
}

TEST(OccupancyCacheGpu, EqualsTheDriversAnswerFirstAndFromTheTable) {
  DB_REQUIRE_GPU();
  const std::size_t limit = 96 * 1024;
  for (const void* kernel : {reinterpret_cast<const void*>(&dynamic_shared_kernel),
                             reinterpret_cast<const void*>(&other_kernel)})
    for (const bool carveout : {false, true})
      for (const int threads : {128, 256, 512})
        for (const std::size_t shared : {std::size_t{0}, std::size_t{16} << 10, std::size_t{48} << 10, limit}) {
          SCOPED_TRACE(testing::Message() << "threads " << threads << " shared " << shared << " carveout " << carveout);
          int first = -1, again = -1;
          ASSERT_EQ(prepared_occupancy(kernel, limit, carveout, threads, shared, &first), cudaSuccess);
          ASSERT_EQ(prepared_occupancy(kernel, limit, carveout, threads, shared, &again), cudaSuccess);
          EXPECT_EQ(again, first);
          EXPECT_EQ(first, direct_occupancy(kernel, limit, carveout, threads, shared));
          EXPECT_GE(first, shared <= (48u << 10) ? 1 : 0);
        }
  // A launch within the limit the cache set runs (the attribute really is set).
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(&out, 256 * sizeof(float)), cudaSuccess);
  dynamic_shared_kernel<<<1, 256, limit>>>(out);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(out);
}

}  // namespace
}  // namespace decode_bench
