// `decode-bench compare`: matching by id, ratio table, regression detection in both directions,
// exit codes 0 / 1 / 2 through the real executable.
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <sys/wait.h>

#include "harness/json_file.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/compare/ceiling_fraction.hpp"
#include "sweeps/compare/compare_format.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/compare/compare_results.hpp"

namespace {

using decode_bench::compare::CompareOptions;
using decode_bench::compare::compare_results;
using decode_bench::compare::Normalize;
using decode_bench::compare::Verdict;
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

TEST(Compare, TimedLaunchIdDropsOnlyTheAxesBesideTheTiming) {
  using decode_bench::sweeps::timed_launch_id;
  EXPECT_EQ(timed_launch_id("exp/T=4096/counters=false"), "exp/T=4096");
  EXPECT_EQ(timed_launch_id("exp/counters=true/page_size=16"), "exp/page_size=16");
  EXPECT_EQ(timed_launch_id("exp/T=4096/timing=hot/end_to_end=true"), "exp/T=4096/timing=hot/end_to_end=true");
  EXPECT_EQ(timed_launch_id("counters=false/T=1"), "counters=false/T=1");  // the experiment's name stays
  EXPECT_EQ(timed_launch_id("exp/no_such_axis=1"), "exp/no_such_axis=1");
  EXPECT_EQ(timed_launch_id("exp"), "exp");
}

// A run with --no-counters (its ids end in counters=false) against one with counters: the same
// timed launches, so every point is compared, and the report says how many ids differed.
TEST(Compare, IdsThatDifferOnlyInCountersAreTheSamePoint) {
  json b = scaled(0.9, "fig6_page_size");
  for (auto& p : b["points"]) p["id"] = p["id"].get<std::string>() + "/counters=false";
  const json a = scaled(1.0);
  const auto report = compare_results(a, b, CompareOptions{});
  EXPECT_EQ(report.common.size(), a["points"].size() - 1);  // the skipped point is not comparable
  EXPECT_EQ(report.matched_beside_timing, a["points"].size());
  EXPECT_TRUE(report.only_in_a.empty());
  EXPECT_TRUE(report.only_in_b.empty());
  for (const auto& p : report.common) {
    EXPECT_EQ(p.id.find("counters"), std::string::npos) << p.id;  // A's id
    EXPECT_NEAR(p.ratio, p.id.find("fig6_page_size") != std::string::npos ? 0.9 : 1.0, 1e-12) << p.id;
  }
  EXPECT_EQ(compare_results(a, a, CompareOptions{}).matched_beside_timing, 0u);
  const std::string md = decode_bench::compare::format_report(report, decode_bench::compare::Format::markdown);
  EXPECT_NE(md.find(std::to_string(a["points"].size()) + " point(s) matched by their timed launch"), std::string::npos);

  // Any other axis still tells points apart.
  json c = scaled(1.0);
  c["points"][0]["id"] = c["points"][0]["id"].get<std::string>() + "/timing=hot";
  const auto other = compare_results(a, c, CompareOptions{});
  EXPECT_EQ(other.only_in_a.size(), 1u);
  EXPECT_EQ(other.only_in_b.size(), 1u);
}

TEST(Compare, TwoPointsOfOneTimedLaunchInADocumentAreRefused) {
  json b = scaled(1.0);
  json twin = b["points"][0];
  const std::string id = twin["id"].get<std::string>();
  twin["id"] = id + "/counters=false";
  b["points"].push_back(twin);
  try {
    compare_results(scaled(1.0), b, CompareOptions{});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("B has two points of one timed launch"), std::string::npos) << what;
    EXPECT_NE(what.find("'" + id + "'"), std::string::npos) << what;
    EXPECT_NE(what.find("'" + id + "/counters=false'"), std::string::npos) << what;
  }
  EXPECT_THROW(compare_results(b, scaled(1.0), CompareOptions{}), std::invalid_argument);
  // The same id twice is named as such.
  json twice = scaled(1.0);
  twice["points"].push_back(twice["points"][0]);
  try {
    compare_results(twice, scaled(1.0), CompareOptions{});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A has the point '" + id + "' twice"), std::string::npos) << e.what();
  }
}

TEST(Compare, BadOptionsAreRejected) {
  const json a = scaled(1.0);
  EXPECT_THROW(compare_results(a, a, {"achieved.gbps", -0.1, std::nullopt}), std::invalid_argument);
  EXPECT_THROW(compare_results(a, a, {"achieved.", 0.05, std::nullopt}), std::invalid_argument);
}

