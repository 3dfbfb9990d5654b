#pragma once
// decode-read-floor's arguments: sizes in MiB, each a number in [1/16, 2048], rounded down to whole
// 64 KiB (the read kernels' granularity); none given: 32, 128 and 256 MiB. Host-only, tested in CI.
#include <cstdint>
#include <cstdlib>
#include <vector>

namespace decode_bench {

// Fills `sizes` (bytes); returns the first argument that is not a valid size, or nullptr.
inline const char* parse_read_floor_sizes(int argc, char** argv, std::vector<std::uint64_t>* sizes) {
  sizes->clear();
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const double mib = std::strtod(argv[i], &end);
    if (end == argv[i] || *end != '\0' || !(mib > 0) || mib > 2048 || mib * 16 < 1) return argv[i];
    sizes->push_back(static_cast<std::uint64_t>(mib * 1048576.0) / 65536 * 65536);
  }
  if (sizes->empty()) *sizes = {std::uint64_t{32} << 20, std::uint64_t{128} << 20, std::uint64_t{256} << 20};
  return nullptr;
}

}  // namespace decode_bench
