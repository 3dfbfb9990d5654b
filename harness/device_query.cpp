#include "harness/device_query.hpp"

#include <cuda_runtime.h>

namespace decode_bench {

std::optional<std::string> device_unavailable_reason(int index) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear, so later queries are not poisoned by this probe
    return std::string("no CUDA device found: ") + cudaGetErrorString(err);
  }
  if (count == 0) return std::string("no CUDA device found: the driver reports 0 devices");
  if (index < 0 || index >= count)
    return "device index " + std::to_string(index) + " is out of range: " + std::to_string(count) +
           " device(s) present";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess)
    return "cannot read properties of device " + std::to_string(index);
  if (prop.major < 8)
    return std::string("device ") + prop.name + " has compute capability " + std::to_string(prop.major) +
           "." + std::to_string(prop.minor) + "; decode-bench needs 8.0 or newer";
  return std::nullopt;
}

}  // namespace decode_bench
