#pragma once
// The Workspace (harness/backend.hpp) the pipeline hands a backend on a GPU: device buffers (DeviceBuffer),
// each filled with 0xFF bytes as it is handed out, freed with the object at the end of the point.
#include <cstddef>
#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

#include "harness/backend.hpp"
#include "harness/device_buffer.hpp"

namespace decode_bench {

class DeviceWorkspace final : public Workspace {
 public:
  explicit DeviceWorkspace(cudaStream_t stream) : stream_(stream) {}

  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    buffers_.emplace_back(bytes);
    // cudaMemset on the legacy default stream: ordered before the initialisation the backend then
    // enqueues on any blocking stream.
    buffers_.back().poison();
    return buffers_.back().get();
  }
  cudaStream_t stream() const override { return stream_; }

 private:
  cudaStream_t stream_;
  std::vector<DeviceBuffer<std::uint8_t>> buffers_;
};

}  // namespace decode_bench
