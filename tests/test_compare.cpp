// `decode-bench compare`: matching by id, ratio table, regression detection in both directions,
// exit codes 0 / 1 / 2 through the real executable.
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "harness/json_file.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/compare/compare_results.hpp"

namespace {

using decode_bench::compare::CompareOptions;
using decode_bench::compare::compare_results;
using nlohmann::json;

const std::string kFixture = std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/synthetic_paper_results.json";

// The synthetic fixture with every ok point's achieved.gbps and median time scaled by `speed`
// for ids containing `which` (all when empty).
json scaled(double speed, const std::string& which = "") {
  json doc = decode_bench::read_results(kFixture);
  for (auto& p : doc["points"]) {
    if (p["status"] != "ok" || p["id"].get<std::string>().find(which) == std::string::npos) continue;
    p["achieved"]["gbps"] = p["achieved"]["gbps"].get<double>() * speed;
    p["timing"]["median_us"] = p["timing"]["median_us"].get<double>() / speed;
  }
  return doc;
}

TEST(Compare, IdenticalFilesHaveNoRegression) {
  const json a = scaled(1.0);
  const auto report = compare_results(a, a, CompareOptions{});
  EXPECT_FALSE(report.any_regression());
  EXPECT_EQ(report.common.size(), a["points"].size() - 1);  // the skipped point is not comparable
  EXPECT_EQ(report.not_comparable.size(), 1u);
  for (const auto& p : report.common) EXPECT_DOUBLE_EQ(p.ratio, 1.0);
}

TEST(Compare, SlowdownBeyondThresholdIsARegressionOnlyWhereItHappened) {
  const auto report = compare_results(scaled(1.0), scaled(0.9, "fig6_page_size"), CompareOptions{});
  ASSERT_TRUE(report.any_regression());
  for (const auto& p : report.common) {
    EXPECT_EQ(p.regressed, p.id.find("fig6_page_size") != std::string::npos) << p.id;
    if (p.regressed) {
      EXPECT_NEAR(p.ratio, 0.9, 1e-12);
    }
  }
  // Within a 15% threshold the same slowdown passes; a speed-up never regresses.
  EXPECT_FALSE(compare_results(scaled(1.0), scaled(0.9), {"achieved.gbps", 0.15, std::nullopt}).any_regression());
  EXPECT_FALSE(compare_results(scaled(1.0), scaled(2.0), CompareOptions{}).any_regression());
}

TEST(Compare, TimeMetricsAreLowerIsBetter) {
  const CompareOptions by_time{"timing.median_us", 0.05, std::nullopt};
  EXPECT_TRUE(compare_results(scaled(1.0), scaled(0.9), by_time).any_regression());   // slower: more us
  EXPECT_FALSE(compare_results(scaled(1.0), scaled(1.2), by_time).any_regression());  // faster
  EXPECT_TRUE(decode_bench::compare::metric_lower_is_better("timing.median_us"));
  EXPECT_FALSE(decode_bench::compare::metric_lower_is_better("achieved.gbps"));
}

TEST(Compare, UnmatchedIdsAreListedNotCompared) {
  json b = scaled(1.0);
  b["points"].erase(b["points"].begin());
  b["points"].push_back(b["points"][0]);
  b["points"].back()["id"] = "new-point";
  const auto report = compare_results(scaled(1.0), b, CompareOptions{});
  EXPECT_EQ(report.only_in_a.size(), 1u);
  ASSERT_EQ(report.only_in_b.size(), 1u);
  EXPECT_EQ(report.only_in_b[0], "new-point");
}

TEST(Compare, BadOptionsAreRejected) {
  const json a = scaled(1.0);
  EXPECT_THROW(compare_results(a, a, {"achieved.gbps", -0.1, std::nullopt}), std::invalid_argument);
  EXPECT_THROW(compare_results(a, a, {"achieved.", 0.05, std::nullopt}), std::invalid_argument);
}

struct CliResult {
  int exit_code;
  std::string output;
};

CliResult run_cli(const std::string& args) {
  FILE* pipe = popen((std::string(DECODE_BENCH_EXE) + " " + args + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf{};
  while (std::size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(Compare, CommandExitCodes) {
  const auto dir = std::filesystem::temp_directory_path() / ("db_compare_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto base = (dir / "a.json").string(), slow = (dir / "b.json").string(), bad = (dir / "bad.json").string();
  decode_bench::write_json_atomic(base, scaled(1.0));
  decode_bench::write_json_atomic(slow, scaled(0.8, "fig1_blocks"));
  decode_bench::write_json_atomic(bad, json{{"schema_version", "1.0"}, {"points", json::array()}});

  auto r = run_cli("compare " + base + " " + base);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_cli("compare " + base + " " + slow);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("REGRESSION"), std::string::npos) << r.output;
  r = run_cli("compare " + base + " " + slow + " --threshold 0.25");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = run_cli("compare " + base + " " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("meta: missing required field"), std::string::npos) << r.output;
  r = run_cli("compare " + base + " " + (dir / "absent.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
