#pragma once
// Storage types of the KV cache. Queries and outputs are always FP32 (q: (H_q, D), o: (H_q, D)),
// and every kernel accumulates in FP32; only K and V change precision. The FP8 types (OCP E4M3:
// max 448, subnormals down to 2^-9; E5M2: max 57344, down to 2^-16) store K and V divided by a
// per-KV-head scale that the accessors carry (kernels/kv_accessor.hpp, kernels/fp8_quantize.hpp).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace decode_bench {

enum class DType { fp32, fp16, bf16, fp8_e4m3, fp8_e5m2 };

constexpr bool dtype_is_fp8(DType t) { return t == DType::fp8_e4m3 || t == DType::fp8_e5m2; }
constexpr std::size_t dtype_bytes(DType t) { return t == DType::fp32 ? 4 : dtype_is_fp8(t) ? 1 : 2; }

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp8_e4m3: return "fp8_e4m3";
    case DType::fp8_e5m2: return "fp8_e5m2";
  }
  return "?";
}

inline std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "float32") return DType::fp32;
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "fp8_e4m3" || s == "e4m3") return DType::fp8_e4m3;
  if (s == "fp8_e5m2" || s == "e5m2") return DType::fp8_e5m2;
  return std::nullopt;
}

// The accepted names, for error messages.
constexpr std::string_view dtype_choices() { return "fp32, fp16, bf16, fp8_e4m3 or fp8_e5m2"; }

// Host-side conversions used by the reference and by test-data generation.
inline double to_double(float x) { return x; }
inline double to_double(__half x) { return static_cast<double>(__half2float(x)); }
inline double to_double(__nv_bfloat16 x) { return static_cast<double>(__bfloat162float(x)); }
// FP8 through a 256-entry table built once from cuda_fp8.h's own conversion: the reference reads
// every stored element, and the table is many times faster than the header's host code path.
template <class T>
const double* fp8_decode_table() {
  static const std::array<double, 256> table = [] {
    std::array<double, 256> t{};
    for (int b = 0; b < 256; ++b) {
      T x;
      x.__x = static_cast<__nv_fp8_storage_t>(b);
      t[b] = static_cast<double>(static_cast<float>(x));
    }
    return t;
  }();
  return table.data();
}
inline double to_double(__nv_fp8_e4m3 x) { return fp8_decode_table<__nv_fp8_e4m3>()[x.__x]; }
inline double to_double(__nv_fp8_e5m2 x) { return fp8_decode_table<__nv_fp8_e5m2>()[x.__x]; }

template <class T> T from_float(float x);
template <> inline float from_float<float>(float x) { return x; }
template <> inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
// FP8: round to nearest even, saturating to the largest finite value (never Inf/NaN for finite x).
template <> inline __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float x) {
  __nv_fp8_e4m3 r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  return r;
}
template <> inline __nv_fp8_e5m2 from_float<__nv_fp8_e5m2>(float x) {
  __nv_fp8_e5m2 r;
  r.__x = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  return r;
}

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::fp32; };
template <> struct dtype_of<__half> { static constexpr DType value = DType::fp16; };
template <> struct dtype_of<__nv_bfloat16> { static constexpr DType value = DType::bf16; };
template <> struct dtype_of<__nv_fp8_e4m3> { static constexpr DType value = DType::fp8_e4m3; };
template <> struct dtype_of<__nv_fp8_e5m2> { static constexpr DType value = DType::fp8_e5m2; };

}  // namespace decode_bench
