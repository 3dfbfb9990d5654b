#pragma once
// Division by a runtime-constant divisor as one multiply-high, add and shift, so the paged kernel
// can turn a token index into (logical page, slot) without a 20-instruction integer division.
// Round-up method (Granlund & Montgomery 1994): for 1 <= d < 2^31 and 0 <= n < 2^31,
//   shift = ceil(log2 d),  magic = floor(2^32 * (2^shift - d) / d) + 1,
//   n / d = (umulhi(n, magic) + n) >> shift.
#include <cstdint>

#include "kernels/host_device.hpp"

namespace decode_bench {

struct FastDivmod {
  std::uint32_t divisor = 1;
  std::uint32_t magic = 0;
  std::uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(std::uint32_t d) : divisor(d) {
    while ((std::uint64_t{1} << shift) < d) ++shift;
    magic = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) * ((std::uint64_t{1} << shift) - d)) / d + 1);
  }

  DB_HD std::uint32_t div(std::uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t hi = __umulhi(n, magic);
#else
    const std::uint32_t hi = static_cast<std::uint32_t>((static_cast<std::uint64_t>(n) * magic) >> 32);
#endif
    return (hi + n) >> shift;
  }
  DB_HD void divmod(std::uint32_t n, std::uint32_t& quotient, std::uint32_t& remainder) const {
    quotient = div(n);
    remainder = n - quotient * divisor;
  }
};

}  // namespace decode_bench
