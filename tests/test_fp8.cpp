// FP8 K/V on the host: dtype names, quantization round trips (every finite encoding, saturation,
// subnormals, refusal of NaN), the data generator's bytes and properties and the per-head scales,
// the reference's dequantization against closed forms, the traffic model, pool bytes and capacity.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "kernels/cpu_reference.hpp"
#include "kernels/fp8_generator.hpp"
#include "kernels/fp8_quantize.hpp"
#include "kernels/traffic_model.hpp"
#include "pools/capacity.hpp"
#include "pools/kv_layout.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/memory_estimate.hpp"

namespace decode_bench {
namespace {

template <class T>
T from_bits(unsigned char b) {
  T x;
  std::memcpy(&x, &b, 1);
  return x;
}
template <class T>
unsigned char bits_of(T x) {
  unsigned char b;
  std::memcpy(&b, &x, 1);
  return b;
}

// Encodings that are not finite numbers: E4M3 S.1111.111; E5M2 exponent 11111 (Inf and NaN).
bool is_special(DType t, unsigned char b) {
  return t == DType::fp8_e4m3 ? (b & 0x7f) == 0x7f : (b & 0x7c) == 0x7c;
}

TEST(Fp8Dtype, NamesParseAndBytes) {
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
    EXPECT_EQ(dtype_bytes(t), 1u);
    EXPECT_TRUE(dtype_is_fp8(t));
  }
  EXPECT_EQ(parse_dtype("e4m3"), DType::fp8_e4m3);
  EXPECT_EQ(parse_dtype("e5m2"), DType::fp8_e5m2);
  EXPECT_EQ(parse_dtype("fp8"), std::nullopt);  // which format would be a guess
  EXPECT_FALSE(dtype_is_fp8(DType::fp16));
  EXPECT_EQ(dtype_bytes(DType::fp16), 2u);
  EXPECT_EQ(dtype_of<__nv_fp8_e4m3>::value, DType::fp8_e4m3);
  EXPECT_EQ(dtype_of<__nv_fp8_e5m2>::value, DType::fp8_e5m2);
}

TEST(Fp8Limits, MatchTheEncodings) {
  // The largest finite encoding and the smallest subnormal decode to the limits.
  EXPECT_EQ(to_double(from_bits<__nv_fp8_e4m3>(0x7e)), 448.0);
  EXPECT_EQ(to_double(from_bits<__nv_fp8_e4m3>(0x01)), std::ldexp(1.0, -9));
  EXPECT_EQ(to_double(from_bits<__nv_fp8_e4m3>(0x08)), std::ldexp(1.0, -6));
  EXPECT_EQ(to_double(from_bits<__nv_fp8_e5m2>(0x7b)), 57344.0);
  EXPECT_EQ(to_double(from_bits<__nv_fp8_e5m2>(0x01)), std::ldexp(1.0, -16));
  EXPECT_EQ(to_double(from_bits<__nv_fp8_e5m2>(0x04)), std::ldexp(1.0, -14));
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    const Fp8Limits l = fp8_limits(t);
    EXPECT_EQ(l.min_subnormal * (l.subnormals + 1), l.min_normal) << dtype_name(t);
  }
  EXPECT_EQ(fp8_limits(DType::fp8_e4m3).max, 448.f);
  EXPECT_EQ(fp8_limits(DType::fp8_e5m2).max, 57344.f);
  EXPECT_THROW(fp8_limits(DType::fp16), std::invalid_argument);
}

// Every finite encoding decodes and re-quantizes to itself, at scale 1 and at a power-of-two scale.
template <class T>
void expect_round_trips() {
  const DType t = dtype_of<T>::value;
  int finite = 0;
  for (int b = 0; b < 256; ++b) {
    if (is_special(t, static_cast<unsigned char>(b))) continue;
    ++finite;
    const T x = from_bits<T>(static_cast<unsigned char>(b));
    const double v = to_double(x);
    EXPECT_EQ(bits_of(quantize_fp8<T>(static_cast<float>(v), 1.f)), b) << dtype_name(t) << " byte " << b;
    EXPECT_EQ(bits_of(quantize_fp8<T>(static_cast<float>(v * 0.125), 0.125f)), b) << dtype_name(t) << " byte " << b;
    EXPECT_EQ(dequantize_fp8(x, 0.125f), v * 0.125);
  }
  EXPECT_EQ(finite, t == DType::fp8_e4m3 ? 254 : 248);
}
TEST(Fp8Quantize, EveryFiniteEncodingRoundTrips) {
  expect_round_trips<__nv_fp8_e4m3>();
  expect_round_trips<__nv_fp8_e5m2>();
}

