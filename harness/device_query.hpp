#pragma once
// Whether a usable CUDA device exists. GPU subcommands and GPU tests ask this first, so a
// machine without a GPU gets a sentence ("no CUDA device found: ...") instead of a crash. The
// sentence names the cause a user can act on: no NVIDIA driver at all, a driver older than this
// build's CUDA runtime, or a driver that sees no device.
#include <optional>
#include <string>

namespace decode_bench {

// nullopt when device `index` exists and has compute capability >= 8.0; otherwise the reason.
std::optional<std::string> device_unavailable_reason(int index = 0);

// What device_unavailable_reason learns when it asks for the device count.
struct DeviceCountProbe {
  bool driver_loads = true;     // libcuda.so.1 is loaded or loadable (false: no NVIDIA driver)
  int count_error = 0;          // cudaGetDeviceCount's cudaError_t, 0 on success
  std::string count_error_text; // cudaGetErrorString of it
  int device_count = 0;
  int driver_version = 0;       // cudaDriverGetVersion: 1000 * major + 10 * minor
  int runtime_version = 0;      // cudaRuntimeGetVersion, the same encoding
  std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES when set
};

// "no CUDA device found: " and the cause, or nullopt when the probe found a device:
//   no NVIDIA driver found (libcuda.so.1 cannot be loaded)
//   the NVIDIA driver supports CUDA 12.2 but this build's runtime is CUDA 13.0: update the driver
//   the driver reports 0 devices [(CUDA_VISIBLE_DEVICES='...')]
//   the runtime's error text, for any other failure
// The runtime returns cudaErrorInsufficientDriver both for an old driver and for none at all,
// which is why the driver library is probed separately.
std::optional<std::string> no_device_reason(const DeviceCountProbe& probe);

}  // namespace decode_bench
