#include "kernels/host_staging.hpp"

#include <cstring>

namespace decode_bench {

cudaError_t upload_zeros_then(void* dst, std::size_t zero_bytes, const void* src, std::size_t bytes,
                              cudaStream_t stream, HostStaging* staging) {
  const std::size_t total = zero_bytes + bytes;
  if (total == 0) return cudaSuccess;
  if (StepUploadBlock* block = staging ? staging->merged() : nullptr) {
    auto* host = static_cast<std::byte*>(block->write_private(dst, total));
    std::memset(host, 0, zero_bytes);
    if (bytes > 0) std::memcpy(host + zero_bytes, src, bytes);
    return cudaSuccess;
  }
  if (void* host = staging ? staging->take(total) : nullptr) {
    std::memset(host, 0, zero_bytes);
    if (bytes > 0) std::memcpy(static_cast<std::byte*>(host) + zero_bytes, src, bytes);
    return cudaMemcpyAsync(dst, host, total, cudaMemcpyHostToDevice, stream);
  }
  if (zero_bytes > 0) {
    if (const cudaError_t e = cudaMemsetAsync(dst, 0, zero_bytes, stream); e != cudaSuccess) return e;
  }
  if (bytes == 0) return cudaSuccess;
  return cudaMemcpyAsync(static_cast<std::byte*>(dst) + zero_bytes, src, bytes, cudaMemcpyHostToDevice, stream);
}

}  // namespace decode_bench
