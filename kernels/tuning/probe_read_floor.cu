// The read floor at sizes of one's choosing (a GPU tool, not part of the sweep): the harness's
// read floor (harness/read_floor.hpp, measure_read_floor) at the given sizes, against the DRAM
// read ceiling measured in the same process (measure_ceilings without its own floor). A kernel
// that must read B bytes cannot beat the floor at B by much: the floor holds the launch, the first
// load's latency and the last wave's drain, which the ceiling's 2 GiB read amortises away. So
// floor / ceiling is the highest fraction of the ceiling a point of that size can reach
// (docs/history/kernel-notes.md, "The read floor").
//   build/kernels/tuning/decode-read-floor [MiB ...]   (default: 32 128 256: the K/V sizes of the grouped decode points)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <vector>

#include "harness/ceilings.hpp"
#include "kernels/tuning/read_floor_args.hpp"

int main(int argc, char** argv) {
  std::vector<std::uint64_t> sizes;
  if (const char* bad = decode_bench::parse_read_floor_sizes(argc, argv, &sizes)) {
    std::fprintf(stderr, "decode-read-floor: size '%s' is not a number of MiB in [0.0625, 2048]\n", bad);
    return 2;
  }
  try {
    decode_bench::CeilingOptions options;
    options.read_floor = false;
    const double ceiling = decode_bench::measure_ceilings(0, options).at("dram_read").at("value").get<double>();
    const nlohmann::json floor = decode_bench::measure_read_floor(0, sizes);
    std::printf("dram_read ceiling (2 GiB, hot, best repetition): %.1f GB/s\n", ceiling);
    std::printf("%10s %12s %12s %10s %10s  %s\n", "MiB", "bytes", "floor (us)", "GB/s", "of ceiling", "kernel");
    for (const auto& s : floor.at("samples")) {
      const double bytes = s.at("bytes").get<double>(), us = s.at("median_us").get<double>();
      const double gbps = bytes / us / 1e3;
      std::printf("%10.2f %12.0f %12.2f %10.1f %10.3f  %s %s\n", bytes / 1048576.0, bytes, us, gbps, gbps / ceiling,
                  s.at("kernel").get<std::string>().c_str(), s.at("config").dump().c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "decode-read-floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
