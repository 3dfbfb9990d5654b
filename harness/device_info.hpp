#pragma once
// What the GPU is: the `device` object of every results document (docs/results.md), with the
// schema-required fields plus clocks, bus width, ECC and the theoretical DRAM bandwidth, so a
// measured ceiling can be read against the datasheet figure beside it.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace decode_bench {

struct DeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t shared_memory_per_sm_bytes = 0;
  int max_threads_per_sm = 0;
  int sm_clock_khz = 0;          // peak SM clock the driver reports (not the clock under load)
  int memory_clock_khz = 0;      // peak memory clock
  int memory_bus_width_bits = 0;
  bool ecc_enabled = false;
  int driver_version = 0;        // e.g. 13000 for 13.0
  int runtime_version = 0;

  // 2 (double data rate) x memory clock x bus width, in decimal GB/s.
  double theoretical_dram_gbps() const;
};

// Throws std::runtime_error with the reason (no GPU, index out of range, compute capability
// below 8.0) or CudaError when a query fails.
DeviceInfo query_device_info(int device);

// Required fields (name, compute_capability "9.0", sm_count, l2_bytes, memory_bytes,
// sm_clock_khz, memory_clock_khz, driver_version, runtime_version) plus the extras.
nlohmann::json to_json(const DeviceInfo& info);
// Inverse of to_json; throws std::invalid_argument naming a missing or mistyped key.
DeviceInfo device_info_from_json(const nlohmann::json& j);

}  // namespace decode_bench
