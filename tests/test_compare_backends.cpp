// `decode-bench compare FILE --backends A,B` (sweeps/compare/compare_backends.hpp) and `compare
// --format csv`: two backends of one file paired by shape, the report equal to the two-file
// comparison of the same points, the refusals, the csv rows, and the commands through the
// executable, on the SYNTHETIC two-backend fixture (tests/data/synthetic_backends_results.json:
// flashinfer 10% slower on `kernels`, 10% faster on `paged`, bf16 skipped, one shape decode-bench
// only).
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "harness/json_file.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/backend_table.hpp"
#include "sweeps/compare/compare_backends.hpp"
#include "sweeps/compare/compare_format.hpp"
#include "tests/cli_split_runner.hpp"

namespace decode_bench::compare {
namespace {

using nlohmann::json;

const std::string kFixture = std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/synthetic_backends_results.json";
const CompareOptions kByTime{"timing.median_us", 0.05, std::nullopt};

json fixture() { return read_results(kFixture); }

// Each backend's ok median by shape, read from the fixture directly.
std::map<std::string, double> medians(const std::string& backend) {
  std::map<std::string, double> out;
  const json doc = fixture();
  for (const json& p : doc["points"])
    if (sweeps::point_backend(p) == backend && p["status"] == "ok")
      out[sweeps::shape_of(p)] = p["timing"]["median_us"].get<double>();
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(CompareBackends, SplitKeepsTheRunAndRenamesPointsToTheirShapes) {
  const json doc = fixture();
  const BackendDocuments d = split_by_backend(doc, "decode-bench", "flashinfer");
  EXPECT_EQ(d.a["device"], doc["device"]);
  EXPECT_EQ(d.b["ceilings"], doc["ceilings"]);
  EXPECT_EQ(d.a["meta"], doc["meta"]);
  ASSERT_EQ(d.a["points"].size(), 6u);
  ASSERT_EQ(d.b["points"].size(), 5u);
  for (const json& p : d.b["points"]) {
    EXPECT_EQ(p["id"].get<std::string>().find("backend="), std::string::npos) << p["id"];
    EXPECT_EQ(p["parameters"]["backend"], "flashinfer");
  }
  EXPECT_EQ(d.b["points"][0]["id"], "kernels/kernel=flash_decode/layout=contiguous/dtype=fp16/batch=1/T=4096");
  EXPECT_EQ(d.a["points"][0]["id"], d.b["points"][0]["id"]);
}

TEST(CompareBackends, RatiosAreCandidateOverBaselinePerShape) {
  const CompareReport r = compare_backends(fixture(), "decode-bench", "flashinfer", kByTime);
  EXPECT_EQ(r.backend_a, "decode-bench");
  EXPECT_EQ(r.backend_b, "flashinfer");
  const auto a = medians("decode-bench"), b = medians("flashinfer");
  // fp16 kernels (2 shapes) and paged batch=4 are ok in both.
  ASSERT_EQ(r.common.size(), 3u);
  for (const PointComparison& c : r.common) {
    EXPECT_DOUBLE_EQ(c.ratio, b.at(c.id) / a.at(c.id)) << c.id;
    EXPECT_EQ(c.samples_a, 10);
    ASSERT_TRUE(c.lo && c.hi) << c.id;
    // flashinfer is 10% slower on kernels (regressions, by time) and 10% faster on paged.
    EXPECT_EQ(c.verdict, c.experiment == "kernels" ? Verdict::regression : Verdict::improvement) << c.id;
  }
  // The skipped bf16 shapes (and the one decode-bench failed) are not comparable; the shape only
  // decode-bench ran is only in A.
  EXPECT_EQ(r.not_comparable.size(), 2u);
  ASSERT_EQ(r.only_in_a.size(), 1u);
  EXPECT_EQ(r.only_in_a[0], "paged/kernel=batch_decode/layout=paged/dtype=fp16/batch=16/T=4096/page_size=16");
  EXPECT_TRUE(r.only_in_b.empty());
  EXPECT_EQ(r.overall.regressions, 2u);
  EXPECT_EQ(r.overall.improvements, 1u);
  // Swapped, every ratio inverts.
  const CompareReport s = compare_backends(fixture(), "flashinfer", "decode-bench", kByTime);
  ASSERT_EQ(s.common.size(), r.common.size());
  for (std::size_t i = 0; i < s.common.size(); ++i) EXPECT_DOUBLE_EQ(s.common[i].ratio * r.common[i].ratio, 1.0);
  EXPECT_NEAR(s.overall.geomean_ratio * r.overall.geomean_ratio, 1.0, 1e-12);
}

TEST(CompareBackends, ReportNamesTheBackends) {
  const CompareReport r = compare_backends(fixture(), "decode-bench", "flashinfer", kByTime);
  const std::string text = format_report(r, Format::text);
  EXPECT_NE(text.find("A: backend decode-bench, B: backend flashinfer, points paired by shape, on Synthetic GPU"),
            std::string::npos)
      << text;
  const json j = report_to_json(r);
  EXPECT_EQ(j["a"]["backend"], "decode-bench");
  EXPECT_EQ(j["b"]["backend"], "flashinfer");
  // Two files: no backend field.
  const json two = report_to_json(compare_results(fixture(), fixture(), kByTime));
  EXPECT_FALSE(two["a"].contains("backend"));
}

TEST(CompareBackends, Refusals) {
  const json doc = fixture();
  try {
    split_by_backend(doc, "decode-bench", "triton");
    FAIL() << "an absent backend was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "--backends: no point of backend 'triton' in the file (its backends: decode-bench, flashinfer)");
  }
  EXPECT_THROW(split_by_backend(doc, "flashinfer", "flashinfer"), std::invalid_argument);
  // Two points of one backend and one shape cannot be paired.
  json twice = doc;
  twice["points"].push_back(doc["points"][0]);
  EXPECT_THROW(split_by_backend(twice, "decode-bench", "flashinfer"), std::invalid_argument);

  EXPECT_EQ(parse_backend_pair("decode-bench,flashinfer"), (std::pair<std::string, std::string>{"decode-bench", "flashinfer"}));
  for (const char* bad : {"decode-bench", "decode-bench,", ",flashinfer", "a,b,c", "", "flashinfer,flashinfer"})
    EXPECT_THROW(parse_backend_pair(bad), std::invalid_argument) << bad;
}

TEST(CompareCsv, OneRowPerPointThenTheIdsNotCompared) {
  const CompareReport r = compare_backends(fixture(), "decode-bench", "flashinfer", kByTime);
  const auto lines = lines_of(format_report(r, Format::csv));
  ASSERT_EQ(lines.size(), 1u + 3u + 1u + 2u);
  EXPECT_EQ(lines[0], "id,experiment,a,b,ratio,interval_lo,interval_hi,verdict,samples_a,samples_b,bound,bound_device_ratio");
  const PointComparison& c = r.common[0];
  EXPECT_EQ(lines[1], c.id + ",kernels," + json(c.a).dump() + "," + json(c.b).dump() + "," + json(c.ratio).dump() +
                          "," + json(*c.lo).dump() + "," + json(*c.hi).dump() + ",regression,10,10,,");
  EXPECT_EQ(lines[4], r.only_in_a[0] + ",,,,,,,only_in_a,,,,");
  EXPECT_EQ(lines[5], r.not_comparable[0] + ",,,,,,,not_comparable,,,,");
  EXPECT_EQ(parse_format("csv"), Format::csv);
}

TEST(CompareCsv, IdsWithCommasAreQuoted) {
  const json doc = read_results(std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/synthetic_paper_results.json");
  const CompareReport r = compare_results(doc, doc, CompareOptions{});
  const auto lines = lines_of(format_report(r, Format::csv));
  ASSERT_EQ(lines.size(), 1 + r.common.size() + r.not_comparable.size());
  ASSERT_NE(r.common[0].id.find(','), std::string::npos) << "the fixture's ids hold commas";
  EXPECT_EQ(lines[1].rfind("\"" + r.common[0].id + "\",", 0), 0u) << lines[1];
  EXPECT_NE(lines[1].find(",1.0,,,unchanged,0,0,,"), std::string::npos) << lines[1];  // ratio 1, no samples
}

// --- through the executable ---------------------------------------------------------------

using ::decode_bench::testing::run_decode_bench_split;

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("db_compare_backends_" + std::to_string(::getpid()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

TEST(CompareBackendsCli, SameReportAsTheTwoFilesOfEachBackend) {
  TempDir dir;
  const BackendDocuments d = split_by_backend(fixture(), "decode-bench", "flashinfer");
  const std::string a = (dir.path / "a.json").string(), b = (dir.path / "b.json").string();
  write_json_atomic(a, d.a);
  write_json_atomic(b, d.b);
  const auto files = run_decode_bench_split("compare " + a + " " + b + " --format json --metric timing.median_us");
  const auto one = run_decode_bench_split("compare " + kFixture +
                                          " --backends decode-bench,flashinfer --format json --metric timing.median_us");
  EXPECT_EQ(files.exit_code, 1) << files.err;  // the kernels shapes regressed
  ASSERT_EQ(one.exit_code, 1) << one.err;
  json jf = json::parse(files.out), jo = json::parse(one.out);
  EXPECT_EQ(jo["a"]["backend"], "decode-bench");
  jo["a"].erase("backend");
  jo["b"].erase("backend");
  EXPECT_EQ(jf, jo);
  // The default metric (achieved.gbps) and a threshold beyond the 10% pass.
  EXPECT_EQ(run_decode_bench_split("compare " + kFixture + " --backends decode-bench,flashinfer").exit_code, 1);
  const auto loose = run_decode_bench_split("compare " + kFixture + " --backends decode-bench,flashinfer --threshold 0.2");
  EXPECT_EQ(loose.exit_code, 0) << loose.err;
  EXPECT_NE(loose.out.find("A: backend decode-bench, B: backend flashinfer"), std::string::npos) << loose.out;
  const auto csv = run_decode_bench_split("compare " + kFixture + " --backends decode-bench,flashinfer --format csv");
  EXPECT_EQ(csv.exit_code, 1) << csv.err;
  EXPECT_EQ(lines_of(csv.out).size(), 7u) << csv.out;
}

TEST(CompareBackendsCli, RefusalsExitTwoNamingTheProblem) {
  const std::string cmd = "compare " + kFixture;
  struct Case {
    std::string args, message;
  };
  for (const Case& c : std::vector<Case>{
           {" --backends decode-bench,triton", "no point of backend 'triton' in the file (its backends: decode-bench, flashinfer)"},
           {" --backends flashinfer,flashinfer", "the same backend twice"},
           {" --backends flashinfer", "--backends 'flashinfer': two backend names"},
           {" --backends ''", "--backends '': two backend names"},
           {" " + kFixture + " --backends decode-bench,flashinfer", "a second file"},
           {"", "two results files A B are needed (or one file with --backends A,B)"},
       }) {
    const auto r = run_decode_bench_split(cmd + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
  }
  // Two backends with no shape ok in both: nothing to compare.
  TempDir dir;
  json doc = fixture();
  for (json& p : doc["points"])
    if (sweeps::point_backend(p) == "flashinfer") {
      p["status"] = "error";
      p["reason"] = "synthetic";
    }
  const std::string none = (dir.path / "none.json").string();
  write_json_atomic(none, doc);
  const auto r = run_decode_bench_split("compare " + none + " --backends decode-bench,flashinfer");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no shape of " + none + " is ok in both backends decode-bench and flashinfer"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace decode_bench::compare
