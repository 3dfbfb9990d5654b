#include "kernels/kernel_occupancy_cache.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace decode_bench {
namespace {

struct Attributes {
  bool limit_set = false;
  std::size_t limit = 0;
  bool carveout = false;
};
std::mutex mutex;
std::map<std::pair<int, const void*>, Attributes> attributes;  // per (device, kernel)

}  // namespace

cudaError_t prepared_occupancy(const void* kernel, std::size_t max_shared_bytes, bool carveout_max_shared, int threads,
                               std::size_t shared_bytes, int* blocks_per_sm) {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  using OccupancyKey = std::tuple<int, const void*, int, std::size_t, std::size_t, bool>;
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

cudaError_t prepared_max_active_clusters(const void* kernel, int threads, std::size_t shared_bytes, int cluster_blocks,
                                         bool one_block_per_sm, int* clusters) {
  int device = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  using ClusterKey = std::tuple<int, const void*, int, std::size_t, int, bool>;
  static std::map<ClusterKey, int> cached;
  const std::lock_guard<std::mutex> lock(mutex);
  const ClusterKey key{device, kernel, threads, one_block_per_sm ? 0 : shared_bytes, cluster_blocks, one_block_per_sm};
  if (const auto it = cached.find(key); it != cached.end()) {
    *clusters = it->second;
    return cudaSuccess;
  }
  const auto a = attributes.find({device, kernel});
  if (a == attributes.end() || !a->second.limit_set) return cudaErrorInvalidValue;  // not prepared
  std::size_t asked = shared_bytes;
  if (one_block_per_sm) {
    // All the shared memory a block may opt in to, less the kernel's static share: no second block fits.
    int optin = 0;
    cudaFuncAttributes f{};
    if (const cudaError_t e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
        e != cudaSuccess)
      return e;
    if (const cudaError_t e = cudaFuncGetAttributes(&f, kernel); e != cudaSuccess) return e;
    asked = std::max(shared_bytes, static_cast<std::size_t>(optin) - f.sharedSizeBytes);
  }
  const bool raise = asked > a->second.limit;
  if (raise) {
    if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(asked));
        e != cudaSuccess)
      return e;
  }
  cudaLaunchAttribute dims = cluster_dims_along_y(static_cast<unsigned>(cluster_blocks));
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1, static_cast<unsigned>(cluster_blocks));
  config.blockDim = dim3(static_cast<unsigned>(threads));
  config.dynamicSmemBytes = asked;
  config.attrs = &dims;
  config.numAttrs = 1;
  int n = 0;
  const cudaError_t query = cudaOccupancyMaxActiveClusters(&n, kernel, &config);
  if (raise) {  // back to the limit the planners set (the cache above keeps it)
    if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(a->second.limit));
        e != cudaSuccess)
      return e;
  }
  if (query != cudaSuccess) return query;
  cached.emplace(key, n);
  *clusters = n;
  return cudaSuccess;
}

}  // namespace decode_bench
