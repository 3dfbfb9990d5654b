#pragma once
// 16-byte loads of KV rows and their conversion to fp32. K/V are streamed exactly once per
// decode, so loads bypass L1 allocation (ld.global.nc.L1::no_allocate): caching them would only
// evict the block's q and page-table entries.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace decode_bench::device {

__device__ __forceinline__ uint4 load_stream_16B(const void* ptr) {
  uint4 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(ptr));
  return r;
}

// Elements per 16-byte vector, and their fp32 values.
template <class T> struct Vec16;

template <> struct Vec16<float> {
  static constexpr int kElems = 4;
  __device__ __forceinline__ static void to_float(const uint4& v, float (&out)[4]) {
    out[0] = __uint_as_float(v.x);
    out[1] = __uint_as_float(v.y);
    out[2] = __uint_as_float(v.z);
    out[3] = __uint_as_float(v.w);
  }
};

template <> struct Vec16<__half> {
  static constexpr int kElems = 8;
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

}  // namespace decode_bench::device
