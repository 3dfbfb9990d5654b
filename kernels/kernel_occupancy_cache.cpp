#include "kernels/kernel_occupancy_cache.hpp"

#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace decode_bench {

cudaError_t prepared_occupancy(const void* kernel, std::size_t max_shared_bytes, bool carveout_max_shared, int threads,
                               std::size_t shared_bytes, int* blocks_per_sm) {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  struct Attributes {
    bool limit_set = false;
    std::size_t limit = 0;
    bool carveout = false;
  };
  using OccupancyKey = std::tuple<int, const void*, int, std::size_t, std::size_t, bool>;
  static std::mutex mutex;
  static std::map<std::pair<int, const void*>, Attributes> attributes;
  static std::map<OccupancyKey, int> occupancy;
  const std::lock_guard<std::mutex> lock(mutex);
  Attributes& a = attributes[{device, kernel}];
  if (!a.limit_set || a.limit != max_shared_bytes) {
    if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(max_shared_bytes));
        e != cudaSuccess)
      return e;
    a.limit_set = true;
    a.limit = max_shared_bytes;
  }
  if (carveout_max_shared && !a.carveout) {
    if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                                   cudaSharedmemCarveoutMaxShared);
        e != cudaSuccess)
      return e;
    a.carveout = true;
  }
  const OccupancyKey key{device, kernel, threads, shared_bytes, a.limit, a.carveout};
  if (const auto it = occupancy.find(key); it != occupancy.end()) {
    *blocks_per_sm = it->second;
    return cudaSuccess;
  }
  int blocks = 0;
  if (const cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, shared_bytes);
      e != cudaSuccess)
    return e;
  occupancy.emplace(key, blocks);
  *blocks_per_sm = blocks;
  return cudaSuccess;
}

}  // namespace decode_bench