TEST(Fp8Quantize, SaturatesRoundsToNearestEvenAndRefusesNonFinite) {
  using E4 = __nv_fp8_e4m3;
  using E5 = __nv_fp8_e5m2;
  EXPECT_EQ(to_double(quantize_fp8<E4>(1e6f, 1.f)), 448.0);  // out of range: the largest finite, not NaN
  EXPECT_EQ(to_double(quantize_fp8<E4>(-1e6f, 1.f)), -448.0);
  EXPECT_EQ(to_double(quantize_fp8<E4>(470.f, 1.f)), 448.0);
  EXPECT_EQ(to_double(quantize_fp8<E5>(1e9f, 1.f)), 57344.0);  // not Inf
  EXPECT_EQ(to_double(quantize_fp8<E5>(-1e9f, 1.f)), -57344.0);
  // Ties to even: 1 + 1/16 lies halfway between 1 and 1.125 (E4M3) -> 1; 1 + 3/16 -> 1.25.
  EXPECT_EQ(to_double(quantize_fp8<E4>(1.0625f, 1.f)), 1.0);
  EXPECT_EQ(to_double(quantize_fp8<E4>(1.1875f, 1.f)), 1.25);
  // Subnormals: 3 * 2^-9 is exact; half the smallest subnormal ties to zero.
  EXPECT_EQ(bits_of(quantize_fp8<E4>(std::ldexp(3.f, -9), 1.f)), 0x03);
  EXPECT_EQ(bits_of(quantize_fp8<E4>(std::ldexp(1.f, -10), 1.f)), 0x00);
  EXPECT_EQ(bits_of(quantize_fp8<E5>(std::ldexp(3.f, -16), 1.f)), 0x03);
  // The scale divides: 896 at scale 2 is 448.
  EXPECT_EQ(to_double(quantize_fp8<E4>(896.f, 2.f)), 448.0);
  EXPECT_THROW(quantize_fp8<E4>(std::numeric_limits<float>::quiet_NaN(), 1.f), std::invalid_argument);
  EXPECT_THROW(quantize_fp8<E5>(std::numeric_limits<float>::infinity(), 1.f), std::invalid_argument);
  EXPECT_THROW(quantize_fp8<E4>(1.f, 0.f), std::invalid_argument);
  EXPECT_THROW(quantize_fp8<E4>(1.f, std::numeric_limits<float>::quiet_NaN()), std::invalid_argument);
  EXPECT_THROW(fp8_scale_for(DType::fp8_e4m3, 0.f), std::invalid_argument);
  EXPECT_FLOAT_EQ(fp8_scale_for(DType::fp8_e4m3, 8.f), 8.f / 448.f);
}

// The integer fast path rounds exactly as cuda_fp8.h's conversion (nearest even, saturating
// finite): at every finite encoding, the midpoints between neighbours and one fp32 ulp either side,
// beyond the maximum, and on a million random magnitudes over the whole range.
TEST(Fp8Quantize, FastEncodeMatchesTheCudaConversion) {
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    const auto reference = [t](float x) -> int {
      return t == DType::fp8_e4m3 ? bits_of(from_float<__nv_fp8_e4m3>(x)) : bits_of(from_float<__nv_fp8_e5m2>(x));
    };
    const auto value = [t](int b) {
      return t == DType::fp8_e4m3 ? to_double(from_bits<__nv_fp8_e4m3>(b)) : to_double(from_bits<__nv_fp8_e5m2>(b));
    };
    std::vector<float> xs = {0.f, -0.f, 1e30f, -1e30f, 3.4e38f};
    for (int b = 0; b < 0x7f; ++b) {
      if (is_special(t, static_cast<unsigned char>(b)) || is_special(t, static_cast<unsigned char>(b + 1))) continue;
      const float v = static_cast<float>(value(b)), mid = static_cast<float>((value(b) + value(b + 1)) / 2);
      for (float x : {v, mid, std::nextafter(mid, 0.f), std::nextafter(mid, 1e9f)}) {
        xs.push_back(x);
        xs.push_back(-x);
      }
    }
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<float> exponent(-20.f, 17.f);
    for (int i = 0; i < 1000000; ++i) xs.push_back(std::exp2(exponent(rng)) * (i % 2 ? 1.f : -1.f));
    for (float x : xs) ASSERT_EQ(fp8_encode(t, x), reference(x)) << dtype_name(t) << " x = " << x;
  }
}

