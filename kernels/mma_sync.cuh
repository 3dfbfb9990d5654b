#pragma once
// The warp-level tensor-core operands of the mma.sync kernels (row attention, MLA, short decode):
// each storage type's m16n8k16 instruction and float -> pair packing (MmaStorage), and the
// ldmatrix loads of 16-bit operands from shared memory.
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

namespace decode_bench::device {

// Everything the tensor-core path knows about a storage type, in one place: the mma instruction
// on two-element registers of it, the float -> storage pair packing of q and P, and whether q / P
// need a hi + lo split. Another storage type (FP8 E4M3/E5M2 with a per-head scale, say) adds a
// specialisation here that converts its staged tile to a supported operand type.
template <class T> struct MmaStorage;

template <> struct MmaStorage<__half> {
  static constexpr bool kSplit = false;
  static constexpr bool kFp8 = false;
  static constexpr float kQBoost = 1.f, kPBoost = 1.f;  // exact pre-scales of q and P (FP8 only)
  __device__ __forceinline__ static std::uint32_t pack(float a, float b) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
  __device__ __forceinline__ static float2 unpack(std::uint32_t w) {
    return __half22float2(*reinterpret_cast<const __half2*>(&w));
  }
  __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

template <> struct MmaStorage<__nv_bfloat16> {
  static constexpr bool kSplit = true;
  static constexpr bool kFp8 = false;
  static constexpr float kQBoost = 1.f, kPBoost = 1.f;
  __device__ __forceinline__ static std::uint32_t pack(float a, float b) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
  __device__ __forceinline__ static float2 unpack(std::uint32_t w) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  }
  __device__ __forceinline__ static void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                             std::uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

// FP8: the FP16 mma and packing on widened fragments, q and P split hi + lo.
struct MmaStorageFp8 : MmaStorage<__half> {
  static constexpr bool kSplit = true;
  static constexpr bool kFp8 = true;
  static constexpr float kQBoost = 16.f, kPBoost = 256.f;
};
template <> struct MmaStorage<__nv_fp8_e4m3> : MmaStorageFp8 {};
template <> struct MmaStorage<__nv_fp8_e5m2> : MmaStorageFp8 {};

// The lo pair of a hi + lo split (MmaStorage::kSplit): (a, b) less their hi pair `hi` (Ops::pack(a,
// b)), rounded to the same storage type, so that hi + lo holds (a, b) to about twice the bits.
template <class Ops>
__device__ __forceinline__ std::uint32_t split_lo(float a, float b, std::uint32_t hi) {
  const float2 h = Ops::unpack(hi);
  return Ops::pack(a - h.x, b - h.y);
}

__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}

}  // namespace decode_bench::device
