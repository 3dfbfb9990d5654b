#include "kernels/fp8_quantize.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace decode_bench {
namespace {

// splitmix64: a fast, well-mixed stream (the sweeps fill up to 2^28 elements per tensor).
struct SplitMix {
  std::uint64_t x;
  std::uint64_t next() {
    x += 0x9E3779B97F4A7C15ull;
    std::uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) from 24 bits.
  static float unit(std::uint64_t bits) { return static_cast<float>(bits & 0xffffff) * 0x1.0p-24f; }
};

void check_scale(float scale) {
  if (!std::isfinite(scale) || !(scale > 0.f))
    throw std::invalid_argument("FP8 scale must be finite and > 0 (got " + std::to_string(scale) + ")");
}

}  // namespace

Fp8Limits fp8_limits(DType t) {
  switch (t) {
    case DType::fp8_e4m3: return {448.f, 0x1.0p-6f, 0x1.0p-9f, 7};
    case DType::fp8_e5m2: return {57344.f, 0x1.0p-14f, 0x1.0p-16f, 3};
    default: break;
  }
  throw std::invalid_argument("dtype " + std::string(dtype_name(t)) + " is not an FP8 format");
}

float fp8_scale_for(DType t, float amax) {
  if (!std::isfinite(amax) || !(amax > 0.f))
    throw std::invalid_argument("FP8 amax must be finite and > 0 (got " + std::to_string(amax) + ")");
  return amax / fp8_limits(t).max;
}

namespace {

// fp8_encode for one format, inlined into the generator's loop.
template <bool kE4M3>
inline std::uint8_t encode(float x) {
  constexpr int mantissa_bits = kE4M3 ? 3 : 2, bias = kE4M3 ? 7 : 15;
  constexpr std::int64_t max_code = kE4M3 ? 0x7e : 0x7b;  // largest finite magnitude
  std::uint32_t f;
  std::memcpy(&f, &x, 4);
  const std::uint32_t sign = (f >> 24) & 0x80;
  f &= 0x7fffffffu;
  const float a = std::fabs(x);
  std::uint32_t code;
  if (a < (kE4M3 ? 0x1.0p-6f : 0x1.0p-14f)) {
    // Subnormal range: a multiple of the smallest subnormal, rounded to nearest even (rintf in
    // the default rounding mode); 2^mantissa_bits lands on the smallest normal's code, as it should.
    code = static_cast<std::uint32_t>(std::rint(a * (kE4M3 ? 0x1.0p9f : 0x1.0p16f)));
  } else {
    // Normal: round the fp32 mantissa to mantissa_bits, nearest even (a carry moves the exponent),
    // then rebias the exponent; beyond the largest finite code saturate.
    constexpr int shift = 23 - mantissa_bits;
    f += (1u << (shift - 1)) - 1 + ((f >> shift) & 1);
    const std::int64_t c = static_cast<std::int64_t>(f >> shift) - (std::int64_t{127 - bias} << mantissa_bits);
    code = static_cast<std::uint32_t>(c > max_code ? max_code : c);
  }
  return static_cast<std::uint8_t>(sign | code);
}

}  // namespace

std::uint8_t fp8_encode(DType t, float x) { return t == DType::fp8_e4m3 ? encode<true>(x) : encode<false>(x); }

template <class T>
T quantize_fp8(float x, float scale) {
  check_scale(scale);
  if (!std::isfinite(x)) throw std::invalid_argument("cannot quantize a non-finite value to FP8");
  return from_float<T>(x / scale);  // SATFINITE: out of range saturates to +-max
}

Fp8Scales fp8_random_head_scales(DType t, int heads_kv, std::uint64_t seed) {
  SplitMix rng{seed * 0x2545F4914F6CDD1Dull + 7};
  Fp8Scales s;
  for (int g = 0; g < heads_kv; ++g) {
    s.k.push_back(fp8_scale_for(t, std::exp2(-1.f + 4.f * SplitMix::unit(rng.next()))));
    s.v.push_back(fp8_scale_for(t, std::exp2(-2.f + 3.f * SplitMix::unit(rng.next()))));
  }
  return s;
}

template <class T>
void fill_fp8_random(std::span<T> out, int heads_kv, std::int64_t len, int head_dim, std::span<const float> scales,
                     std::uint64_t seed) {
  const DType t = dtype_of<T>::value;
  const Fp8Limits lim = fp8_limits(t);
  const std::size_t per_head = static_cast<std::size_t>(len) * head_dim;
  if (out.size() != per_head * heads_kv || scales.size() != static_cast<std::size_t>(heads_kv))
    throw std::invalid_argument("fill_fp8_random: out must hold H_kv * len * D values and scales H_kv");
  for (float s : scales) check_scale(s);
  SplitMix rng{seed * 0x9E3779B97F4A7C15ull + 1};
  for (int g = 0; g < heads_kv; ++g) {
    const float scale = scales[g], amax = scales[g] * lim.max;
    T* const head = out.data() + g * per_head;
    for (std::size_t i = 0; i < per_head; ++i) {
      // One 64-bit draw per element: bits 0-7 pick the kind, 8-55 the magnitude, 63 the sign.
      const std::uint64_t z = rng.next();
      const unsigned kind = static_cast<unsigned>(z & 0xff);
      float x;  // the real magnitude, before quantization
      if (kind == 0) {
        x = amax * (1.f - 0.0625f * SplitMix::unit(z >> 8));  // near the maximum
      } else if (kind == 1) {
        x = scale * lim.min_subnormal * static_cast<float>(1 + (z >> 8) % lim.subnormals);  // a subnormal
      } else {
        // Bell shape: Irwin-Hall of 4 uniforms (12 bits each), centred, sigma 0.2 amax, clipped to the amax.
        const float sum = static_cast<float>(((z >> 8) & 0xfff) + ((z >> 20) & 0xfff) + ((z >> 32) & 0xfff) +
                                             ((z >> 44) & 0xfff)) * 0x1.0p-12f;
        x = amax * std::fmin(std::fabs(sum - 2.f) * 0.3464f, 1.f);  // 0.3464 = sqrt(3) * 0.2
      }
      std::uint8_t code = encode<std::is_same_v<T, __nv_fp8_e4m3>>(x / scale);  // quantize_fp8, scale checked above
      if (code == 0) code = 1;                       // never zero: the smallest subnormal instead
      head[i].__x = static_cast<__nv_fp8_storage_t>(code | ((z >> 56) & 0x80));
    }
  }
}

template __nv_fp8_e4m3 quantize_fp8<__nv_fp8_e4m3>(float, float);
template __nv_fp8_e5m2 quantize_fp8<__nv_fp8_e5m2>(float, float);
template void fill_fp8_random<__nv_fp8_e4m3>(std::span<__nv_fp8_e4m3>, int, std::int64_t, int, std::span<const float>,
                                             std::uint64_t);
template void fill_fp8_random<__nv_fp8_e5m2>(std::span<__nv_fp8_e5m2>, int, std::int64_t, int, std::span<const float>,
                                             std::uint64_t);

}  // namespace decode_bench
