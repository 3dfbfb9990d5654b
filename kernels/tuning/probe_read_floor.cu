// The read floor at a point's size (a GPU tool, not part of the sweep): how long the harness's own
// DRAM-read ceiling kernels take to read exactly a decode point's bytes once, timed the way the
// sweep times a point (cold: L2 flushed before every launch, CUDA events around the launch,
// median of the repetitions), against the DRAM read ceiling measured in the same run (2 GiB, hot,
// best repetition: how `decode-bench ceilings` defines it). A kernel that must read B bytes
// cannot beat the floor at B by much: the floor holds the launch, the first load's latency and the
// last wave's drain, which the ceiling's 2 GiB read amortises away. So floor / ceiling is the
// highest fraction of the ceiling a point of that size can reach (docs/kernel-notes.md).
//   build/kernels/tuning/decode-read-floor [MiB ...]   (default: 32 128 256, issue 14's sizes)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "harness/ceiling_kernels.hpp"
#include "harness/cuda_check.hpp"
#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"

namespace {

using decode_bench::CeilingVariant;
using decode_bench::CeilingWorkspace;

struct Timed {
  std::string name;
  double median_us = 0, min_us = 0;
};

std::string describe(const CeilingVariant& v) {
  std::string name = v.kernel;
  for (const auto& [key, value] : v.config)
    if (key != "bytes" && key != "passes") name += " " + key + "=" + std::to_string(value);
  return name;
}

// Every dram_read variant over `bytes` of `buffer`, in `mode`.
std::vector<Timed> time_reads(void* buffer, std::size_t bytes, unsigned* sink, int sm_count,
                              decode_bench::TimingMode mode, decode_bench::L2Flusher& flusher) {
  CeilingWorkspace ws;
  ws.buffer = buffer;
  ws.copy_destination = buffer;  // the copy variants are built but never launched
  ws.buffer_bytes = bytes;
  ws.l2_working_set_bytes = 65536;
  ws.sink = sink;
  decode_bench::TimingOptions options;  // the sweep's defaults
  options.mode = mode;
  std::vector<Timed> out;
  for (const CeilingVariant& v : decode_bench::make_ceiling_variants(ws, sm_count, /*quick=*/false)) {
    if (v.ceiling != "dram_read") continue;
    const auto r = decode_bench::time_launches(describe(v), v.launch, options, flusher, nullptr);
    if (!r.ok()) {
      std::fprintf(stderr, "%s: %s\n", describe(v).c_str(), r.error.c_str());
      std::exit(1);
    }
    out.push_back({describe(v), r.stats.median, r.stats.min});
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> sizes_mib;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const double mib = std::strtod(argv[i], &end);
    if (end == argv[i] || *end != '\0' || !(mib > 0) || mib > 2048) {
      std::fprintf(stderr, "decode-read-floor: size '%s' is not a number of MiB in (0, 2048]\n", argv[i]);
      return 2;
    }
    sizes_mib.push_back(mib);
  }
  if (sizes_mib.empty()) sizes_mib = {32, 128, 256};

  int sm_count = 0;
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  constexpr std::size_t kCeilingBytes = std::size_t(2) << 30;
  void* buffer = nullptr;
  unsigned* sink = nullptr;
  DB_CUDA_CHECK(cudaMalloc(&buffer, kCeilingBytes));
  DB_CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  DB_CUDA_CHECK(cudaMemset(buffer, 0, kCeilingBytes));  // the read kernels' checksum expects zeros
  DB_CUDA_CHECK(cudaDeviceSynchronize());
  decode_bench::L2Flusher flusher(0);

  // The ceiling as `decode-bench ceilings` measures it: 2 GiB, hot, best repetition of the best variant.
  double ceiling_gbs = 0;
  for (const Timed& t : time_reads(buffer, kCeilingBytes, sink, sm_count, decode_bench::TimingMode::hot, flusher))
    ceiling_gbs = std::max(ceiling_gbs, static_cast<double>(kCeilingBytes) / t.min_us / 1e3);
  std::printf("dram_read ceiling (2 GiB, hot, best repetition): %.1f GB/s\n", ceiling_gbs);

  std::printf("%10s %10s %14s %12s %10s  %s\n", "MiB", "bytes", "floor (us)", "GB/s", "of ceiling", "kernel");
  for (double mib : sizes_mib) {
    const std::size_t bytes = static_cast<std::size_t>(mib * 1048576.0) / 65536 * 65536;  // whole 64 KiB
    const auto timed = time_reads(buffer, bytes, sink, sm_count, decode_bench::TimingMode::cold, flusher);
    const auto best = std::min_element(timed.begin(), timed.end(),
                                       [](const Timed& a, const Timed& b) { return a.median_us < b.median_us; });
    const double gbs = static_cast<double>(bytes) / best->median_us / 1e3;
    std::printf("%10.2f %10zu %14.2f %12.1f %10.3f  %s\n", mib, bytes, best->median_us, gbs, gbs / ceiling_gbs,
                best->name.c_str());
    for (const Timed& t : timed) std::printf("%10s %10s %14.2f %12s %10s  %s\n", "", "", t.median_us, "", "", t.name.c_str());
  }
  cudaFree(buffer);
  cudaFree(sink);
  return 0;
}
