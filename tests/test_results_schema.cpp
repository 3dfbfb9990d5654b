// Results documents: round trip through the atomic writer, and the reader names what is wrong.
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>

#include "harness/json_file.hpp"
#include "harness/results_schema.hpp"

namespace decode_bench {
namespace {

using nlohmann::json;

json example_document() {
  json device = {{"name", "Test GPU"},      {"compute_capability", "9.0"}, {"sm_count", 132},
                 {"l2_bytes", 52428800},    {"memory_bytes", 85520809984}, {"sm_clock_khz", 1980000},
                 {"memory_clock_khz", 2619000}, {"driver_version", 13000}, {"runtime_version", 13000}};
  json doc = make_results_document(make_meta({"decode-bench", "sweep"}, "quick"), device);
  doc["ceilings"]["dram_read"] = {{"value", 3104.0}, {"unit", "GB/s"}};
  doc["points"].push_back({{"id", "flash_decode/fp16/T=4096"},
                           {"parameters", {{"kernel", "flash_decode"}, {"T", 4096}}},
                           {"status", "ok"},
                           {"verification", {{"passed", true}, {"max_abs_error", 1e-4}, {"max_rel_error", 2e-4},
                                             {"tolerance", 1e-3}}},
                           {"timing", {{"median_us", 12.5}, {"repetitions", 10}}},
                           {"model", {{"bytes", 2.1e6}, {"flops", 1.0e6}}}});
  doc["points"].push_back({{"id", "baseline/fp16/T=huge"}, {"parameters", json::object()}, {"status", "skipped"},
                           {"reason", "out of device memory"}});
  return doc;
}

std::string rejection_path(const json& doc) {
  try {
    validate_results(doc);
  } catch (const SchemaError& e) {
    return e.path();
  }
  return "<accepted>";
}

class TempDir : public ::testing::Test {
 protected:
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("decode_bench_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                               "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
};

using ResultsFile = TempDir;

TEST_F(ResultsFile, WriteThenReadRoundTrips) {
  const json doc = example_document();
  write_results(dir / "r.json", doc);
  EXPECT_EQ(read_results(dir / "r.json"), doc);
  // Atomic: no temporary file is left beside the result.
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(ResultsFile, ReaderNamesTheFileAndField) {
  json doc = example_document();
  doc["device"].erase("sm_count");
  write_json_atomic(dir / "bad.json", doc);
  try {
    read_results(dir / "bad.json");
    FAIL() << "accepted a document without device.sm_count";
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.path(), "device.sm_count");
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
  }
  EXPECT_THROW(read_results(dir / "missing.json"), std::runtime_error);
}

TEST(ResultsSchema, MissingFieldsAreNamed) {
  const json good = example_document();
  EXPECT_EQ(rejection_path(good), "<accepted>");
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d.erase("points"); }, "points"},
      {[](json& d) { d["meta"]["git"].erase("dirty"); }, "meta.git.dirty"},
      {[](json& d) { d["meta"].erase("argv"); }, "meta.argv"},
      {[](json& d) { d["points"][0]["timing"].erase("median_us"); }, "points[0].timing.median_us"},
      {[](json& d) { d["points"][1].erase("reason"); }, "points[1].reason"},
      {[](json& d) { d["points"][0]["status"] = "fast"; }, "points[0].status"},
      {[](json& d) { d["device"]["sm_count"] = "many"; }, "device.sm_count"},
      {[](json& d) { d["points"][0]["verification"]["passed"] = false; }, "points[0].verification.passed"},
  };
  for (const auto& [mutate, path] : cases) {
    json doc = good;
    mutate(doc);
    EXPECT_EQ(rejection_path(doc), path);
  }
}

TEST(ResultsSchema, FailedVerificationCarriesNoTiming) {
  json doc = example_document();
  doc["points"][0]["status"] = "verification_failed";
  doc["points"][0]["verification"]["passed"] = false;
  doc["points"][0]["reason"] = "max_rel_error 0.5 > tolerance 0.001";
  EXPECT_EQ(rejection_path(doc), "points[0].timing");
  doc["points"][0].erase("timing");
  EXPECT_EQ(rejection_path(doc), "<accepted>");
}

// What computed a point (harness/backend.hpp): optional, but name and version typed when present.
TEST(ResultsSchema, ABackendBlockNamesItsBackendAndVersion) {
  json doc = example_document();
  doc["points"][0]["backend"] = {{"name", "decode-bench"}, {"version", "0.1.0+abc"}, {"plan_us", 12.5}};
  EXPECT_EQ(rejection_path(doc), "<accepted>");
  doc["points"][0]["backend"].erase("version");
  EXPECT_EQ(rejection_path(doc), "points[0].backend.version");
  doc["points"][0]["backend"] = {{"name", 7}, {"version", "1"}};
  EXPECT_EQ(rejection_path(doc), "points[0].backend.name");
  doc["points"][0]["backend"] = "decode-bench";
  EXPECT_EQ(rejection_path(doc), "points[0].backend.name");
}

