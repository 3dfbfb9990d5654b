#pragma once
// The arrival count of a fused split merge (the threadFenceReduction pattern of the CUDA samples):
// each split block of a group (flash-decode's head block, the MLA kernel's row block) counts itself
// done once its partial stores are visible device-wide, and the block that counts last merges the
// group's splits. It leaves the counter zero, so a counter zeroed once serves every later launch.

namespace decode_bench::device {

// Called by every thread of a split block (it holds barriers; tid: its index in the block) after the
// block's partial stores.
// counter_of(): the group's counter (called by thread 0 alone, after the barrier: the other threads
// never compute the address); splits: the group's split blocks; last: a flag in shared memory (bool or
// unsigned: a static __shared__ one, or a word of the caller's dynamic shared memory where a static
// one would not fit). True in every thread of the block that counted last, whose loads after it
// see every split's partials; false in every thread of the others.
template <class CounterOf, class Flag>
__device__ __forceinline__ bool last_split_to_arrive(CounterOf counter_of, int splits, Flag* last, int tid) {
  __threadfence();  // this thread's partial stores are visible device-wide before the count below
  __syncthreads();
  if (tid == 0) {
    unsigned* const counter = counter_of();
    const bool is_last = atomicAdd(counter, 1u) == static_cast<unsigned>(splits) - 1;
    *last = is_last;
    if (is_last) *counter = 0;  // every split of the group has counted: ready for the next launch
  }
  __syncthreads();
  if (!*last) return false;
  __threadfence();
  return true;
}

}  // namespace decode_bench::device
