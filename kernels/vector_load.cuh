#pragma once
// 16-byte loads of KV rows and their conversion to fp32. K/V are streamed exactly once per
// decode, so loads bypass L1 allocation (ld.global.nc.L1::no_allocate): caching them would only
// evict the block's q and page-table entries.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace decode_bench::device {

__device__ __forceinline__ uint4 load_stream_16B(const void* ptr) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(ptr));
  return r;
}

// Elements per 16-byte vector, and their fp32 values. to_float may return the stored values times
// a constant power of two, 1 / kUnitScale, when that makes the widening cheaper; callers fold
// kUnitScale into the scales they already apply (q and the output), so it costs nothing per element.
template <class T> struct Vec16;

template <> struct Vec16<float> {
  static constexpr int kElems = 4;
  static constexpr float kUnitScale = 1.f;
  __device__ __forceinline__ static void to_float(const uint4& v, float (&out)[4]) {
    out[0] = __uint_as_float(v.x);
    out[1] = __uint_as_float(v.y);
    out[2] = __uint_as_float(v.z);
    out[3] = __uint_as_float(v.w);
  }
};

template <> struct Vec16<__half> {
  static constexpr int kElems = 8;
  static constexpr float kUnitScale = 1.f;
  __device__ __forceinline__ static void to_float(const uint4& v, float (&out)[8]) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      __half2 h2;
      memcpy(&h2, &words[i], 4);
      const float2 f = __half22float2(h2);
      out[2 * i] = f.x;
      out[2 * i + 1] = f.y;
    }
  }
};

template <> struct Vec16<__nv_bfloat16> {
  static constexpr int kElems = 8;
  static constexpr float kUnitScale = 1.f;
  __device__ __forceinline__ static void to_float(const uint4& v, float (&out)[8]) {
    // bf16 is the top half of an fp32: widening is a shift or a mask, no conversion unit needed.
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = __uint_as_float(words[i] << 16);
      out[2 * i + 1] = __uint_as_float(words[i] & 0xffff0000u);
    }
  }
};

// FP8: 16 elements per vector. Both formats widen through FP16 with integer bit moves, not the
// conversion unit: a 32-bit word of four bytes b0..b3 becomes two half2 {b0, b2} and {b1, b3},
// and half2 -> float2 is the same cheap widening the FP16 path uses. The stored data are finite by
// construction (kernels/fp8_quantize.hpp saturates), so NaN/Inf encodings need no care here.
__device__ __forceinline__ void fp8_halves_to_float(const unsigned (&lo)[4], const unsigned (&hi)[4], float (&out)[16]) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    __half2 even, odd;
    memcpy(&even, &lo[i], 4);
    memcpy(&odd, &hi[i], 4);
    const float2 fe = __half22float2(even), fo = __half22float2(odd);
    out[4 * i + 0] = fe.x;
    out[4 * i + 1] = fo.x;
    out[4 * i + 2] = fe.y;
    out[4 * i + 3] = fo.y;
  }
}

// E5M2 is the upper byte of an FP16 (same sign, 5-bit exponent with bias 15, top mantissa bits):
// moving each byte to the top of a 16-bit half is the exact conversion.
template <> struct Vec16<__nv_fp8_e5m2> {
  static constexpr int kElems = 16;
  static constexpr float kUnitScale = 1.f;
  __device__ __forceinline__ static void to_float(const uint4& v, float (&out)[16]) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
    unsigned lo[4], hi[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      lo[i] = (words[i] << 8) & 0xff00ff00u;  // b0, b2 at the top of each half
      hi[i] = words[i] & 0xff00ff00u;         // b1, b3
    }
    fp8_halves_to_float(lo, hi, out);
  }
};

// E4M3 widens by default through sm_89+'s cvt.rn.f16x2.e4m3x2 (exact, one instruction per two
// elements): on the H100 it lifted E4M3 flash-decode nearer the DRAM read ceiling than the integer
// path below (commit e290b4d; docs/history/kernel-notes.md, "FP8 K/V (E4M3, E5M2)"). The integer
// path stays for older targets and as DECODE_BENCH_E4M3_HW_CVT=0: E4M3 (bias 7) placed as
// sign | 0eeee | mmm0000000 in an FP16 (bias 15) reads as the value times 2^-8 for normals and
// subnormals alike (E4M3 subnormals land on FP16 subnormals), hence kUnitScale = 256.
#ifndef DECODE_BENCH_E4M3_HW_CVT
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 890
#define DECODE_BENCH_E4M3_HW_CVT 0
#else
#define DECODE_BENCH_E4M3_HW_CVT 1
#endif
#endif
template <> struct Vec16<__nv_fp8_e4m3> {
  static constexpr int kElems = 16;
#if DECODE_BENCH_E4M3_HW_CVT
  static constexpr float kUnitScale = 1.f;
  __device__ __forceinline__ static void to_float(const uint4& v, float (&out)[16]) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      unsigned pair[2];  // {b0, b1} and {b2, b3} as half2, the lower byte in the lower half
      asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(pair[0]) : "h"(static_cast<unsigned short>(words[i] & 0xffffu)));
      asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(pair[1]) : "h"(static_cast<unsigned short>(words[i] >> 16)));
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        __half2 h;
        memcpy(&h, &pair[j], 4);
        const float2 f = __half22float2(h);
        out[4 * i + 2 * j] = f.x;
        out[4 * i + 2 * j + 1] = f.y;
      }
    }
  }
#else
  static constexpr float kUnitScale = 256.f;
  __device__ __forceinline__ static void to_float(const uint4& v, float (&out)[16]) {
    const unsigned words[4] = {v.x, v.y, v.z, v.w};
    unsigned lo[4], hi[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const unsigned w = words[i];
      lo[i] = ((w << 8) & 0x80008000u) | ((w << 7) & 0x3f803f80u);  // b0, b2
      hi[i] = (w & 0x80008000u) | ((w >> 1) & 0x3f803f80u);         // b1, b3
    }
    fp8_halves_to_float(lo, hi, out);
  }
#endif
};

}  // namespace decode_bench::device