TEST(ResultsSchema, NewerMajorVersionIsRejected) {
  json doc = example_document();
  doc["schema_version"] = "2.0";
  EXPECT_EQ(rejection_path(doc), "schema_version");
  doc["schema_version"] = "1.7";  // a newer minor of our major is fine
  EXPECT_EQ(rejection_path(doc), "<accepted>");
  doc["schema_version"] = "one";
  EXPECT_EQ(rejection_path(doc), "schema_version");
}

// A capacity count (kernel = capacity, schema 1.1) is "ok" with a `capacity` object and no
// verification, timing or model; the count's fields are required instead.
json with_capacity_point() {
  json doc = example_document();
  doc["points"].push_back({{"id", "capacity/layout=paged"},
                           {"parameters", {{"kernel", "capacity"}, {"layout", "paged"}, {"max_seq_len", 512}}},
                           {"status", "ok"},
                           {"capacity", {{"sequences", 8192}, {"bytes_reserved", 4294967296}, {"bytes_used", 4294967296},
                                         {"fragmentation", 0.0}, {"backend", "accounting"}}}});
  return doc;
}

TEST(ResultsSchema, CapacityPointsCarryACountInsteadOfTiming) {
  EXPECT_EQ(rejection_path(with_capacity_point()), "<accepted>");
  EXPECT_EQ(results_schema_version(), "1.2");
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& d) { d["points"][2]["capacity"].erase("sequences"); }, "points[2].capacity.sequences"},
      {[](json& d) { d["points"][2]["capacity"]["bytes_used"] = "all"; }, "points[2].capacity.bytes_used"},
      {[](json& d) { d["points"][2]["capacity"] = 8192; }, "points[2].capacity"},
      {[](json& d) { d["points"][2]["timing"] = {{"median_us", 1.0}, {"repetitions", 1}}; }, "points[2].timing"},
      // Without the object it is an ordinary ok point, and those need verification.
      {[](json& d) { d["points"][2].erase("capacity"); }, "points[2].verification"},
  };
  for (const auto& [mutate, path] : cases) {
    json doc = with_capacity_point();
    mutate(doc);
    EXPECT_EQ(rejection_path(doc), path);
  }
}

// Every field that docs/results.schema.json lists as required is also enforced by the reader.
void check_schema_required(const json& schema, const json& instance, const std::string& path) {
  if (!schema.contains("required")) return;
  for (const auto& key : schema["required"]) {
    const std::string k = key.get<std::string>();
    json copy = example_document();
    // Walk to the same object in the copy and remove the key.
    json* target = &copy;
    std::string walked;
    for (std::size_t pos = 0; pos < path.size();) {
      const auto next = path.find('.', pos);
      target = &(*target)[path.substr(pos, next - pos)];
      pos = next == std::string::npos ? path.size() : next + 1;
    }
    target->erase(k);
    const std::string full = path.empty() ? k : path + "." + k;
    EXPECT_EQ(rejection_path(copy), full) << "schema requires " << full << " but the reader does not";
    if (schema.contains("properties") && schema["properties"].contains(k) && instance.contains(k))
      check_schema_required(schema["properties"][k], instance[k], full);
  }
}

TEST(ResultsSchema, JsonSchemaFileAgreesWithReader) {
  const json schema = read_json_file(std::filesystem::path(DECODE_BENCH_SOURCE_DIR) / "docs/results.schema.json");
  check_schema_required(schema, example_document(), "");
  // Point-level requirements (array items) checked on points[0], an ok point.
  const json& item = schema["properties"]["points"]["items"];
  for (const auto& key : item["required"]) {
    json doc = example_document();
    doc["points"][0].erase(key.get<std::string>());
    EXPECT_EQ(rejection_path(doc), "points[0]." + key.get<std::string>());
  }
  // The capacity object's required fields, on the capacity point of with_capacity_point().
  const json& capacity_required = item["properties"]["capacity"]["required"];
  EXPECT_EQ(capacity_required.size(), 4u);
  for (const auto& key : capacity_required) {
    json doc = with_capacity_point();
    doc["points"][2]["capacity"].erase(key.get<std::string>());
    EXPECT_EQ(rejection_path(doc), "points[2].capacity." + key.get<std::string>());
  }
}

}  // namespace
}  // namespace decode_bench
