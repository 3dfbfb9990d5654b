#pragma once
// Storage types of the KV cache. Queries and outputs are always FP32 (q: (H_q, D), o: (H_q, D)),
// and every kernel accumulates in FP32; only K and V change precision.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace decode_bench {

enum class DType { fp32, fp16, bf16 };

constexpr std::size_t dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

inline std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32" || s == "float32") return DType::fp32;
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  return std::nullopt;
}

// Host-side conversions used by the reference and by test-data generation.
inline double to_double(float x) { return x; }
inline double to_double(__half x) { return static_cast<double>(__half2float(x)); }
inline double to_double(__nv_bfloat16 x) { return static_cast<double>(__bfloat162float(x)); }

template <class T> T from_float(float x);
template <> inline float from_float<float>(float x) { return x; }
template <> inline __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> inline __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::fp32; };
template <> struct dtype_of<__half> { static constexpr DType value = DType::fp16; };
template <> struct dtype_of<__nv_bfloat16> { static constexpr DType value = DType::bf16; };

}  // namespace decode_bench
