// Device info JSON against the results schema, the theoretical bandwidth formula, and the error
// paths of everything that needs a GPU when there is none.
#include <stdexcept>
#include <string>

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

}  // namespace
}  // namespace decode_bench
