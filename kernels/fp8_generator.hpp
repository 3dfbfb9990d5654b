#pragma once
// The benchmark's FP8 K and V bytes as a pure function of their coordinates, like
// kernels/kv_generator.hpp for the other types: byte = f(seed, tensor, sequence, head, token, dim),
// from the 64 bits generated_bits(generated_row_key(...), dim). The host (CPU reference, --fill
// host) and the device (pools filled in place) produce the same byte; tests/test_gpu_reference_gpu.cpp
// compares them.
//
// The bytes are stored values in units of the format: the real value is byte * scale with the
// per-KV-head scale of kernels/fp8_quantize.hpp (scale = amax / format max), so the head's largest
// magnitude lands on the format's largest finite value. In units of that amax the values are
// mostly a bell shape (Irwin-Hall of 4 uniforms, sigma 0.2, ending at 0.6928), 1/256 of them near the
// maximum (0.9375 .. 1, so the format's largest values occur) and 1/256 exact subnormals; signs
// random; never zero (a value that rounds to 0 becomes the smallest subnormal).
//
// Bit-identical on host and device: every float step is one IEEE operation rounded to nearest (on
// the device __fmul_rn / __fadd_rn, which nvcc never contracts into an FMA), and every product that
// feeds an addition is exact, so a host compiler's contraction could not change a result either;
// then the integer rounding of kernels/fp8_encode.hpp.
#include <cstdint>
#include <type_traits>

#include <cuda_fp8.h>

#include "kernels/fp8_encode.hpp"
#include "kernels/host_device.hpp"
#include "kernels/kv_generator.hpp"

namespace decode_bench {

DB_HD float fp8_generator_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
DB_HD float fp8_generator_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// The stored magnitude (before rounding to the format) from 64 random bits: bits 0-7 pick the
// kind, 8-55 the magnitude (bit 63, the sign, is the caller's).
template <bool kE4M3>
DB_HD float fp8_generated_magnitude(std::uint64_t z) {
  using F = Fp8Format<kE4M3>;
  const unsigned kind = static_cast<unsigned>(z & 0xff);
  if (kind == 0) {  // near the maximum: max * (1 - u / 16), u uniform in [0, 1) from 24 bits
    const float u = static_cast<float>((z >> 8) & 0xffffff) * 0x1.0p-24f;          // exact
    return fp8_generator_mul(F::max, fp8_generator_add(1.f, fp8_generator_mul(-0.0625f, u)));
  }
  if (kind == 1)  // an exact subnormal: 1 .. subnormals times the smallest one (a power of two times <= 7: exact)
    return F::min_subnormal * static_cast<float>(1 + (z >> 8) % F::subnormals);
  // Bell shape: |sum of 4 uniforms (12 bits each) - 2| * sqrt(3) * 0.2 (sigma 0.2, at most 0.6928), times max.
  const float sum = static_cast<float>(((z >> 8) & 0xfff) + ((z >> 20) & 0xfff) + ((z >> 32) & 0xfff) +
                                       ((z >> 44) & 0xfff)) * 0x1.0p-12f;          // exact: < 2^14 * 2^-12
  float centred = fp8_generator_add(sum, -2.f);                                      // exact: a multiple of 2^-12
  if (centred < 0.f) centred = -centred;
  return fp8_generator_mul(F::max, fp8_generator_mul(centred, 0.3464f));            // 0.3464 = sqrt(3) * 0.2
}

// The byte of an element from its 64 random bits (kv_generator.hpp's generated_bits).
template <bool kE4M3>
DB_HD std::uint8_t fp8_generated_code(std::uint64_t z) {
  std::uint8_t code = fp8_encode_bits<kE4M3>(fp8_generated_magnitude<kE4M3>(z));
  if (code == 0) code = 1;  // never zero: the smallest subnormal instead
  return static_cast<std::uint8_t>(code | ((z >> 56) & 0x80));
}

// T: __nv_fp8_e4m3 or __nv_fp8_e5m2.
template <class T>
DB_HD T fp8_generated(std::uint64_t row_key, int dim) {
  T x;
  x.__x = static_cast<__nv_fp8_storage_t>(
      fp8_generated_code<std::is_same<T, __nv_fp8_e4m3>::value>(generated_bits(row_key, dim)));
  return x;
}

}  // namespace decode_bench
