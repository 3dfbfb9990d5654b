#pragma once
// A serving step's merged uploads (kernels/step_upload_block.hpp) on the GPU: two page-locked
// blocks, by step parity, and one device copy of a block; a step's flush is one cudaMemcpyAsync
// of the finished block into the device copy and one launch that carries out its operations
// phase by phase (a cooperative launch with a grid-wide barrier between phases; where the device
// cannot launch cooperatively, one launch per phase).
//
// The parity rule is the owner's (sweeps/step_parity.hpp): step s refills the block of parity
// s % 2 only once step s - 2's device work is known done, so the copy queued from it has run.
// The one device copy needs no parity: every flush is on the same stream, so a step's copy into it
// runs after the previous step's launch that read it. A block that grows (pinned memory, while
// the step fills it) frees its old memory, whose copies are done by the same rule; the device
// copy grows at a flush, and its old memory is freed once the device is idle
// (harness/device_memory.hpp).
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "harness/device_buffer.hpp"
#include "harness/pinned_buffer.hpp"
#include "kernels/step_upload_block.hpp"

namespace decode_bench {

enum class StepUploadLaunch {
  cooperative_if_supported,  // one launch for every phase where the device allows it
  per_phase,                 // one plain launch per phase
};

// Carries out a finished block already copied to `device_block` (its image.bytes): one launch (or
// one per phase). Adds the launches made to *launches when given. Nothing for an empty block.
cudaError_t launch_step_uploads(const StepUploadImage& image, const std::byte* device_block, cudaStream_t stream,
                                StepUploadLaunch mode, int* launches = nullptr);

class StepUploads {
 public:
  explicit StepUploads(cudaStream_t stream, StepUploadLaunch mode = StepUploadLaunch::cooperative_if_supported);
  StepUploads(const StepUploads&) = delete;
  StepUploads& operator=(const StepUploads&) = delete;

  // The block of `parity` (0 or 1), emptied and at least as large as the largest block either
  // parity needed so far. Its last copy must be done (the caller's parity rule).
  StepUploadBlock& begin(int parity);
  // Finishes the block begun last and enqueues its copy and launch on the stream (nothing when
  // it is empty).
  void flush();

  struct Counts {
    std::int64_t flushes = 0;   // non-empty blocks flushed
    std::int64_t copies = 0;    // cudaMemcpyAsync calls
    std::int64_t launches = 0;  // kernel launches
    std::int64_t phases = 0;    // phases over all flushes
    std::int64_t bytes = 0;     // bytes copied
    std::int64_t grows = 0;     // host blocks grown while a step filled them
  };
  const Counts& counts() const { return counts_; }
  cudaStream_t stream() const { return stream_; }

 private:
  std::span<std::byte> grow(int parity, std::size_t bytes, std::span<const std::byte> held);

  cudaStream_t stream_;
  StepUploadLaunch mode_;
  PinnedBuffer<std::byte> memory_[2]{PinnedBuffer<std::byte>(0), PinnedBuffer<std::byte>(0)};
  StepUploadBlock block_[2];
  int parity_ = -1;
  DeviceBuffer<std::byte> device_;
  Counts counts_;
};

}  // namespace decode_bench
