#include "kernels/fp8_quantize.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/fp8_encode.hpp"

namespace decode_bench {
namespace {

// splitmix64: a well-mixed stream for the per-head scales.
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

template <class F>
constexpr Fp8Limits limits_of() { return {F::max, F::min_normal, F::min_subnormal, F::subnormals}; }

void check_scale(float scale) {
  if (!std::isfinite(scale) || !(scale > 0.f))
    throw std::invalid_argument("FP8 scale must be finite and > 0 (got " + std::to_string(scale) + ")");
}

}  // namespace

Fp8Limits fp8_limits(DType t) {
  switch (t) {
    case DType::fp8_e4m3: return limits_of<Fp8Format<true>>();
    case DType::fp8_e5m2: return limits_of<Fp8Format<false>>();
    default: break;
  }
  throw std::invalid_argument("dtype " + std::string(dtype_name(t)) + " is not an FP8 format");
}

float fp8_scale_for(DType t, float amax) {
  if (!std::isfinite(amax) || !(amax > 0.f))
    throw std::invalid_argument("FP8 amax must be finite and > 0 (got " + std::to_string(amax) + ")");
  return amax / fp8_limits(t).max;
}

std::uint8_t fp8_encode(DType t, float x) {
  return t == DType::fp8_e4m3 ? fp8_encode_bits<true>(x) : fp8_encode_bits<false>(x);
}

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

template __nv_fp8_e4m3 quantize_fp8<__nv_fp8_e4m3>(float, float);
template __nv_fp8_e5m2 quantize_fp8<__nv_fp8_e5m2>(float, float);

}  // namespace decode_bench
