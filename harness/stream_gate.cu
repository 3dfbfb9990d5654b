#include "harness/stream_gate.hpp"

#include "harness/cuda_check.hpp"

namespace decode_bench {
namespace {

constexpr unsigned long long kGateTimeoutNs = 50'000'000;  // 50 ms: far above any host enqueue

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Waits until the host word reaches `ticket` (wrap-safe comparison), or the timeout.
__global__ void gate_kernel(const volatile std::uint32_t* word, std::uint32_t ticket) {
  const unsigned long long start = global_ns();
  while (static_cast<std::int32_t>(*word - ticket) < 0 && global_ns() - start < kGateTimeoutNs) __nanosleep(256);
}

}  // namespace

StreamGate::StreamGate() {
  void* p = nullptr;
  DB_CUDA_CHECK(cudaHostAlloc(&p, sizeof(std::uint32_t), cudaHostAllocMapped));
  host_word_ = static_cast<volatile std::uint32_t*>(p);
  *host_word_ = 0;
  DB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_word_), p, 0));
}

StreamGate::~StreamGate() {
  if (host_word_) {
    *host_word_ = next_ticket_;  // open anything still waiting before the memory goes away
    cudaDeviceSynchronize();
    cudaFreeHost(const_cast<std::uint32_t*>(host_word_));
  }
}

cudaError_t StreamGate::hold(cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(device_word_, ++next_ticket_);
  return cudaGetLastError();
}

void StreamGate::release() { *host_word_ = next_ticket_; }

}  // namespace decode_bench
