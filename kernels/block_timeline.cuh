#pragma once
// Device side of the per-block timeline (kernels/block_timeline.hpp): thread 0 of a block writes
// its record; a null slice (the timeline off, every production launch) costs one uniform branch.
#include <cstdint>

#include "kernels/block_timeline.hpp"

namespace decode_bench::device {

enum class BlockMark { start, first_tile, loop_end, end };

__device__ __forceinline__ void mark_block(BlockEvent* events, BlockMark mark) {
  if (events == nullptr || threadIdx.x != 0) return;
  std::uint64_t now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  BlockEvent& e = events[block];
  switch (mark) {
    case BlockMark::start: {
      unsigned sm;
      asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
      e.block = block;
      e.smid = sm;
      e.start = now;
      break;
    }
    case BlockMark::first_tile: e.first_tile = now; break;
    case BlockMark::loop_end: e.loop_end = now; break;
    case BlockMark::end: e.end = now; break;
  }
}

}  // namespace decode_bench::device
