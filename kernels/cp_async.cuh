#pragma once
// Asynchronous 16-byte global -> shared copies (sm_80+ cp.async), the staging primitive of the
// pipelined flash-decode path. .cg bypasses L1: K/V rows are read once.
#include <cstdint>

namespace decode_bench::device {

// Copies 16 bytes, or zero-fills the destination when !valid (src-size 0 reads nothing; the
// source must still be a mapped address, so callers pass a clamped row).
__device__ __forceinline__ void cp_async_16B(void* shared_dst, const void* global_src, bool valid) {
  const auto dst = static_cast<std::uint32_t>(__cvta_generic_to_shared(shared_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(global_src), "r"(valid ? 16 : 0)
               : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// Waits until at most `kPending` of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

}  // namespace decode_bench::device