// The generator (kernels/fp8_generator.hpp) at hand-made bits: the kind byte, the magnitude bits
// and the sign bit do what its comment says.
template <bool kE4M3>
void expect_generated_codes() {
  const std::uint64_t sign = std::uint64_t{1} << 63;
  const std::uint8_t max_code = kE4M3 ? 0x7e : 0x7b;
  // Kind 0, u = 0: exactly the format's maximum; u -> 1: 0.9375 max (E4M3 416, E5M2 rounds up to the max).
  EXPECT_EQ(fp8_generated_code<kE4M3>(0), max_code);
  EXPECT_EQ(fp8_generated_code<kE4M3>(0 | sign), max_code | 0x80);
  EXPECT_EQ(fp8_generated_code<kE4M3>(std::uint64_t{0xffffff} << 8), kE4M3 ? 0x7d : 0x7b);
  // Kind 1: the subnormal 1 + (magnitude bits mod the number of subnormals).
  for (std::uint64_t m = 0; m < 10; ++m)
    EXPECT_EQ(fp8_generated_code<kE4M3>(1 | (m << 8)), 1 + m % (kE4M3 ? 7 : 3)) << "m = " << m;
  // The bell at its centre (four 12-bit fields of 2048: sum exactly 2) rounds to 0 and becomes the
  // smallest subnormal; at its edge (all fields 0: |0 - 2| * 0.3464 = 0.6928 max) E4M3 310.4 -> 320,
  // E5M2 39727.9 -> 40960.
  const std::uint64_t centre = (2048ull << 8) | (2048ull << 20) | (2048ull << 32) | (2048ull << 44);
  EXPECT_EQ(fp8_generated_code<kE4M3>(2 | centre), 0x01);
  EXPECT_EQ(fp8_generated_code<kE4M3>(2 | centre | sign), 0x81);
  using T = std::conditional_t<kE4M3, __nv_fp8_e4m3, __nv_fp8_e5m2>;
  EXPECT_EQ(to_double(from_bits<T>(fp8_generated_code<kE4M3>(255))), kE4M3 ? 320.0 : 40960.0);
}
TEST(Fp8Generator, KindsMagnitudesAndSignsFromTheBits) {
  expect_generated_codes<true>();
  expect_generated_codes<false>();
}

// The generator's bytes as the sweeps fill them (sweeps/decode_fill.hpp), 4 heads x 1024 tokens x
// 128 dims: no zero and no special encoding, magnitudes within the format's maximum and the
// maximum present, 1/256 near the maximum and 1/256 subnormals, the bell's sigma 0.2 of the
// maximum, balanced signs, many distinct values; deterministic, and every coordinate matters.
template <class T>
void expect_generator_properties() {
  const DType t = dtype_of<T>::value;
  const Fp8Limits lim = fp8_limits(t);
  const int heads = 4, len = 1024, d = 128;
  const std::size_t n = static_cast<std::size_t>(heads) * len * d;
  std::vector<T> out(n);
  sweeps::fill_kv_host<T>(std::span<T>(out), false, 3, 0, heads, len, d);
  std::set<unsigned char> distinct;
  std::size_t near_max = 0, subnormal = 0, positive = 0, bell = 0;
  double seen_max = 0, bell_squares = 0;
  for (const T x : out) {
    const unsigned char b = bits_of(x);
    ASSERT_FALSE(is_special(t, b)) << dtype_name(t) << " byte " << int(b);
    ASSERT_NE(b & 0x7f, 0) << "a zero";
    distinct.insert(b);
    const double v = to_double(x), a = std::abs(v);
    seen_max = std::max(seen_max, a);
    positive += v > 0;
    subnormal += a < lim.min_normal;
    if (a >= 0.9 * lim.max) {
      ++near_max;  // the bell never reaches 0.9: it ends at 0.6928 max
    } else {
      ++bell;
      bell_squares += (a / lim.max) * (a / lim.max);
    }
  }
  SCOPED_TRACE(dtype_name(t));
  EXPECT_EQ(seen_max, lim.max);
  // Expected n / 256 = 2048 each (binomial sd 45); the bell adds subnormals only at its exact
  // centre (probability ~1.6e-4), which the bound allows.
  EXPECT_NEAR(static_cast<double>(near_max) / n, 1.0 / 256, 0.25 / 256);
  EXPECT_NEAR(static_cast<double>(subnormal) / n, 1.0 / 256, 0.25 / 256);
  // Irwin-Hall of 4: variance 4/12, times 0.3464^2 = 0.04; FP8 rounding moves the RMS by < 1%.
  EXPECT_NEAR(std::sqrt(bell_squares / bell), 0.2, 0.006);
  EXPECT_NEAR(static_cast<double>(positive) / n, 0.5, 0.005);  // sd 0.0007
  EXPECT_GT(distinct.size(), t == DType::fp8_e4m3 ? 150u : 80u);  // of 254 / 248 finite encodings

  const auto fill = [&](std::uint64_t seed, bool is_v, int seq) {
    std::vector<T> x(n);
    sweeps::fill_kv_host<T>(std::span<T>(x), is_v, seed, seq, heads, len, d);
    return x;
  };
  EXPECT_EQ(std::memcmp(out.data(), fill(3, false, 0).data(), n), 0) << "not deterministic";
  EXPECT_NE(std::memcmp(out.data(), fill(4, false, 0).data(), n), 0) << "seed ignored";
  EXPECT_NE(std::memcmp(out.data(), fill(3, true, 0).data(), n), 0) << "K equals V";
  EXPECT_NE(std::memcmp(out.data(), fill(3, false, 1).data(), n), 0) << "sequence ignored";
}
TEST(Fp8Generator, RealisticValuesWithMaximaAndSubnormals) {
  expect_generator_properties<__nv_fp8_e4m3>();
  expect_generator_properties<__nv_fp8_e5m2>();
}

