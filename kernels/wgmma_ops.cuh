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

// The FP32 accumulators of an m64nN instruction (N / 2 registers a thread: 16, 32, 64 or 128) as
// an inline-assembly operand list, DB_WGMMA_D<count>_LIST ("{%0, ..., %count-1}") with
// DB_WGMMA_D<count>_OPERANDS(d) (one "+f"(d[i]) a register): generated text, shared by every
// wgmma wrapper (kernels/row_attention_wgmma.cuh, kernels/mla/mla_decode_wgmma.cuh), so the
// accumulators are always operands 0 .. count - 1 and the instruction's other operands follow.
// Sixteen registers a piece: DB_WGMMA_R<k> is "%16k, ..., %16k+15", DB_WGMMA_F<k>(d) their operands.
#define DB_WGMMA_R0 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define DB_WGMMA_R1 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define DB_WGMMA_R2 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define DB_WGMMA_R3 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define DB_WGMMA_R4 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define DB_WGMMA_R5 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define DB_WGMMA_R6 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define DB_WGMMA_R7 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define DB_WGMMA_F0(d) \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
  "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define DB_WGMMA_F1(d) \
  "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
  "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define DB_WGMMA_F2(d) \
  "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
  "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define DB_WGMMA_F3(d) \
  "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
  "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define DB_WGMMA_F4(d) \
  "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
  "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79])
#define DB_WGMMA_F5(d) \
  "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
  "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
#define DB_WGMMA_F6(d) \
  "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
  "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111])
#define DB_WGMMA_F7(d) \
  "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
  "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
#define DB_WGMMA_D16_LIST "{" DB_WGMMA_R0 "}"
#define DB_WGMMA_D16_OPERANDS(d) DB_WGMMA_F0(d)
#define DB_WGMMA_D32_LIST "{" DB_WGMMA_R0 ", " DB_WGMMA_R1 "}"
#define DB_WGMMA_D32_OPERANDS(d) DB_WGMMA_F0(d), DB_WGMMA_F1(d)
#define DB_WGMMA_D64_LIST "{" DB_WGMMA_R0 ", " DB_WGMMA_R1 ", " DB_WGMMA_R2 ", " DB_WGMMA_R3 "}"
#define DB_WGMMA_D64_OPERANDS(d) DB_WGMMA_F0(d), DB_WGMMA_F1(d), DB_WGMMA_F2(d), DB_WGMMA_F3(d)
#define DB_WGMMA_D128_LIST \
  "{" DB_WGMMA_R0 ", " DB_WGMMA_R1 ", " DB_WGMMA_R2 ", " DB_WGMMA_R3 ", " DB_WGMMA_R4 ", " DB_WGMMA_R5 ", " DB_WGMMA_R6 ", " DB_WGMMA_R7 "}"
#define DB_WGMMA_D128_OPERANDS(d) \
  DB_WGMMA_F0(d), DB_WGMMA_F1(d), DB_WGMMA_F2(d), DB_WGMMA_F3(d), DB_WGMMA_F4(d), DB_WGMMA_F5(d), DB_WGMMA_F6(d), DB_WGMMA_F7(d)

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
