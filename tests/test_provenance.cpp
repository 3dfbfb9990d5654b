// Provenance in every results document: where the commit came from, the build, and the GPU's
// state (clocks, temperature) from NVML or the CUDA attributes. Fields are optional for older
// files but typed when present.
#include <string>

#include <gtest/gtest.h>

#include "build_info.hpp"
#include "gpu_test_support.hpp"
#include "harness/gpu_state.hpp"
#include "harness/results_schema.hpp"

namespace decode_bench {
namespace {

using nlohmann::json;

json document() {
  json device = {{"name", "Test GPU"},          {"compute_capability", "9.0"}, {"sm_count", 132},
                 {"l2_bytes", 52428800},        {"memory_bytes", 85520809984}, {"sm_clock_khz", 1980000},
                 {"memory_clock_khz", 2619000}, {"driver_version", 13000},     {"runtime_version", 13000}};
  return make_results_document(make_meta({"decode-bench", "sweep"}, "quick"), device);
}

std::string rejection(const json& doc) {
  try {
    validate_results(doc);
  } catch (const SchemaError& e) {
    return e.what();
  }
  return "<accepted>";
}

TEST(Provenance, MetaNamesTheCommitItsSourceAndTheBuild) {
  const json meta = document()["meta"];
  EXPECT_EQ(meta["git"]["sha"], build_info::kGitSha);
  const std::string source = meta["git"]["source"];
  EXPECT_TRUE(source == "git" || source == "cmake_option" || source == "environment" || source == "commit_file" ||
              source == "none")
      << source;
  // A known source names a hex sha; only "none" may say unknown.
  EXPECT_EQ(source == "none", meta["git"]["sha"] == "unknown");
  EXPECT_EQ(meta["build"]["type"], build_info::kBuildType);
  EXPECT_EQ(meta["build"]["cuda_architectures"], meta["cuda_architectures"]);
  EXPECT_FALSE(meta["build"]["cuda_compiler_version"].get<std::string>().empty());
  EXPECT_EQ(rejection(document()), "<accepted>");
}

TEST(Provenance, FieldsAreOptionalButTypedWhenPresent) {
  json doc = document();
  doc["meta"].erase("build");
  doc["meta"]["git"].erase("source");
  EXPECT_EQ(rejection(doc), "<accepted>");  // a file written before these fields existed
  doc = document();
  doc["meta"]["build"].erase("type");
  EXPECT_EQ(rejection(doc), "meta.build.type: missing required field");
  doc = document();
  doc["meta"]["git"]["source"] = 3;
  EXPECT_EQ(rejection(doc), "meta.git.source: must be a string");
  doc = document();
  doc["meta"]["gpu_state"] = {{"start", {{"source", "nvml"}, {"time", "t"}}}};
  EXPECT_EQ(rejection(doc), "meta.gpu_state.end: missing required field");
  doc["meta"]["gpu_state"]["end"] = {{"time", "t"}};
  EXPECT_EQ(rejection(doc), "meta.gpu_state.end.source: missing required field");
  doc["meta"]["gpu_state"]["end"]["source"] = "cuda_attribute";
  EXPECT_EQ(rejection(doc), "<accepted>");
}

TEST(Provenance, GpuStateSnapshotNeverThrowsAndSaysItsSource) {
  json s;
  ASSERT_NO_THROW(s = gpu_state_snapshot(999));  // no such device anywhere
  EXPECT_EQ(s["source"], "none");
  EXPECT_NE(s["error"].get<std::string>().find("device 999"), std::string::npos);
  EXPECT_FALSE(s["time"].get<std::string>().empty());
}

TEST(ProvenanceGpu, GpuStateHasCurrentClocksAndTemperatureFromNvml) {
  DB_REQUIRE_GPU();
  const json s = gpu_state_snapshot(0);
  ASSERT_TRUE(s["source"] == "nvml" || s["source"] == "cuda_attribute") << s.dump();
  EXPECT_GT(s["sm_clock_mhz"].get<double>(), 0);
  EXPECT_GT(s["memory_clock_mhz"].get<double>(), 0);
  if (s["source"] != "nvml") GTEST_SKIP() << "NVML not loadable here: peak clocks only, no temperature";
  EXPECT_GT(s["temperature_c"].get<double>(), 0);
  EXPECT_LT(s["temperature_c"].get<double>(), 120);
  EXPECT_FALSE(s["driver_version"].get<std::string>().empty());
}

TEST(GpuState, SlowdownReasonNamesTheSlowdownBitsOnly) {
  EXPECT_EQ(gpu_slowdown_reason(json{{"throttle_reasons", 0x88ull}}),
            "hardware slowdown, hardware power brake (NVML throttle reasons 0x88)");
  EXPECT_EQ(gpu_slowdown_reason(json{{"throttle_reasons", 0x24ull}}),
            "software thermal slowdown (NVML throttle reasons 0x24)");
  // Idle, application clocks, power cap, sync boost: a healthy GPU.
  EXPECT_EQ(gpu_slowdown_reason(json{{"throttle_reasons", 0x1ull | 0x2ull | 0x4ull | 0x10ull}}), "");
  EXPECT_EQ(gpu_slowdown_reason(json{{"source", "cuda_attribute"}}), "");  // no mask without NVML
  EXPECT_EQ(gpu_slowdown_reason(json{{"throttle_reasons", "0x88"}}), "");  // not a number: not guessed at
}

}  // namespace
}  // namespace decode_bench
