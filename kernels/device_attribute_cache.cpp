#include "kernels/device_attribute_cache.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace decode_bench {

cudaError_t cached_device_attribute(int* value, cudaDeviceAttr attr, int device) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, int> table;  // (device, attribute) -> value
  const std::pair<int, int> key{device, static_cast<int>(attr)};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = table.find(key); it != table.end()) {
      *value = it->second;
      return cudaSuccess;
    }
  }
  int v = 0;
  if (const cudaError_t e = cudaDeviceGetAttribute(&v, attr, device); e != cudaSuccess) return e;
  const std::lock_guard<std::mutex> lock(mutex);
  table.emplace(key, v);
  *value = v;
  return cudaSuccess;
}

cudaError_t clock_dram_bytes_per_s(int device, double* bytes_per_s) {
  int mem_khz = 0, bus_bits = 0;
  if (const cudaError_t e = cached_device_attribute(&mem_khz, cudaDevAttrMemoryClockRate, device); e != cudaSuccess)
    return e;
  if (const cudaError_t e = cached_device_attribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
      e != cudaSuccess)
    return e;
  *bytes_per_s = 2.0 * mem_khz * 1e3 * bus_bits / 8.0;
  return cudaSuccess;
}

}  // namespace decode_bench
