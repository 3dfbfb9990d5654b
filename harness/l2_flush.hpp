#pragma once
// Empties the L2 cache between timed launches (cold mode) by reading a buffer twice the L2 size.
// Reading, not writing (cudaMemset): a write flush leaves L2 full of dirty lines whose write-back
// would then compete with the measured kernel's own DRAM traffic; clean lines are evicted free.
// The write flush is kept as a second kind (timing = cold_write) to measure exactly that.
#include <cstddef>

#include <cuda_runtime.h>

namespace decode_bench {

class L2Flusher {
 public:
  // Throws std::runtime_error with the reason when `device` is unusable (no GPU, index out of
  // range, compute capability < 8.0), CudaError when the buffer cannot be allocated.
  explicit L2Flusher(int device);
  ~L2Flusher();
  L2Flusher(const L2Flusher&) = delete;
  L2Flusher& operator=(const L2Flusher&) = delete;

  // Enqueues the flush on `stream`; the caller records its start event after this returns.
  // write: a memset of the buffer instead of the read (timing = cold_write).
  cudaError_t flush(cudaStream_t stream, bool write = false);
  std::size_t bytes() const { return bytes_; }
  // The flush kernel's preferred shared-memory carveout (percent of the unified L1 / shared
  // storage, cudaFuncAttributePreferredSharedMemoryCarveout); probes use it to see what the
  // L1 / shared reconfiguration between the flush and a kernel of large shared memory costs.
  cudaError_t prefer_carveout(int percent);

 private:
  int device_ = 0;
  int blocks_ = 0;
  std::size_t bytes_ = 0;
  void* buffer_ = nullptr;      // bytes_, zero-filled
  unsigned* sink_ = nullptr;    // written only if the XOR of the buffer hits a magic value (never)
};

}  // namespace decode_bench