// --- samples, intervals and verdicts (tests/data/gate_*.json: 10 samples per point, 1% noise) ---

json gate(const std::string& name) {
  return decode_bench::read_results(std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/" + name + ".json");
}

TEST(CompareSamples, NoiseLevelChangeIsNoRegressionAndEveryPointHasAnInterval) {
  const auto report = compare_results(gate("gate_baseline"), gate("gate_noise"), CompareOptions{});
  EXPECT_FALSE(report.any_regression());
  ASSERT_EQ(report.common.size(), 6u);
  for (const auto& p : report.common) {
    ASSERT_TRUE(p.lo && p.hi) << p.id;
    EXPECT_LE(*p.lo, p.ratio);
    EXPECT_GE(*p.hi, p.ratio);
    EXPECT_EQ(p.samples_a, 10);
    EXPECT_NE(p.verdict, Verdict::regression) << p.id;
  }
}

TEST(CompareSamples, PlantedTenPercentSlowdownIsCalledWhereItWasPlanted) {
  for (const std::string metric : {"achieved.gbps", "timing.median_us"}) {
    const auto report = compare_results(gate("gate_baseline"), gate("gate_regressed"), {metric, 0.05, std::nullopt});
    for (const auto& p : report.common) {
      const bool planted = p.experiment == "kernels";
      EXPECT_EQ(p.regressed, planted) << metric << " " << p.id;
      // The interval, in the metric's own direction, lies wholly beyond 1.
      if (planted) {
        EXPECT_TRUE(metric == "timing.median_us" ? *p.lo > 1 : *p.hi < 1) << p.id;
      }
    }
  }
}

// One point with the given samples on each side.
json one_point_doc(const std::vector<double>& samples, double ceiling_gbps = 2000) {
  json doc = gate("gate_baseline");
  json p = doc["points"][0];
  doc["points"] = json::array({p});
  const double median = decode_bench::median_of(samples);
  doc["points"][0]["timing"]["samples_us"] = samples;
  doc["points"][0]["timing"]["median_us"] = median;
  doc["points"][0]["achieved"]["gbps"] = p["model"]["bytes"].get<double>() / (median * 1e3);
  doc["ceilings"]["dram_read"]["value"] = ceiling_gbps;
  return doc;
}

TEST(CompareSamples, WideSamplesAreNoisyNotARegression) {
  const json a = one_point_doc({10, 7, 14, 9, 12, 8, 13});
  const json b = one_point_doc({11, 8, 15, 10, 13, 9, 14});  // ~8% slower, but spread of +-30%
  const auto report = compare_results(a, b, CompareOptions{});
  ASSERT_EQ(report.common.size(), 1u);
  EXPECT_EQ(report.common[0].verdict, Verdict::noisy);
  EXPECT_FALSE(report.any_regression());
  EXPECT_EQ(report.overall.noisy, 1u);
  // Without samples the same medians would have been called a regression by the threshold alone.
  json a0 = a, b0 = b;
  a0["points"][0]["timing"].erase("samples_us");
  b0["points"][0]["timing"].erase("samples_us");
  EXPECT_TRUE(compare_results(a0, b0, CompareOptions{}).any_regression());
}

TEST(CompareSamples, SignificantButBelowThresholdIsUnchanged) {
  const json a = one_point_doc({10.0, 10.01, 9.99, 10.0, 10.02});
  const json b = one_point_doc({10.2, 10.21, 10.19, 10.2, 10.22});  // 2% slower, tight
  const auto report = compare_results(a, b, CompareOptions{});
  ASSERT_EQ(report.common.size(), 1u);
  EXPECT_LT(*report.common[0].hi, 1.0);  // significant
  EXPECT_EQ(report.common[0].verdict, Verdict::unchanged);
  const auto strict = compare_results(a, b, {"achieved.gbps", 0.01, std::nullopt});
  EXPECT_EQ(strict.common[0].verdict, Verdict::regression);
}

// Whatever the metric, the report carries every ceiling both runs measured (dram_read first, B / A),
// and leaves out one that a side lacks; the per-point ceiling columns stay with --normalize.
TEST(CompareCeilings, EveryCeilingBothRunsMeasuredIsReportedWhateverTheMetric) {
  json a = one_point_doc({10.0, 10.01, 9.99}, 2000), b = one_point_doc({10.0, 10.01, 9.99}, 2200);
  a["ceilings"]["bf16_tensor_wgmma"] = {{"value", 900.0}, {"unit", "TFLOP/s"}};
  b["ceilings"].erase("l2_read");
  const auto report = compare_results(a, b, {"timing.median_us", 0.01, std::nullopt});
  ASSERT_EQ(report.ceilings.size(), 6u);  // the fixture's 7 less l2_read (B lacks it); not the wgmma roof (A only)
  EXPECT_EQ(report.ceilings[0].name, "dram_read");
  EXPECT_EQ(report.ceilings[0].unit, "GB/s");
  EXPECT_DOUBLE_EQ(report.ceilings[0].a, 2000.0);
  EXPECT_DOUBLE_EQ(report.ceilings[0].b, 2200.0);
  EXPECT_NEAR(report.ceilings[0].ratio, 1.1, 1e-12);
  for (const auto& c : report.ceilings) {
    EXPECT_NE(c.name, "l2_read");
    EXPECT_NE(c.name, "bf16_tensor_wgmma");
    EXPECT_NEAR(c.ratio, c.name == "dram_read" ? 1.1 : 1.0, 1e-12) << c.name;
  }
  namespace cmp = decode_bench::compare;
  const std::string md = cmp::format_report(report, cmp::Format::markdown);
  EXPECT_NE(md.find("| device ceiling | A | B | B / A |"), std::string::npos) << md;
  EXPECT_NE(md.find("| dram_read (GB/s) | 2000 | 2200 | 1.100 |"), std::string::npos) << md;
  EXPECT_EQ(md.find("devices B/A"), std::string::npos) << md;  // no per-point ceiling columns
  EXPECT_NE(cmp::format_report(report, cmp::Format::text).find("device ceilings B / A: dram_read 2200/2000 GB/s = 1.100"),
            std::string::npos);
  EXPECT_EQ(cmp::report_to_json(report)["ceiling_ratios"].size(), 6u);
  // A side that measured no ceiling: none reported, the points still compared.
  json bare = b;
  bare["ceilings"] = json::object();
  const auto without = compare_results(a, bare, {"timing.median_us", 0.01, std::nullopt});
  EXPECT_TRUE(without.ceilings.empty());
  EXPECT_EQ(without.common.size(), 1u);
}

TEST(CompareNormalize, SameKernelQualityOnASlowerGpuComparesAsOne) {
  const json a = gate("gate_baseline"), b = gate("gate_other_gpu");
  EXPECT_TRUE(compare_results(a, b, CompareOptions{}).any_regression());  // 0.6x in absolute terms
  CompareOptions by_ceiling;
  by_ceiling.normalize = Normalize::ceilings;
  const auto report = compare_results(a, b, by_ceiling);
  EXPECT_FALSE(report.any_regression());
  EXPECT_EQ(report.metric, "fraction_of_ceiling");
  EXPECT_NEAR(report.overall.geomean_ratio, 1.0, 0.03);
  ASSERT_FALSE(report.ceilings.empty());
  EXPECT_EQ(report.ceilings[0].name, "dram_read");
  EXPECT_NEAR(report.ceilings[0].ratio, 0.6, 1e-12);
  for (const auto& p : report.common) {
    EXPECT_EQ(p.bound, "dram_read") << p.id;  // decode is memory-bound
    ASSERT_TRUE(p.bound_ratio);
    EXPECT_NEAR(*p.bound_ratio, 0.6, 1e-12);
  }
}

TEST(CompareNormalize, BoundFollowsIntensityAgainstTheRidgeAndTheDtype) {
  json doc = gate("gate_baseline");
  json p = doc["points"][0];
  p["model"] = {{"bytes", 1e6}, {"flops", 1e9}};  // 1000 FLOP/B: beyond any ridge here
  p["timing"]["median_us"] = 100.0;
  p["achieved"] = {{"gbps", 10.0}, {"tflops", 10.0}};
  p["parameters"]["dtype"] = "fp16";
  auto f = decode_bench::compare::ceiling_fraction(doc, p);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->bound, "fp16_fma");
  EXPECT_DOUBLE_EQ(f->value, 10.0 / 100.0);  // 10 TFLOP/s of the 100 TFLOP/s FP16 roof
  p["parameters"]["dtype"] = "fp32";
  EXPECT_EQ(decode_bench::compare::ceiling_fraction(doc, p)->bound, "fp32_fma");
  p["model"] = {{"bytes", 1e6}, {"flops", 1e6}};  // 1 FLOP/B: memory-bound
  f = decode_bench::compare::ceiling_fraction(doc, p);
  EXPECT_EQ(f->bound, "dram_read");
  EXPECT_DOUBLE_EQ(f->value, 10.0 / 2000.0);
  doc["ceilings"].erase("dram_read");
  EXPECT_FALSE(decode_bench::compare::ceiling_fraction(doc, p));
  CompareOptions by_ceiling;
  by_ceiling.normalize = Normalize::ceilings;
  EXPECT_THROW(compare_results(doc, gate("gate_baseline"), by_ceiling), std::invalid_argument);
}

