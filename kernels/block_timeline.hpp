#pragma once
// Per-block timeline of kernel launches (a diagnostic, off unless a caller turns it on): each block
// of an instrumented kernel records the SM it ran on and the global timer (ns) at its start, when
// its first K/V tile had arrived, when its tile loop ended and at its end. What this shows that
// kernel-wide counters do not: how the blocks of a launch start (the ramp), where SMs idle at the
// end (the tail), and whether two kernels on two streams really share the GPU (the shared-prefix
// phases). scripts/block_timeline.py reads the CSV that write_block_timeline_csv writes.
//
// Host side: the caller hands a device array of BlockEvent (zeroed) to set_block_timeline; every
// instrumented launch while it is set takes one BlockEvent per block of its grid
// (take_block_timeline, called by the launchers) and passes that slice to its kernel, or nullptr
// when the timeline is off or full. One process-wide timeline: not for concurrent host threads.
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace decode_bench {

// Times: global timer ns (%globaltimer), 0 where not recorded (a block with no work records no end).
struct BlockEvent {
  std::uint32_t block = 0;  // linear index in its grid (x fastest)
  std::uint32_t smid = 0;
  std::uint64_t start = 0, first_tile = 0, loop_end = 0, end = 0;
};
static_assert(sizeof(BlockEvent) == 40, "a plain record copied back as-is");

struct TimelineLaunch {
  std::string kernel;     // short name: row_mma, row_simt, row_merge, flash_decode, fd_merge, sp_merge
  std::int64_t first = 0; // its blocks' events: [first, first + blocks) of the array
  std::int64_t blocks = 0;
};

// events: a device array of capacity zeroed BlockEvents; nullptr turns the timeline off. Clears
// the launches taken so far.
void set_block_timeline(BlockEvent* events, std::int64_t capacity);
// The events of a launch of `blocks` blocks of `kernel`, or nullptr (off, or not enough room left).
BlockEvent* take_block_timeline(std::int64_t blocks, const char* kernel);
// The launches taken since set_block_timeline, in launch order.
const std::vector<TimelineLaunch>& block_timeline_launches();

// Copies the events of every launch taken back (synchronising the device) and appends them to
// path as CSV rows point,launch,kernel,block,smid,start_ns,first_tile_ns,loop_end_ns,end_ns (times
// relative to the earliest start of the point; empty where not recorded), with the header when
// the file is new. Returns the error of the copy or of the file, if any.
cudaError_t write_block_timeline_csv(const std::string& path, const std::string& point, std::string* error);

}  // namespace decode_bench
