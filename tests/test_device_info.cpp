// Device info JSON against the results schema, the theoretical bandwidth formula, and the error
// paths of everything that needs a GPU when there is none.
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "harness/ceilings.hpp"
#include "harness/device_info.hpp"
#include "harness/device_query.hpp"
#include "harness/l2_flush.hpp"
#include "harness/results_schema.hpp"

namespace decode_bench {
namespace {

DeviceInfo h100_like() {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.pci_bus_id = "0000:19:00.0";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 52428800;
  d.memory_bytes = 85045231616;
  d.shared_memory_per_sm_bytes = 233472;
  d.max_threads_per_sm = 2048;
  d.sm_clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.memory_bus_width_bits = 5120;
  d.ecc_enabled = true;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  return d;
}

TEST(DeviceInfo, TheoreticalDramBandwidthIsTwiceClockTimesBusWidth) {
  // 2 x 2.619e9 /s x 640 B = 3352.32 GB/s
  EXPECT_DOUBLE_EQ(h100_like().theoretical_dram_gbps(), 2 * 2.619e9 * 640 / 1e9);
  EXPECT_EQ(DeviceInfo{}.theoretical_dram_gbps(), 0);
}

TEST(DeviceInfo, JsonSatisfiesTheSchemaAndRoundTrips) {
  const nlohmann::json j = to_json(h100_like());
  EXPECT_EQ(j["compute_capability"], "9.0");
  EXPECT_EQ(j["memory_bus_width_bits"], 5120);
  EXPECT_EQ(j["ecc_enabled"], true);
  EXPECT_NEAR(j["theoretical_dram_gbps"].get<double>(), 3352.32, 1e-6);
  EXPECT_NO_THROW(validate_results(make_results_document(make_meta({"t"}, "ceilings"), j)));
  EXPECT_EQ(to_json(device_info_from_json(j)), j);
}

TEST(DeviceInfo, BadJsonNamesTheKey) {
  nlohmann::json j = to_json(h100_like());
  j.erase("sm_count");
  try {
    device_info_from_json(j);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("device.sm_count"), std::string::npos) << e.what();
  }
  j = to_json(h100_like());
  j["compute_capability"] = "nine";
  EXPECT_THROW(device_info_from_json(j), std::invalid_argument);
  j = to_json(h100_like());
  j["name"] = 3;
  EXPECT_THROW(device_info_from_json(j), std::invalid_argument);
}

TEST(DeviceInfo, IndexOutOfRangeIsRefusedEverywhere) {
  EXPECT_THROW(query_device_info(999), std::runtime_error);
  EXPECT_THROW(query_device_info(-1), std::runtime_error);
  EXPECT_THROW(L2Flusher(999), std::runtime_error);
  EXPECT_THROW(measure_ceilings(999), std::runtime_error);
}

TEST(DeviceInfo, WithoutAGpuEveryEntryPointGivesTheReason) {
  if (!device_unavailable_reason(0)) GTEST_SKIP() << "a CUDA device is present; this tests its absence";
  for (const auto& attempt : {+[] { query_device_info(0); }, +[] { L2Flusher flusher(0); },
                              +[] { measure_ceilings(0); }}) {
    try {
      attempt();
      ADD_FAILURE() << "succeeded without a GPU";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("no CUDA device found"), std::string::npos) << e.what();
    }
  }
}

// Each cause of "no device" gets its own sentence after the common prefix.
TEST(DeviceQuery, NoDeviceReasonNamesTheCause) {
  DeviceCountProbe none;  // what a machine without the driver library reports
  none.driver_loads = false;
  none.count_error = cudaErrorInsufficientDriver;
  none.count_error_text = cudaGetErrorString(cudaErrorInsufficientDriver);
  none.runtime_version = 13000;
  EXPECT_EQ(no_device_reason(none), "no CUDA device found: no NVIDIA driver found (libcuda.so.1 cannot be loaded)");

  DeviceCountProbe old = none;  // the same error from a driver that is there but too old
  old.driver_loads = true;
  old.driver_version = 12020;
  old.runtime_version = 13010;
  EXPECT_EQ(no_device_reason(old),
            "no CUDA device found: the NVIDIA driver supports CUDA 12.2 but this build's runtime is CUDA 13.1: "
            "update the driver");

  DeviceCountProbe empty;  // a driver that sees no GPU
  empty.count_error = cudaErrorNoDevice;
  empty.count_error_text = cudaGetErrorString(cudaErrorNoDevice);
  empty.driver_version = 13000;
  empty.runtime_version = 13000;
  EXPECT_EQ(no_device_reason(empty), "no CUDA device found: the driver reports 0 devices");
  empty.visible_devices = "";
  EXPECT_EQ(no_device_reason(empty), "no CUDA device found: the driver reports 0 devices (CUDA_VISIBLE_DEVICES='')");
  DeviceCountProbe zero;  // success with a count of 0
  EXPECT_EQ(no_device_reason(zero), "no CUDA device found: the driver reports 0 devices");

  DeviceCountProbe other = empty;  // anything else: the runtime's own words
  other.count_error = cudaErrorSystemNotReady;
  other.count_error_text = "system not yet initialized";
  EXPECT_EQ(no_device_reason(other), "no CUDA device found: system not yet initialized");

  DeviceCountProbe present;
  present.device_count = 2;
  EXPECT_EQ(no_device_reason(present), std::nullopt);
}

// On this machine: the no-driver sentence exactly when libcuda.so.1 cannot be loaded, never else.
TEST(DeviceQuery, NoDriverIsToldApartFromTheOtherCauses) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) dlclose(driver);
  const auto reason = device_unavailable_reason(0);
  if (!driver) {
    EXPECT_EQ(reason, "no CUDA device found: no NVIDIA driver found (libcuda.so.1 cannot be loaded)");
  } else if (reason) {
    EXPECT_EQ(reason->find("no NVIDIA driver found"), std::string::npos) << *reason;
  }
}

}  // namespace
}  // namespace decode_bench