TEST(CompareSummary, GeometricMeanAndWorstPointPerExperiment) {
  const auto report = compare_results(gate("gate_baseline"), gate("gate_regressed"), CompareOptions{});
  ASSERT_EQ(report.experiments.size(), 3u);
  double log_sum = 0;
  const decode_bench::compare::PointComparison* worst = nullptr;
  for (const auto& p : report.common) {
    if (p.experiment != "kernels") continue;
    log_sum += std::log(p.ratio);
    if (!worst || p.ratio < worst->ratio) worst = &p;
  }
  const auto& k = report.experiments[0];
  EXPECT_EQ(k.experiment, "kernels");
  EXPECT_EQ(k.count, 3u);
  EXPECT_EQ(k.regressions, 3u);
  EXPECT_NEAR(k.geomean_ratio, std::exp(log_sum / 3), 1e-12);
  EXPECT_EQ(k.worst_id, worst->id);
  EXPECT_EQ(report.overall.count, 6u);
  EXPECT_EQ(report.overall.regressions, 3u);
}

TEST(CompareEnvironment, DifferentTuningVariablesAreListed) {
  json a = gate("gate_baseline"), b = gate("gate_regressed");
  a["meta"]["environment"] = {{"DECODE_BENCH_PYTHON", "/usr/bin/python3"}};
  b["meta"]["environment"] = {{"DECODE_BENCH_PYTHON", "/usr/bin/python3"}, {"DECODE_BENCH_FD_SPLIT_SCALE", "0.25"}};
  const auto report = compare_results(a, b, CompareOptions{});
  ASSERT_EQ(report.environment_differences.size(), 1u);
  EXPECT_EQ(report.environment_differences[0], "DECODE_BENCH_FD_SPLIT_SCALE: A=(unset) B=0.25");
  const std::string md = decode_bench::compare::format_report(report, decode_bench::compare::Format::markdown);
  EXPECT_NE(md.find("environment differs: `DECODE_BENCH_FD_SPLIT_SCALE"), std::string::npos) << md;
}

