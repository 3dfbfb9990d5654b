#include "kernels/block_timeline.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

namespace decode_bench {
namespace {

struct Timeline {
  BlockEvent* events = nullptr;
  std::int64_t capacity = 0;
  std::int64_t used = 0;
  std::vector<TimelineLaunch> launches;
};
Timeline& timeline() {
  static Timeline t;
  return t;
}

}  // namespace

void set_block_timeline(BlockEvent* events, std::int64_t capacity) {
  Timeline& t = timeline();
  t.events = events;
  t.capacity = events != nullptr ? capacity : 0;
  t.used = 0;
  t.launches.clear();
}

BlockEvent* take_block_timeline(std::int64_t blocks, const char* kernel) {
  Timeline& t = timeline();
  if (t.events == nullptr || blocks <= 0 || t.used + blocks > t.capacity) return nullptr;
  BlockEvent* slice = t.events + t.used;
  t.launches.push_back({kernel, t.used, blocks});
  t.used += blocks;
  return slice;
}

const std::vector<TimelineLaunch>& block_timeline_launches() { return timeline().launches; }

cudaError_t write_block_timeline_csv(const std::string& path, const std::string& point, std::string* error) {
  const Timeline& t = timeline();
  std::vector<BlockEvent> host(static_cast<std::size_t>(t.used));
  if (t.used > 0) {
    const cudaError_t e = cudaMemcpy(host.data(), t.events, host.size() * sizeof(BlockEvent), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
      if (error) *error = std::string("copying the block timeline back: ") + cudaGetErrorString(e);
      return e;
    }
  }
  std::uint64_t t0 = std::numeric_limits<std::uint64_t>::max();
  for (const BlockEvent& e : host)
    if (e.start != 0) t0 = std::min(t0, e.start);
  const bool fresh = !std::ifstream(path).good();
  std::ofstream out(path, std::ios::app);
  if (!out) {
    if (error) *error = "cannot open " + path + " for the block timeline";
    return cudaErrorUnknown;
  }
  if (fresh) out << "point,launch,kernel,block,smid,start_ns,first_tile_ns,loop_end_ns,end_ns\n";
  std::string label = point;
  std::replace(label.begin(), label.end(), ',', ';');  // one CSV field
  const auto rel = [t0](std::uint64_t v) { return v == 0 ? std::string() : std::to_string(v - t0); };
  for (std::size_t l = 0; l < t.launches.size(); ++l) {
    const TimelineLaunch& launch = t.launches[l];
    for (std::int64_t b = 0; b < launch.blocks; ++b) {
      const BlockEvent& e = host[static_cast<std::size_t>(launch.first + b)];
      if (e.start == 0) continue;  // the block never ran its marks (an early exit before them)
      out << label << ',' << l << ',' << launch.kernel << ',' << e.block << ',' << e.smid << ',' << rel(e.start) << ','
          << rel(e.first_tile) << ',' << rel(e.loop_end) << ',' << rel(e.end) << '\n';
    }
  }
  if (!out) {
    if (error) *error = "writing " + path + " failed";
    return cudaErrorUnknown;
  }
  return cudaSuccess;
}

}  // namespace decode_bench
