#include "harness/device_query.hpp"

#include <cstdlib>

#include <cuda_runtime.h>
#include <dlfcn.h>

namespace decode_bench {
namespace {

// "12.2" from 12020.
std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// The runtime loads the driver library by this name; RTLD_NOLOAD finds it when it already did.
bool driver_library_loads() {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!handle) handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!handle) return false;
  dlclose(handle);
  return true;
}

DeviceCountProbe probe_device_count() {
  DeviceCountProbe probe;
  const cudaError_t err = cudaGetDeviceCount(&probe.device_count);
  if (err == cudaSuccess && probe.device_count > 0) return probe;
  cudaGetLastError();  // clear, so later queries are not poisoned by this probe
  probe.count_error = static_cast<int>(err);
  probe.count_error_text = cudaGetErrorString(err);
  probe.driver_loads = driver_library_loads();
  cudaDriverGetVersion(&probe.driver_version);  // 0 without a driver
  cudaRuntimeGetVersion(&probe.runtime_version);
  cudaGetLastError();
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES")) probe.visible_devices = visible;
  return probe;
}

}  // namespace

std::optional<std::string> no_device_reason(const DeviceCountProbe& probe) {
  const std::string prefix = "no CUDA device found: ";
  if (probe.count_error == cudaSuccess && probe.device_count > 0) return std::nullopt;
  if (!probe.driver_loads) return prefix + "no NVIDIA driver found (libcuda.so.1 cannot be loaded)";
  if (probe.count_error == cudaErrorInsufficientDriver && probe.driver_version > 0 && probe.runtime_version > 0)
    return prefix + "the NVIDIA driver supports CUDA " + cuda_version_text(probe.driver_version) +
           " but this build's runtime is CUDA " + cuda_version_text(probe.runtime_version) + ": update the driver";
  if (probe.count_error == cudaSuccess || probe.count_error == cudaErrorNoDevice) {
    std::string reason = prefix + "the driver reports 0 devices";
    if (probe.visible_devices) reason += " (CUDA_VISIBLE_DEVICES='" + *probe.visible_devices + "')";
    return reason;
  }
  return prefix + probe.count_error_text;
}

std::optional<std::string> device_unavailable_reason(int index) {
  const DeviceCountProbe probe = probe_device_count();
  if (auto reason = no_device_reason(probe)) return reason;
  const int count = probe.device_count;
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
