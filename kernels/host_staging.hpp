#pragma once
// Page-locked host memory a plan stages its uploads in (work lists, the shared-prefix metadata,
// the zeroed counters before them), so each is one asynchronous copy on the plan's stream. From
// pageable memory the driver may carry a cudaMemcpyAsync out synchronously, waiting for the
// stream's earlier work: in a serving loop with one step in flight, for the decode on the GPU.
//
// The owner hands a plan a block it will not rewrite until every copy queued from it has run (the
// trace runner keeps two, by step parity: sweeps/trace_runner.cpp), and resets it before the
// plan. A request the block has no room for is refused (nullptr): the caller then copies from its
// own memory as before, and wanted() tells the owner how large a block to provide next time.
//
// Merged: a staging bound to a step's upload block (kernels/step_upload_block.hpp) records each
// upload there as a private segment (the plan's workspace is memory no other upload of the step
// touches) and enqueues nothing; the block's owner copies and carries out the whole step's uploads
// at once, before the step's launches.
#include <cstddef>

#include <cuda_runtime.h>

#include "kernels/step_upload_block.hpp"

namespace decode_bench {

class HostStaging {
 public:
  HostStaging() = default;
  HostStaging(std::byte* base, std::size_t capacity) : base_(base), capacity_(capacity) {}
  explicit HostStaging(StepUploadBlock* merged) : merged_(merged) {}

  // The step block this staging records into, or nullptr (separate copies).
  StepUploadBlock* merged() const { return merged_; }

  // `bytes` of the block, 16-byte aligned, or nullptr when it has no room left (counted in wanted()).
  void* take(std::size_t bytes) {
    const std::size_t at = (used_ + 15) / 16 * 16;
    wanted_ = at + bytes > wanted_ ? at + bytes : wanted_;
    used_ = at + bytes;
    if (base_ == nullptr || at + bytes > capacity_) return nullptr;
    return base_ + at;
  }
  // Bytes this plan asked for since the last reset (what the block would need to hold them all).
  std::size_t wanted() const { return wanted_; }
  std::size_t capacity() const { return capacity_; }
  void reset() { used_ = wanted_ = 0; }

 private:
  std::byte* base_ = nullptr;
  std::size_t capacity_ = 0, used_ = 0, wanted_ = 0;
  StepUploadBlock* merged_ = nullptr;
};

// dst (device) <- `zero_bytes` zero bytes, then `bytes` from src (host): recorded in the merged
// step block when the staging has one (no stream operation now), else through the staging block
// when there is one with room (one copy), else a memset and a copy from src.
cudaError_t upload_zeros_then(void* dst, std::size_t zero_bytes, const void* src, std::size_t bytes,
                              cudaStream_t stream, HostStaging* staging);

}  // namespace decode_bench
