#include "sweeps/block_timeline_capture.hpp"

#include <cstdlib>

#include "harness/stream_gate.hpp"
#include "kernels/block_timeline.hpp"

namespace decode_bench {
namespace {

// Events for this many blocks: every launch of a point (the shared prefix's three kernels) fits;
// 40 MB of device memory, allocated once on first use.
constexpr std::int64_t kCapacity = std::int64_t{1} << 20;

// Turns the timeline off whatever way the capture leaves.
struct TimelineOff {
  ~TimelineOff() { set_block_timeline(nullptr, 0); }
};

}  // namespace

std::string block_timeline_file() {
  const char* v = std::getenv(kBlockTimelineEnv);
  return v != nullptr ? v : "";
}

cudaError_t capture_block_timeline(const std::string& point, const LaunchFn& launch, L2Flusher& flusher,
                                   cudaStream_t stream, std::string* error) {
  static BlockEvent* events = nullptr;
  const auto fail = [error](cudaError_t e, const char* what) {
    if (error) *error = std::string(what) + ": " + cudaGetErrorString(e);
    return e;
  };
  if (events == nullptr) {
    if (const cudaError_t e = cudaMalloc(&events, kCapacity * sizeof(BlockEvent)); e != cudaSuccess) {
      events = nullptr;
      return fail(e, "allocating the block timeline");
    }
  }
  if (const cudaError_t e = cudaMemsetAsync(events, 0, kCapacity * sizeof(BlockEvent), stream); e != cudaSuccess)
    return fail(e, "clearing the block timeline");
  // As in timing (harness/timing.cpp): gate, flush, launch enqueued whole before the GPU starts,
  // so launches on two streams reach the GPU in the order they do when timed. Without the gate
  // the shared prefix's two phases were dispatched in either order (commit f4763da).
  static StreamGate gate;
  if (const cudaError_t e = gate.hold(stream); e != cudaSuccess) return fail(e, "holding the stream");
  TimelineOff off;
  set_block_timeline(events, kCapacity);
  cudaError_t e = flusher.flush(stream);
  if (e == cudaSuccess) e = launch(stream);
  gate.release();
  if (e != cudaSuccess) return fail(e, "the timeline launch");
  if (const cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess) return fail(e, "the timeline launch");
  return write_block_timeline_csv(block_timeline_file(), point, error);
}

}  // namespace decode_bench