TEST(CompareFormat, MarkdownAndJsonCarryTheVerdicts) {
  using decode_bench::compare::Format;
  const auto report = compare_results(gate("gate_baseline"), gate("gate_regressed"), CompareOptions{});
  const std::string md = decode_bench::compare::format_report(report, Format::markdown);
  EXPECT_NE(md.find("## decode-bench compare: 3 regression(s)"), std::string::npos) << md;
  EXPECT_NE(md.find("| **overall** | 6 |"), std::string::npos) << md;
  EXPECT_NE(md.find("**REGRESSION**"), std::string::npos);
  const json j = json::parse(decode_bench::compare::format_report(report, Format::json));
  EXPECT_TRUE(j["regression"].get<bool>());
  EXPECT_EQ(j["points"].size(), 6u);
  EXPECT_EQ(j["points"][0]["interval"].size(), 2u);
  EXPECT_EQ(j["experiments"]["kernels"]["regressions"], 3);
  EXPECT_THROW(decode_bench::compare::parse_format("html"), std::invalid_argument);
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
  r = run_cli("compare " + base + " " + base + " --format yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--format 'yaml'"), std::string::npos) << r.output;
  // A noisy point passes, unless --fail-on-noisy.
  const json noisy_a = one_point_doc({10, 7, 14, 9, 12, 8, 13}), noisy_b = one_point_doc({11, 8, 15, 10, 13, 9, 14});
  const auto na = (dir / "na.json").string(), nb = (dir / "nb.json").string();
  decode_bench::write_json_atomic(na, noisy_a);
  decode_bench::write_json_atomic(nb, noisy_b);
  r = run_cli("compare " + na + " " + nb);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("NOISY (cannot judge)"), std::string::npos) << r.output;
  r = run_cli("compare " + na + " " + nb + " --fail-on-noisy");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  r = run_cli("compare " + base + " " + base + " --normalize roofs");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // Different presets: the common ids are compared, the rest listed, exit 0.
  const std::string capacity = std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/synthetic_capacity_results.json";
  const std::string gate_base = std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/gate_baseline.json";
  r = run_cli("compare " + gate_base + " " + base + " --format markdown");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // no common point at all
  r = run_cli("compare " + base + " " + capacity);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  // Several runs a side, joined by commas.
  r = run_cli("compare " + base + "," + base + " " + slow + "," + slow);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("A: 2 runs on "), std::string::npos) << r.output;
  r = run_cli("compare " + base + ",," + base + " " + base);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("an empty file name"), std::string::npos) << r.output;
  r = run_cli("compare " + base + "," + base + " --backends decode-bench,flashinfer");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("names several"), std::string::npos) << r.output;
  std::filesystem::remove_all(dir);
}

