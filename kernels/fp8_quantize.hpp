#pragma once
// FP8 K/V on the host: the formats' limits, quantization with a per-KV-head scale, and the random
// per-head scales of the sweeps and tests (their random bytes: kernels/fp8_generator.hpp). Kernels
// and the reference never quantize; they read the stored bytes and multiply by the accessor's
// scale (kv_accessor.hpp).
//
// Scales: one float per KV head for K and one for V, value = stored * scale, with
// scale = amax / format max (amax = the head's largest magnitude), so the head's largest value
// lands on the format's largest finite value. A per-tensor scale is the case of all heads equal.
#include <cstdint>
#include <vector>

#include "kernels/dtype.hpp"

namespace decode_bench {

struct Fp8Limits {
  float max;            // largest finite magnitude
  float min_normal;     // smallest normal magnitude
  float min_subnormal;  // smallest nonzero magnitude
  int subnormals;       // nonzero subnormal magnitudes (2^mantissa bits - 1)
};

// E4M3 (OCP, no infinities): 448, 2^-6, 2^-9, 7. E5M2: 57344, 2^-14, 2^-16, 3.
// Throws std::invalid_argument for a non-FP8 dtype.
Fp8Limits fp8_limits(DType t);

// scale = amax / format max; throws std::invalid_argument unless amax is finite and > 0.
float fp8_scale_for(DType t, float amax);

// Stored value of x under `scale`: x / scale rounded to nearest even, saturated to +-max (an
// out-of-range value becomes the largest finite one, never Inf or NaN). Throws
// std::invalid_argument for a non-finite x or a scale that is not finite and > 0: a NaN in K or V
// is a bug upstream, and quantizing it would hide it.
template <class T> T quantize_fp8(float x, float scale);

// The same rounding (nearest even, saturating, x finite) in integer arithmetic
// (kernels/fp8_encode.hpp, the generator's path on host and device), checked against cuda_fp8.h's
// conversion in tests/test_fp8.cpp.
std::uint8_t fp8_encode(DType t, float x);

// stored * scale, exactly (every FP8 value times a float is exact in double).
template <class T> double dequantize_fp8(T stored, float scale) { return to_double(stored) * scale; }

struct Fp8Scales {
  std::vector<float> k, v;  // (H_kv) each
};

// Per-head scales for random data: the K amax of head g is 2^e with e uniform in [-1, 3]
// (0.5 .. 8: keys carry outlier channels and differ by head), the V amax 2^e with e in [-2, 1].
// Deterministic in seed. The random stored bytes that go with them (in units of the format, so
// independent of the scale) come from kernels/fp8_generator.hpp.
Fp8Scales fp8_random_head_scales(DType t, int heads_kv, std::uint64_t seed);

}  // namespace decode_bench
