#include "harness/gpu_state.hpp"

#include <cstdio>
#include <string>
#include <utility>

#include <cuda_runtime.h>
#include <dlfcn.h>

#include "harness/results_schema.hpp"

namespace decode_bench {
namespace {

using nlohmann::json;

// The few NVML entry points used, declared here (nvml.h is not always installed with the
// toolkit). Types and constants as in NVML's public API: nvmlReturn_t is an int enum whose
// success value is 0; NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2; NVML_TEMPERATURE_GPU = 0.
using NvmlDevice = struct NvmlDeviceOpaque*;
using NvmlInit = int (*)();
using NvmlByPci = int (*)(const char*, NvmlDevice*);
using NvmlClock = int (*)(NvmlDevice, int, unsigned*);
using NvmlTemperature = int (*)(NvmlDevice, int, unsigned*);
using NvmlPower = int (*)(NvmlDevice, unsigned*);
using NvmlThrottle = int (*)(NvmlDevice, unsigned long long*);
using NvmlDriver = int (*)(char*, unsigned);

struct Nvml {
  NvmlByPci by_pci = nullptr;
  NvmlClock clock = nullptr;
  NvmlTemperature temperature = nullptr;
  NvmlPower power = nullptr;
  NvmlThrottle throttle = nullptr;
  NvmlDriver driver = nullptr;
  bool ok = false;
};

// Opened and initialised once per process; never closed (NVML's handles stay valid).
const Nvml& nvml() {
  static const Nvml loaded = [] {
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return n;
    const auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
    n.by_pci = reinterpret_cast<NvmlByPci>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    n.clock = reinterpret_cast<NvmlClock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    n.temperature = reinterpret_cast<NvmlTemperature>(dlsym(lib, "nvmlDeviceGetTemperature"));
    n.power = reinterpret_cast<NvmlPower>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    n.throttle = reinterpret_cast<NvmlThrottle>(dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!n.throttle) n.throttle = reinterpret_cast<NvmlThrottle>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    n.driver = reinterpret_cast<NvmlDriver>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    n.ok = init && n.by_pci && n.clock && init() == 0;
    return n;
  }();
  return loaded;
}

bool from_nvml(int device, json& out) {
  const Nvml& n = nvml();
  if (!n.ok) return false;
  char pci[32] = {};
  if (cudaDeviceGetPCIBusId(pci, sizeof pci, device) != cudaSuccess) return false;
  NvmlDevice handle = nullptr;
  if (n.by_pci(pci, &handle) != 0) return false;
  unsigned sm = 0, mem = 0;
  if (n.clock(handle, 1, &sm) != 0 || n.clock(handle, 2, &mem) != 0) return false;
  out["source"] = "nvml";
  out["sm_clock_mhz"] = sm;
  out["memory_clock_mhz"] = mem;
  unsigned value = 0;
  if (n.temperature && n.temperature(handle, 0, &value) == 0) out["temperature_c"] = value;
  if (n.power && n.power(handle, &value) == 0) out["power_w"] = value / 1000.0;
  unsigned long long reasons = 0;
  if (n.throttle && n.throttle(handle, &reasons) == 0) out["throttle_reasons"] = reasons;  // NVML bit mask
  char driver[96] = {};
  if (n.driver && n.driver(driver, sizeof driver) == 0) out["driver_version"] = std::string(driver);
  return true;
}

}  // namespace

std::string gpu_slowdown_reason(const json& snapshot) {
  const auto it = snapshot.find("throttle_reasons");
  if (it == snapshot.end() || !it->is_number_unsigned()) return "";
  const unsigned long long mask = it->get<unsigned long long>();
  constexpr std::pair<unsigned long long, const char*> kSlowdowns[] = {
      {0x8, "hardware slowdown"}, {0x20, "software thermal slowdown"}, {0x40, "hardware thermal slowdown"},
      {0x80, "hardware power brake"}};
  std::string words;
  for (const auto& [bit, name] : kSlowdowns)
    if (mask & bit) words += (words.empty() ? "" : ", ") + std::string(name);
  if (words.empty()) return "";
  char hex[32];
  std::snprintf(hex, sizeof hex, "0x%llx", mask);
  return words + " (NVML throttle reasons " + hex + ")";
}

json gpu_state_snapshot(int device) {
  json out = {{"time", utc_timestamp()}};
  if (from_nvml(device, out)) return out;
  int sm_khz = 0, mem_khz = 0;
  if (cudaDeviceGetAttribute(&sm_khz, cudaDevAttrClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky error: the sweep goes on
    out["source"] = "none";
    out["error"] = "neither NVML nor the CUDA clock attributes answered for device " + std::to_string(device);
    return out;
  }
  out["source"] = "cuda_attribute";  // peak clocks, not current ones
  out["sm_clock_mhz"] = sm_khz / 1000;
  out["memory_clock_mhz"] = mem_khz / 1000;
  return out;
}

}  // namespace decode_bench