// The per-head scales that go with the bytes: K amax 2^[-1, 3], V amax 2^[-2, 1], per head, deterministic.
TEST(Fp8Generator, HeadScalesSpanTheirRanges) {
  for (DType t : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    const Fp8Scales s = fp8_random_head_scales(t, 64, 7);
    ASSERT_EQ(s.k.size(), 64u);
    ASSERT_EQ(s.v.size(), 64u);
    std::set<float> distinct(s.k.begin(), s.k.end());
    EXPECT_GT(distinct.size(), 60u);
    const float max = fp8_limits(t).max;
    for (int g = 0; g < 64; ++g) {
      EXPECT_GE(s.k[g] * max, 0.5f * (1 - 1e-6f));
      EXPECT_LE(s.k[g] * max, 8.f * (1 + 1e-6f));
      EXPECT_GE(s.v[g] * max, 0.25f * (1 - 1e-6f));
      EXPECT_LE(s.v[g] * max, 2.f * (1 + 1e-6f));
    }
    EXPECT_EQ(fp8_random_head_scales(t, 64, 7).k, s.k);
    EXPECT_NE(fp8_random_head_scales(t, 64, 8).k, s.k);
  }
}

// The reference dequantizes: two tokens, one head, D = 2, against the closed form in double.
TEST(Fp8Reference, DequantizesStoredBytesTimesTheHeadScale) {
  using E4 = __nv_fp8_e4m3;
  const DecodeShape shape{2, 2, 2};  // two heads, no grouping
  // K, V: (1 slot, 2 heads, 2 tokens, 2). Stored values exact in E4M3.
  const float kf[] = {1.f, -2.f, 0.5f, 448.f, /*head 1*/ 3.f, 0.25f, -1.5f, std::ldexp(1.f, -9)};
  const float vf[] = {2.f, 4.f, -8.f, 1.f, /*head 1*/ 0.5f, -0.75f, 6.f, 448.f};
  std::vector<E4> k, v;
  for (float x : kf) k.push_back(quantize_fp8<E4>(x, 1.f));
  for (float x : vf) v.push_back(quantize_fp8<E4>(x, 1.f));
  const float k_scale[] = {0.01f, 0.5f}, v_scale[] = {0.125f, 3.f};
  auto kv = ContiguousKV<E4>::make(k.data(), v.data(), 2, 2, 2);
  kv.k_scale = k_scale;
  kv.v_scale = v_scale;
  const std::vector<float> q = {0.5f, -1.f, 2.f, 1.f};
  const ReferenceOutput ref = reference_decode(kv, 0, 2, q, shape);
  const double s = 1.0 / std::sqrt(2.0);
  for (int h = 0; h < 2; ++h) {
    const double ks = k_scale[h], vs = v_scale[h];
    const double s0 = (q[2 * h] * kf[4 * h] + q[2 * h + 1] * kf[4 * h + 1]) * ks * s;
    const double s1 = (q[2 * h] * kf[4 * h + 2] + q[2 * h + 1] * kf[4 * h + 3]) * ks * s;
    const double m = std::max(s0, s1), w0 = std::exp(s0 - m), w1 = std::exp(s1 - m);
    EXPECT_NEAR(ref.lse[h], m + std::log(w0 + w1), 1e-12);
    for (int i = 0; i < 2; ++i)
      EXPECT_NEAR(ref.o[2 * h + i], (w0 * vf[4 * h + i] + w1 * vf[4 * h + 2 + i]) * vs / (w0 + w1), 1e-12);
  }
  // Without scales (nullptr = 1) the same bytes give the unscaled result.
  kv.k_scale = kv.v_scale = nullptr;
  const ReferenceOutput unscaled = reference_decode(kv, 0, 1, q, shape);
  EXPECT_DOUBLE_EQ(unscaled.o[0], 2.0);
  EXPECT_DOUBLE_EQ(unscaled.o[3], -0.75);
}

