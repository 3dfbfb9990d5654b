#include "harness/device_info.hpp"

#include <cstdio>
#include <stdexcept>

#include <cuda_runtime.h>

#include "harness/cuda_check.hpp"
#include "harness/device_query.hpp"

namespace decode_bench {

double DeviceInfo::theoretical_dram_gbps() const {
  return 2.0 * (1e3 * memory_clock_khz) * (memory_bus_width_bits / 8.0) / 1e9;
}

DeviceInfo query_device_info(int device) {
  if (const auto reason = device_unavailable_reason(device)) throw std::runtime_error(*reason);
  DeviceInfo info;
  info.index = device;
  cudaDeviceProp prop{};
  DB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  info.name = prop.name;
  char bus_id[32] = {};
  DB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
  info.pci_bus_id = bus_id;
  info.memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  // CUDA 13 dropped clockRate/memoryClockRate from cudaDeviceProp; attributes work on 11-13.
  auto attr = [device](cudaDeviceAttr a) {
    int v = 0;
    DB_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
    return v;
  };
  info.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  info.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  info.sm_count = attr(cudaDevAttrMultiProcessorCount);
  info.l2_bytes = attr(cudaDevAttrL2CacheSize);
  info.shared_memory_per_sm_bytes = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  info.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
  info.sm_clock_khz = attr(cudaDevAttrClockRate);
  info.memory_clock_khz = attr(cudaDevAttrMemoryClockRate);
  info.memory_bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth);
  info.ecc_enabled = attr(cudaDevAttrEccEnabled) != 0;
  DB_CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  DB_CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

nlohmann::json to_json(const DeviceInfo& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"pci_bus_id", d.pci_bus_id},
          {"compute_capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"l2_bytes", d.l2_bytes},
          {"memory_bytes", d.memory_bytes},
          {"shared_memory_per_sm_bytes", d.shared_memory_per_sm_bytes},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"sm_clock_khz", d.sm_clock_khz},
          {"memory_clock_khz", d.memory_clock_khz},
          {"memory_bus_width_bits", d.memory_bus_width_bits},
          {"ecc_enabled", d.ecc_enabled},
          {"driver_version", d.driver_version},
          {"runtime_version", d.runtime_version},
          {"theoretical_dram_gbps", d.theoretical_dram_gbps()}};
}

namespace {

template <typename T>
T field(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) throw std::invalid_argument(std::string("device.") + key + ": missing");
  try {
    return j.at(key).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("device.") + key + ": wrong type (" + e.what() + ")");
  }
}

}  // namespace

DeviceInfo device_info_from_json(const nlohmann::json& j) {
  DeviceInfo d;
  d.index = j.value("index", 0);
  d.name = field<std::string>(j, "name");
  d.pci_bus_id = j.value("pci_bus_id", "");
  const std::string cc = field<std::string>(j, "compute_capability");
  if (std::sscanf(cc.c_str(), "%d.%d", &d.cc_major, &d.cc_minor) != 2)
    throw std::invalid_argument("device.compute_capability: '" + cc + "' is not of the form MAJOR.MINOR");
  d.sm_count = field<int>(j, "sm_count");
  d.l2_bytes = field<std::int64_t>(j, "l2_bytes");
  d.memory_bytes = field<std::int64_t>(j, "memory_bytes");
  d.shared_memory_per_sm_bytes = j.value("shared_memory_per_sm_bytes", std::int64_t{0});
  d.max_threads_per_sm = j.value("max_threads_per_sm", 0);
  d.sm_clock_khz = field<int>(j, "sm_clock_khz");
  d.memory_clock_khz = field<int>(j, "memory_clock_khz");
  d.memory_bus_width_bits = j.value("memory_bus_width_bits", 0);
  d.ecc_enabled = j.value("ecc_enabled", false);
  d.driver_version = field<int>(j, "driver_version");
  d.runtime_version = field<int>(j, "runtime_version");
  return d;
}

}  // namespace decode_bench
