#pragma once
// Owning page-locked host allocation (cudaMallocHost / cudaFreeHost), movable, never copied.
// cudaMemcpyAsync to and from page-locked memory is asynchronous, so such copies can sit inside a
// timed stream region; from pageable memory a device-to-host copy makes the host wait until it is
// done, which behind the harness's stream gate means waiting for the gate's timeout.
#include <cstddef>
#include <utility>

#include <cuda_runtime.h>

#include "harness/cuda_check.hpp"

namespace decode_bench {

template <class T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    if (count > 0) DB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  PinnedBuffer(PinnedBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& other) noexcept {
    std::swap(ptr_, other.ptr_);
    std::swap(count_, other.count_);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (ptr_) cudaFreeHost(ptr_);
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace decode_bench