TEST(Fp8TrafficModel, OneBytePerElementPlusTheScales) {
  const DecodeShape shape{32, 8, 128};
  const std::vector<std::int32_t> lens = {4096, 1000};
  const auto fp16 = decode_traffic_model(DecodeKernel::flash_decode, shape, DType::fp16, lens, {}, 1);
  const auto fp8 = decode_traffic_model(DecodeKernel::flash_decode, shape, DType::fp8_e4m3, lens, {}, 1);
  EXPECT_EQ(fp8.k_bytes, 5096.0 * 8 * 128);
  EXPECT_EQ(fp8.v_bytes, fp8.k_bytes);
  EXPECT_EQ(fp16.k_bytes, 2 * fp8.k_bytes);
  EXPECT_EQ(fp8.scale_bytes, 2.0 * 8 * 4);
  EXPECT_EQ(fp16.scale_bytes, 0.0);
  EXPECT_EQ(fp8.minimum_bytes(), fp8.k_bytes + fp8.v_bytes + fp8.q_bytes + fp8.o_bytes + fp8.scale_bytes);
  EXPECT_EQ(fp8.flops, fp16.flops);  // the same arithmetic over half the bytes
  EXPECT_EQ(fp8.to_json("m")["scale_bytes"], 64.0);
}

TEST(Fp8Pools, PageAndRowBytesHalveAgainstFp16) {
  const KVLayout fp16{8, 128, DType::fp16}, fp8{8, 128, DType::fp8_e5m2};
  EXPECT_EQ(fp8.row_bytes(), 128u);
  EXPECT_EQ(fp8.token_kv_bytes(), 2u * 8 * 128);
  EXPECT_EQ(2 * fp8.token_bytes(), fp16.token_bytes());
  PagedPoolConfig a, b;
  a.layout = fp16;
  b.layout = fp8;
  a.page_size = b.page_size = 16;
  EXPECT_EQ(b.page_bytes(), 16u * 8 * 128);
  EXPECT_EQ(2 * b.page_bytes(), a.page_bytes());
}

// The sweep's device-memory estimate counts one byte per FP8 element: K + V of 32 heads x 64K x 128
// is 537 MB against FP16's 1074 MB (q and o, fp32, are the same in both).
TEST(Fp8MemoryEstimate, KAndVTakeOneBytePerElement) {
  nlohmann::json p = {{"kernel", "flash_decode"}, {"heads_q", 32}, {"heads_kv", 32}, {"head_dim", 128}, {"T", 65536}};
  p["dtype"] = "fp16";
  const std::uint64_t fp16 = sweeps::estimate_device_bytes(p);
  p["dtype"] = "fp8_e4m3";
  const std::uint64_t fp8 = sweeps::estimate_device_bytes(p);
  const std::uint64_t kv_fp8 = 2ull * 65536 * 32 * 128;
  EXPECT_EQ(fp16 - fp8, kv_fp8);
  EXPECT_EQ(fp8 - kv_fp8, 2ull * 32 * 128 * 4);  // q and o
}

TEST(Fp8Capacity, HoldsTwiceTheFp16Sequences) {
  for (PoolKind kind : {PoolKind::contiguous, PoolKind::paged}) {
    CapacityQuery q;
    q.budget_bytes = std::uint64_t{64} << 20;
    q.layout = {8, 128, DType::fp16};
    q.lengths = LengthDistribution::fixed(512);
    q.max_seq_len = 512;
    const auto fp16 = measure_capacity(kind, q, BackendKind::accounting);
    q.layout.dtype = DType::fp8_e4m3;
    const auto fp8 = measure_capacity(kind, q, BackendKind::accounting);
    // 64 MiB / (2 * 8 * 128 * 512 * 2 bytes) = 32 FP16 sequences; FP8 halves the bytes per token.
    EXPECT_EQ(fp16.sequences, 32) << pool_kind_name(kind);
    EXPECT_EQ(fp8.sequences, 64) << pool_kind_name(kind);
  }
}

}  // namespace
}  // namespace decode_bench
