#pragma once
// Hopper warpgroup MMA (wgmma.mma_async, sm_90a) building blocks shared by the kernels that use it:
// shared-memory matrix descriptors with the 128-byte swizzle, the fence / commit / wait steps, and
// the m64n256 instructions with both operands in shared memory. Everything here is defined only
// when the translation unit is compiled for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL); the callers guard
// their own bodies the same way (kernels/row_attention_wgmma.cuh, harness/ceiling_wgmma.cu).
#include <cstdint>

namespace decode_bench::device {

// The operand types of the shared-memory (SS) m64n256 forms below.
enum class WgmmaInput { f16, bf16, e4m3 };

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// A shared-memory matrix descriptor with the 128-byte swizzle; byte offsets are multiples of 16.
__device__ __forceinline__ std::uint64_t sw128_descriptor(std::uint32_t smem_addr, std::uint32_t leading_bytes,
                                                          std::uint32_t stride_bytes) {
  return static_cast<std::uint64_t>((smem_addr & 0x3FFFFu) >> 4) |
         (static_cast<std::uint64_t>(leading_bytes >> 4) << 16) |
         (static_cast<std::uint64_t>(stride_bytes >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Generic-proxy writes (cp.async, st.shared) made visible to wgmma's operand reads.
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Pins accumulator registers at this point of the program: the compiler must not move their
// reads or writes across an asynchronous wgmma's issue or wait.
template <int N>
__device__ __forceinline__ void fence_registers(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
// The same for register A fragments (16-bit pairs): defined before this point, and kept in their
// registers up to it (after a wgmma that reads them, until its wait).
template <int N>
__device__ __forceinline__ void fence_fragments(std::uint32_t (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// The FP32 accumulators of an m64nN instruction (N / 2 registers a thread: 16, 32, 64 or 128) as
// an inline-assembly operand list, DB_WGMMA_D<count>_LIST ("{%0, ..., %count-1}") with
// DB_WGMMA_D<count>_OPERANDS(d) (one "+f"(d[i]) a register): generated text, shared by every
// wgmma wrapper (kernels/row_attention_wgmma.cuh, kernels/mla/mla_decode_wgmma.cuh), so the
// accumulators are always operands 0 .. count - 1 and the instruction's other operands follow.
// Sixteen registers a piece: DB_WGMMA_R<k> is "%16k, ..., %16k+15" (string literals, so one a
// piece), DB_WGMMA_F(d, k) their operands d[16 k] .. d[16 k + 15].
#define DB_WGMMA_R0 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define DB_WGMMA_R1 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define DB_WGMMA_R2 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define DB_WGMMA_R3 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define DB_WGMMA_R4 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define DB_WGMMA_R5 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define DB_WGMMA_R6 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define DB_WGMMA_R7 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define DB_WGMMA_F(d, k) \
  "+f"(d[16 * (k) + 0]), "+f"(d[16 * (k) + 1]), "+f"(d[16 * (k) + 2]), "+f"(d[16 * (k) + 3]), \
  "+f"(d[16 * (k) + 4]), "+f"(d[16 * (k) + 5]), "+f"(d[16 * (k) + 6]), "+f"(d[16 * (k) + 7]), \
  "+f"(d[16 * (k) + 8]), "+f"(d[16 * (k) + 9]), "+f"(d[16 * (k) + 10]), "+f"(d[16 * (k) + 11]), \
  "+f"(d[16 * (k) + 12]), "+f"(d[16 * (k) + 13]), "+f"(d[16 * (k) + 14]), "+f"(d[16 * (k) + 15])
#define DB_WGMMA_D16_LIST "{" DB_WGMMA_R0 "}"
#define DB_WGMMA_D16_OPERANDS(d) DB_WGMMA_F(d, 0)
#define DB_WGMMA_D32_LIST "{" DB_WGMMA_R0 ", " DB_WGMMA_R1 "}"
#define DB_WGMMA_D32_OPERANDS(d) DB_WGMMA_F(d, 0), DB_WGMMA_F(d, 1)
#define DB_WGMMA_D64_LIST "{" DB_WGMMA_R0 ", " DB_WGMMA_R1 ", " DB_WGMMA_R2 ", " DB_WGMMA_R3 "}"
#define DB_WGMMA_D64_OPERANDS(d) DB_WGMMA_F(d, 0), DB_WGMMA_F(d, 1), DB_WGMMA_F(d, 2), DB_WGMMA_F(d, 3)
#define DB_WGMMA_D128_LIST                                                                                   \
  "{" DB_WGMMA_R0 ", " DB_WGMMA_R1 ", " DB_WGMMA_R2 ", " DB_WGMMA_R3 ", " DB_WGMMA_R4 ", " DB_WGMMA_R5 ", " \
      DB_WGMMA_R6 ", " DB_WGMMA_R7 "}"
#define DB_WGMMA_D128_OPERANDS(d)                                                                        \
  DB_WGMMA_F(d, 0), DB_WGMMA_F(d, 1), DB_WGMMA_F(d, 2), DB_WGMMA_F(d, 3), DB_WGMMA_F(d, 4), DB_WGMMA_F(d, 5), \
      DB_WGMMA_F(d, 6), DB_WGMMA_F(d, 7)

// d (64 x 256, FP32) (+)= A (64 x K) B (K x 256), both K-major in shared memory (descriptors), K = 16
// for f16 / bf16 and 32 for e4m3 (32 bytes of a 128-byte swizzled row either way). accumulate 0
// overwrites d. FP8 takes no transpose immediates: its operands are always K-major.
template <WgmmaInput kIn>
__device__ __forceinline__ void wgmma_m64n256_ss(float (&d)[128], std::uint64_t a_desc, std::uint64_t b_desc,
                                                 int accumulate) {
  if constexpr (kIn == WgmmaInput::f16) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " DB_WGMMA_D128_LIST
                 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : DB_WGMMA_D128_OPERANDS(d)
                 : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  } else if constexpr (kIn == WgmmaInput::bf16) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " DB_WGMMA_D128_LIST
                 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : DB_WGMMA_D128_OPERANDS(d)
                 : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  } else {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " DB_WGMMA_D128_LIST
                 ", %128, %129, p, 1, 1;\n}\n"
                 : DB_WGMMA_D128_OPERANDS(d)
                 : "l"(a_desc), "l"(b_desc), "r"(accumulate));
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace decode_bench::device
