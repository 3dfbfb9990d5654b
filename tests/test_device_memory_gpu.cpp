// The harness's keeping device pool (harness/device_memory.hpp): freed memory stays with the
// process, every buffer keeps cudaMalloc's alignment, a request that only fits once the pool's idle
// memory is handed back succeeds, and one that never fits fails with a cleared error. Skipped
// without a GPU.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include <cuda_runtime.h>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/device_memory.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

int current_device() {
  int d = 0;
  DB_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

TEST(DeviceMemoryGpu, FreedMemoryStaysInThePool) {
  DB_REQUIRE_GPU();
  const int device = current_device();
  std::size_t driver_free_held = 0, total = 0;
  {
    DeviceBuffer<std::uint8_t> b(256 * kMiB);
    b.poison();
    DB_CUDA_CHECK(cudaMemGetInfo(&driver_free_held, &total));
    EXPECT_GE(device_pool_reserved_bytes(device), 256 * kMiB);
  }
  // The 256 MiB went back to the pool, not to the driver...
  EXPECT_GE(device_pool_reserved_bytes(device), 256 * kMiB);
  std::size_t driver_free_after = 0;
  DB_CUDA_CHECK(cudaMemGetInfo(&driver_free_after, &total));
  EXPECT_LT(driver_free_after, driver_free_held + 256 * kMiB);
  // ... and the next buffer of that size takes it from there, not from the driver.
  DeviceBuffer<std::uint8_t> again(256 * kMiB);
  std::size_t driver_free_again = 0;
  DB_CUDA_CHECK(cudaMemGetInfo(&driver_free_again, &total));
  EXPECT_GT(driver_free_again + 128 * kMiB, driver_free_after);
}

TEST(DeviceMemoryGpu, EveryBufferIsAlignedAndWritable) {
  DB_REQUIRE_GPU();
  std::vector<void*> held;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{3}, std::size_t{255}, std::size_t{257}, std::size_t{4097},
                            std::size_t{65537}, 3 * kMiB + 5, std::size_t{1}, std::size_t{100003}}) {
    void* p = nullptr;
    ASSERT_EQ(device_malloc(&p, bytes), cudaSuccess) << bytes;
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u) << bytes;
    EXPECT_EQ(cudaMemset(p, 0xA5, bytes), cudaSuccess);
    held.push_back(p);
  }
  void* none = reinterpret_cast<void*>(1);
  EXPECT_EQ(device_malloc(&none, 0), cudaSuccess);
  EXPECT_EQ(none, nullptr);
  for (void* p : held) device_free(p);
  device_free(nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(DeviceMemoryGpu, ARequestThatFitsOnlyAfterATrimSucceeds) {
  DB_REQUIRE_GPU();
  const int device = current_device();
  const std::chrono::milliseconds settle = trim_settle();
  trim_settle() = std::chrono::milliseconds(0);
  std::size_t driver_free = 0, total = 0;
  DB_CUDA_CHECK(cudaMemGetInfo(&driver_free, &total));
  // Park half of what the driver has free in the pool...
  const std::size_t parked = (driver_free / 2) / kMiB * kMiB;
  { DeviceBuffer<std::uint8_t> b(parked); }
  ASSERT_GE(device_pool_reserved_bytes(device), parked);
  DB_CUDA_CHECK(cudaMemGetInfo(&driver_free, &total));
  // ... then ask for more than the driver still has but less than it has with the parked memory.
  const std::size_t want = driver_free + parked / 2;
  void* p = nullptr;
  const cudaError_t e = device_malloc(&p, want);
  trim_settle() = settle;
  ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e);
  EXPECT_EQ(cudaMemset(p, 0, want), cudaSuccess);
  device_free(p);
}

TEST(DeviceMemoryGpu, ARequestThatNeverFitsFailsAndIsNotSticky) {
  DB_REQUIRE_GPU();
  const std::chrono::milliseconds settle = trim_settle();
  trim_settle() = std::chrono::milliseconds(0);
  std::size_t driver_free = 0, total = 0;
  DB_CUDA_CHECK(cudaMemGetInfo(&driver_free, &total));
  void* p = reinterpret_cast<void*>(1);
  const cudaError_t e = device_malloc(&p, 2 * total);
  trim_settle() = settle;
  EXPECT_EQ(e, cudaErrorMemoryAllocation);
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_NO_THROW(DeviceBuffer<float> small(1024));
}

}  // namespace
}  // namespace decode_bench
