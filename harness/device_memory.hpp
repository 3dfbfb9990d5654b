#pragma once
// Device memory for the buffers a sweep allocates point after point (DeviceBuffer, the pools'
// arenas, the backends' workspaces): one stream-ordered memory pool per device that keeps what is
// freed (its release threshold is all of it), so a point's buffers reuse the memory earlier points
// freed instead of handing it back to the driver and asking for it again.
//
// Why not cudaMalloc / cudaFree. For a few seconds after memory is handed back to the driver, DRAM
// reads of every other buffer on the device run measurably slower (docs/harness.md, "Memory handed
// back to the driver"). A point that followed a larger one was timed in that window: its time
// depended on the order of the points.
//
// When the pool cannot grow to a request, its idle memory is handed back (cudaMemPoolTrimTo) and
// the request retried after trim_settle(), so whatever is timed next runs on a settled device. A
// request that still does not fit fails with cudaErrorMemoryAllocation, as cudaMalloc's did.
//
// Allocation and free are synchronous, as cudaMalloc and cudaFree are: the allocation is complete
// on return, and the free waits for the device (nothing may still be using the memory).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

namespace decode_bench {

namespace device_memory_detail {

inline std::mutex& pools_mutex() {
  static std::mutex m;
  return m;
}
// One pool per device index, created on first use and never destroyed (process exit frees it; a
// destructor at static teardown could run after the CUDA runtime has gone).
inline std::vector<cudaMemPool_t>& pools() {
  static std::vector<cudaMemPool_t> p;
  return p;
}

inline cudaError_t pool_for(int device, cudaMemPool_t* out) {
  std::lock_guard<std::mutex> lock(pools_mutex());
  std::vector<cudaMemPool_t>& p = pools();
  if (static_cast<std::size_t>(device) >= p.size()) p.resize(static_cast<std::size_t>(device) + 1, nullptr);
  if (!p[static_cast<std::size_t>(device)]) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    if (const cudaError_t e = cudaMemPoolCreate(&pool, &props); e != cudaSuccess) return e;
    std::uint64_t keep_all = UINT64_MAX;
    if (const cudaError_t e = cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all);
        e != cudaSuccess) {
      cudaMemPoolDestroy(pool);
      return e;
    }
    p[static_cast<std::size_t>(device)] = pool;
  }
  *out = p[static_cast<std::size_t>(device)];
  return cudaSuccess;
}

inline cudaError_t allocate_from(cudaMemPool_t pool, void** ptr, std::size_t bytes) {
  // The calling thread's default stream: never a stream being captured into a graph, and ordered
  // with nothing else, so the synchronisation below waits for the allocation alone.
  cudaError_t e = cudaMallocFromPoolAsync(ptr, bytes, pool, cudaStreamPerThread);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamPerThread);
  return e;
}

inline std::size_t reserved_bytes(cudaMemPool_t pool) {
  std::uint64_t reserved = 0;
  if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) != cudaSuccess) return 0;
  return static_cast<std::size_t>(reserved);
}

}  // namespace device_memory_detail

// How long a request waits after the pool handed idle memory back before it is retried (the
// slowdown's duration, with margin: docs/harness.md). Tests may shorten it.
inline std::chrono::milliseconds& trim_settle() {
  static std::chrono::milliseconds settle{5000};
  return settle;
}

// `bytes` of device memory on the current device, 256-byte aligned as cudaMalloc's (a request of
// 0 bytes gives nullptr). cudaErrorMemoryAllocation when it does not fit even after the pool's
// idle memory was handed back (the error is cleared: it is not sticky).
inline cudaError_t device_malloc(void** ptr, std::size_t bytes) {
  *ptr = nullptr;
  if (bytes == 0) return cudaSuccess;
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  cudaMemPool_t pool = nullptr;
  if (const cudaError_t e = device_memory_detail::pool_for(device, &pool); e != cudaSuccess) return e;
  cudaError_t e = device_memory_detail::allocate_from(pool, ptr, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    if (device_memory_detail::reserved_bytes(pool) > 0) {  // cudaMemPoolTrimTo keeps what is in use
      cudaDeviceSynchronize();
      cudaMemPoolTrimTo(pool, 0);
      std::this_thread::sleep_for(trim_settle());
      e = device_memory_detail::allocate_from(pool, ptr, bytes);
      if (e == cudaErrorMemoryAllocation) cudaGetLastError();
    }
  }
  if (e == cudaSuccess && reinterpret_cast<std::uintptr_t>(*ptr) % 256 != 0) {
    // Layouts assume cudaMalloc's alignment; a pool that broke it is a bug to report, not to absorb.
    cudaFreeAsync(*ptr, cudaStreamPerThread);
    cudaStreamSynchronize(cudaStreamPerThread);
    *ptr = nullptr;
    return cudaErrorMisalignedAddress;
  }
  if (e != cudaSuccess) *ptr = nullptr;
  return e;
}

// Returns `ptr` (from device_malloc) to its pool once the device is idle; errors are ignored (a
// destructor must not throw; a sticky error is reported by whatever runs next).
inline void device_free(void* ptr) noexcept {
  if (!ptr) return;
  cudaDeviceSynchronize();
  cudaFreeAsync(ptr, cudaStreamPerThread);
  cudaStreamSynchronize(cudaStreamPerThread);
}

// Device memory the device's pool holds (in use or kept for reuse); the driver does not count it
// as free (cudaMemGetInfo). 0 before the pool's first use. Between points nothing of the pool is in
// use, so all of it is free for the next point. (The pool's count of the memory in use, by
// contrast, was seen to lag a free on the H100, so it is not used here.)
inline std::size_t device_pool_reserved_bytes(int device) {
  std::lock_guard<std::mutex> lock(device_memory_detail::pools_mutex());
  const std::vector<cudaMemPool_t>& p = device_memory_detail::pools();
  if (device < 0 || static_cast<std::size_t>(device) >= p.size() || !p[static_cast<std::size_t>(device)]) return 0;
  return device_memory_detail::reserved_bytes(p[static_cast<std::size_t>(device)]);
}

}  // namespace decode_bench
