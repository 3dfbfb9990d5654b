#pragma once
// DECODE_BENCH_BLOCK_TIMELINE=FILE: after a point is timed, the runners launch it once more, cold
// (L2 flushed first, as in timing), with the per-block timeline on (kernels/block_timeline.hpp)
// and append every block's SM and start / first tile / loop end / end times to FILE as CSV, under
// the point's id (scripts/block_timeline.py tabulates it). Unset: nothing happens. A diagnostic:
// the extra launch is not part of any reported time.
#include <string>

#include <cuda_runtime.h>

#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"

namespace decode_bench {

inline constexpr const char* kBlockTimelineEnv = "DECODE_BENCH_BLOCK_TIMELINE";

// The file named by DECODE_BENCH_BLOCK_TIMELINE, or "" when unset.
std::string block_timeline_file();

// One timeline launch of `launch` as above, appended to block_timeline_file() under `point`.
// A failure (no memory for the events, the file) is returned as its message; the point's timing
// stands either way.
cudaError_t capture_block_timeline(const std::string& point, const LaunchFn& launch, L2Flusher& flusher,
                                   cudaStream_t stream, std::string* error);

}  // namespace decode_bench
