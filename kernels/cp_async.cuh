#pragma once
// Asynchronous 16-byte global -> shared copies (sm_80+ cp.async), the staging primitive of the
// pipelined flash-decode path. .cg bypasses L1: K/V rows are read once.
#include <cstdint>

namespace decode_bench::device {

// Copies 16 bytes, or zero-fills the destination when !valid (src-size 0 reads nothing; the
// source must still be a mapped address, so callers pass a clamped row).
//   shared_dst: a shared-window address (as from shared_address below)
__device__ __forceinline__ void cp_async_16B(std::uint32_t shared_dst, const void* global_src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared_dst), "l"(global_src),
               "r"(valid ? 16 : 0)
               : "memory");
}

// The shared-window address of a pointer into shared memory.
__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// 16 bytes from a shared-window address. (Through a generic pointer the compiler emits generic
// loads once the address has been rounded as an integer; this keeps them LDS.128.)
__device__ __forceinline__ uint4 load_shared_16B(std::uint32_t shared_src) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(shared_src)
               : "memory");
  return v;
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most `kPending` of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

}  // namespace decode_bench::device
