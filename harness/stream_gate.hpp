#pragma once
// Holds a stream until the host has enqueued a whole timed sample, so the GPU runs
// [flush] start-event launch stop-event back to back even when it was idle before.
//
// Why: on an idle GPU a start event executes the moment it is submitted, and the launch behind it
// arrives microseconds later (host-side launch cost), so the event pair times the host. Measured
// on the H100: a 16 MiB L2-resident read timed hot (nothing in front of it) read slower than the
// same read cold, where the flush kernel happened to cover the gap (docs/harness.md). The gate is
// a one-thread kernel spinning on a host-mapped word; release() writes the ticket it waits for.
// A timeout opens it anyway, so a host that never releases cannot hang the device.
#include <cstdint>

#include <cuda_runtime.h>

namespace decode_bench {

class StreamGate {
 public:
  StreamGate();
  ~StreamGate();
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Enqueues the gate kernel on `stream`; work enqueued after it waits for release().
  cudaError_t hold(cudaStream_t stream);
  // Opens every gate held so far.
  void release();

 private:
  volatile std::uint32_t* host_word_ = nullptr;   // pinned, mapped
  std::uint32_t* device_word_ = nullptr;          // the same word as the device sees it
  std::uint32_t next_ticket_ = 0;
};

}  // namespace decode_bench