// --- several runs a side (compare_runs) ---

// The same point's samples around `center` (0.1% apart) in a one-point document.
json tight_run(double center) { return one_point_doc({center, center * 1.001, center * 0.999, center, center * 1.0005}); }

TEST(CompareRuns, AnOffsetBetweenRunsOfOneBuildIsNoRegression) {
  // Two runs of the same build, 6% apart (as buffers placed elsewhere can make them): one run a
  // side calls the offset a regression; both runs a side see it is there on each side.
  const json fast = tight_run(10.0), slow = tight_run(10.6);
  EXPECT_TRUE(compare_results(fast, slow, CompareOptions{}).any_regression());
  const std::vector<json> a = {fast, slow}, b = {slow, fast};
  const auto report = decode_bench::compare::compare_runs(a, b, CompareOptions{});
  ASSERT_EQ(report.common.size(), 1u);
  const auto& p = report.common[0];
  EXPECT_NEAR(p.ratio, 1.0, 1e-12);  // the median of each side's run values
  EXPECT_NE(p.verdict, Verdict::regression);
  ASSERT_TRUE(p.lo && p.hi);
  EXPECT_LT(*p.lo, 0.96);  // the offset shows in the interval
  EXPECT_GT(*p.hi, 1.04);
  EXPECT_EQ(p.samples_a, 10);
  EXPECT_EQ(report.runs_a, 2u);
  EXPECT_EQ(report.runs_b, 2u);
}

TEST(CompareRuns, APlantedSlowdownInEveryRunIsCalledWhereItWasPlanted) {
  const std::vector<json> a = {gate("gate_baseline"), gate("gate_noise")};
  const std::vector<json> b = {gate("gate_regressed"), gate("gate_regressed")};
  const auto report = decode_bench::compare::compare_runs(a, b, {"timing.median_us", 0.05, std::nullopt});
  ASSERT_EQ(report.common.size(), 6u);
  for (const auto& p : report.common) EXPECT_EQ(p.regressed, p.experiment == "kernels") << p.id;
}

TEST(CompareRuns, APointMissingOrNotOkInOneRunIsNotCompared) {
  json second = gate("gate_baseline");
  const std::string gone = second["points"][0]["id"].get<std::string>();
  const std::string failed = second["points"][1]["id"].get<std::string>();
  second["points"].erase(second["points"].begin());
  second["points"][0]["status"] = "verification_failed";
  const std::vector<json> a = {gate("gate_baseline"), second}, b = {gate("gate_noise")};
  const auto report = decode_bench::compare::compare_runs(a, b, CompareOptions{});
  EXPECT_EQ(report.common.size(), 4u);
  EXPECT_EQ(report.not_comparable, (std::vector<std::string>{gone, failed}));
}

TEST(CompareRuns, RunsOfDifferentBuildsOnASideAreRefused) {
  const json base = gate("gate_baseline");
  const auto refused = [&](json other, const std::string& what) {
    const std::vector<json> a = {base, other}, b = {base};
    try {
      decode_bench::compare::compare_runs(a, b, CompareOptions{});
      ADD_FAILURE() << "expected a refusal naming " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("A's runs are not repeats of one build: its file 1 has " + what),
                std::string::npos)
          << e.what();
    }
  };
  json other = base;
  other["device"]["name"] = "Another GPU";
  refused(other, "device");
  other = base;
  other["meta"]["git"]["sha"] = "0000000";
  refused(other, "commit");
  other = base;
  other["meta"]["environment"] = {{"DECODE_BENCH_FD_TILING", "deep"}};
  refused(other, "environment");
  EXPECT_THROW(decode_bench::compare::compare_runs(std::vector<json>{}, std::vector<json>{base}, CompareOptions{}),
               std::invalid_argument);
}

}  // namespace
