#pragma once
// FP8 rounding in integer arithmetic, the same on the host and the device: a finite float to the
// E4M3 or E5M2 byte, round to nearest even, saturating to the largest finite value (cuda_fp8.h's
// __NV_SATFINITE conversion; tests/test_fp8.cpp checks every encoding, midpoint and a million random
// values against it). The data generator (kernels/fp8_generator.hpp) encodes through this on both
// sides, so host and device fills agree byte for byte without relying on the device's conversion
// unit or the host header's code path.
#include <cstdint>
#include <cstring>

#if !defined(__CUDA_ARCH__)
#include <cmath>
#endif

#include "kernels/host_device.hpp"

namespace decode_bench {

// The constants of one format. kE4M3: OCP E4M3 (no infinities, S.1111.111 is NaN); else E5M2.
template <bool kE4M3>
struct Fp8Format {
  static constexpr int mantissa_bits = kE4M3 ? 3 : 2;
  static constexpr int bias = kE4M3 ? 7 : 15;
  static constexpr std::uint32_t max_code = kE4M3 ? 0x7e : 0x7b;  // largest finite magnitude
  static constexpr float max = kE4M3 ? 448.f : 57344.f;
  static constexpr float min_normal = kE4M3 ? 0x1.0p-6f : 0x1.0p-14f;
  static constexpr float min_subnormal = kE4M3 ? 0x1.0p-9f : 0x1.0p-16f;
  static constexpr int subnormals = (1 << mantissa_bits) - 1;  // nonzero subnormal magnitudes
};

DB_HD std::uint32_t fp8_float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

// The byte of finite x (NaN and Inf are the caller's to refuse).
template <bool kE4M3>
DB_HD std::uint8_t fp8_encode_bits(float x) {
  using F = Fp8Format<kE4M3>;
  std::uint32_t f = fp8_float_bits(x);
  const std::uint32_t sign = (f >> 24) & 0x80;
  f &= 0x7fffffffu;
#if defined(__CUDA_ARCH__)
  const float a = fabsf(x);
#else
  const float a = std::fabs(x);
#endif
  std::uint32_t code;
  if (a < F::min_normal) {
    // Subnormal range: a multiple of the smallest subnormal (a / min_subnormal is exact: a power
    // of two), rounded to nearest even; 2^mantissa_bits lands on the smallest normal's code, as it should.
#if defined(__CUDA_ARCH__)
    code = static_cast<std::uint32_t>(rintf(a * (1.f / F::min_subnormal)));
#else
    code = static_cast<std::uint32_t>(std::rint(a * (1.f / F::min_subnormal)));
#endif
  } else {
    // Normal: round the fp32 mantissa to mantissa_bits, nearest even (a carry moves the exponent),
    // then rebias the exponent; beyond the largest finite code saturate.
    constexpr int shift = 23 - F::mantissa_bits;
    f += (1u << (shift - 1)) - 1 + ((f >> shift) & 1);
    const std::int64_t c =
        static_cast<std::int64_t>(f >> shift) - (std::int64_t{127 - F::bias} << F::mantissa_bits);
    code = c > static_cast<std::int64_t>(F::max_code) ? F::max_code : static_cast<std::uint32_t>(c);
  }
  return static_cast<std::uint8_t>(sign | code);
}

}  // namespace decode_bench
