#pragma once
// Owning device allocation (device_malloc / device_free: harness/device_memory.hpp), movable, never
// copied. Allocation failures throw CudaError with cudaErrorMemoryAllocation, which the sweep turns
// into a skipped point.
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "harness/cuda_check.hpp"
#include "harness/device_memory.hpp"

namespace decode_bench {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count > 0) DB_CUDA_CHECK(device_malloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    device_free(ptr_);
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

  void upload(const std::vector<T>& host) {
    DB_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), std::min(host.size(), count_) * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) DB_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  // All bytes 0xFF: every fp32 element becomes a NaN, so unwritten outputs fail verification.
  void poison() {
    if (count_ > 0) DB_CUDA_CHECK(cudaMemset(ptr_, 0xFF, bytes()));
  }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace decode_bench
