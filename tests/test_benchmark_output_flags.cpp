// Google Benchmark's output flags on `decode-bench sweep` (harness/benchmark_flags.hpp): parsed and
// checked by take_benchmark_flags, refused elsewhere, the whole-run report they write
// (sweeps/run_report.hpp), and a host-only sweep (the capacity experiment runs without a GPU)
// through the executable.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/benchmark_flags.hpp"
#include "tests/benchmark_flags_test_support.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/backend_table.hpp"
#include "sweeps/results_csv.hpp"
#include "sweeps/results_table.hpp"
#include "sweeps/run_report.hpp"
#include "tests/cli_runner.hpp"
#include "tests/cli_split_runner.hpp"
#include "tests/results_table_fixture.hpp"

namespace decode_bench {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using ::decode_bench::testing::run_decode_bench;

std::vector<std::string> split(std::vector<const char*> argv) { return testing::split_benchmark_flags(std::move(argv)); }
std::string refusal(std::vector<const char*> argv) { return testing::benchmark_flags_refusal(std::move(argv)); }

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(BenchmarkOutputFlags, AreTakenOutAndRecordedAfreshOnEveryCall) {
  const auto rest = split({"decode-bench", "sweep", "--benchmark_out=run.csv", "--preset", "quick",
                           "--benchmark_format=csv", "--benchmark_out_format=console"});
  EXPECT_EQ(rest, (std::vector<std::string>{"decode-bench", "sweep", "--preset", "quick"}));
  const BenchmarkOutputFlags& f = benchmark_output_flags();
  EXPECT_EQ(f.format, "csv");
  EXPECT_EQ(f.out, "run.csv");
  EXPECT_EQ(f.out_format, "console");
  EXPECT_EQ(f.first_given, "--benchmark_out");

  split({"decode-bench", "sweep"});
  EXPECT_EQ(f.format, "");
  EXPECT_EQ(f.out, "");
  EXPECT_EQ(f.out_format, "");
  EXPECT_EQ(f.first_given, "");
}

TEST(BenchmarkOutputFlags, BadValuesAreRefusedByName) {
  EXPECT_EQ(refusal({"decode-bench", "sweep", "--benchmark_format=xml"}),
            "--benchmark_format 'xml' is not one of console, json, csv");
  EXPECT_EQ(refusal({"decode-bench", "sweep", "--benchmark_out_format=text"}),
            "--benchmark_out_format 'text' is not one of console, json, csv");
  EXPECT_EQ(refusal({"decode-bench", "sweep", "--benchmark_out="}),
            "--benchmark_out needs a value: --benchmark_out=FILE");
  EXPECT_EQ(refusal({"decode-bench", "sweep", "--benchmark_format"}),
            "--benchmark_format needs a value: --benchmark_format=console|json|csv");
  // A longer name is not one of the three: the whitelist refuses it by name.
  EXPECT_EQ(refusal({"decode-bench", "sweep", "--benchmark_outfile=x"}).rfind("--benchmark_outfile is not supported", 0),
            0u);
}

std::vector<json> all_points(const json& doc) { return doc["points"].get<std::vector<json>>(); }

TEST(RunReport, GoogleBenchmarkFormatsOfAWholeRun) {
  const json doc = ::decode_bench::testing::sample_results_document();
  EXPECT_EQ(sweeps::run_report(doc, "console"), sweeps::results_table(all_points(doc), sweeps::TableFormat::text));
  EXPECT_EQ(sweeps::run_report(doc, "csv"), sweeps::results_csv(doc, all_points(doc)));
  EXPECT_EQ(json::parse(sweeps::run_report(doc, "json")), doc);
  EXPECT_THROW(sweeps::run_report(doc, "text"), std::invalid_argument);
}

// A run of two backends ends with them side by side; a run of one has no such table.
TEST(RunReport, TheConsoleReportOfSeveralBackendsEndsWithThemSideBySide) {
  json doc = ::decode_bench::testing::sample_results_document();
  const std::string one_backend = sweeps::run_report(doc, "console");
  EXPECT_EQ(one_backend.find(sweeps::kBackendsSideBySideHeading), std::string::npos);
  json other = doc["points"][0];
  other["id"] = "e/backend=flashinfer/T=4096";
  other["parameters"]["backend"] = "flashinfer";
  other["timing"]["median_us"] = 500.0;
  doc["points"].push_back(other);
  const std::vector<json> points = all_points(doc);
  const std::string two = sweeps::run_report(doc, "console");
  EXPECT_EQ(two, sweeps::format_results(doc, points, sweeps::TableFormat::text) + "\n" +
                     std::string(sweeps::kBackendsSideBySideHeading) + "\n" +
                     sweeps::format_backend_table(points, sweeps::TableFormat::text));
  EXPECT_NE(two.find("flashinfer"), std::string::npos);
}

TEST(RunReport, AnOutputFileIsCheckedBeforeTheRunAndWrittenAfterIt) {
  const fs::path dir = fs::temp_directory_path() / ("decode_bench_run_report_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path results = dir / "r.json";
  EXPECT_TRUE(sweeps::benchmark_out_problem(dir, results).has_value());  // a directory
  EXPECT_NE(sweeps::benchmark_out_problem(results, results).value_or("").find("results file"), std::string::npos);
  EXPECT_NE(sweeps::benchmark_out_problem(dir / "." / "r.json.partial.jsonl", results).value_or("").find("sidecar"),
            std::string::npos);
  // A new folder is made; the probe leaves no file behind.
  const fs::path out = dir / "new" / "run.csv";
  EXPECT_FALSE(sweeps::benchmark_out_problem(out, results).has_value());
  EXPECT_TRUE(fs::is_directory(dir / "new"));
  EXPECT_FALSE(fs::exists(out));

  const json doc = ::decode_bench::testing::sample_results_document();
  sweeps::write_run_report(out, doc, "csv");
  std::ifstream in(out);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), sweeps::results_csv(doc, all_points(doc)));
  EXPECT_THROW(sweeps::write_run_report(dir / "missing" / "deeper" / "x.csv", doc, "csv"), std::runtime_error);
  fs::remove_all(dir);
}

class BenchmarkOutputCli : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("decode_bench_out_flags_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::path results = dir / "r.json";
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }
  // A capacity-only sweep (no GPU needed) with `flags`.
  testing::CliSplitResult sweep(const std::string& flags) {
    return testing::run_decode_bench_split("sweep --preset quick --experiment capacity --output " + results.string() +
                                           " " + flags);
  }
  std::vector<json> points() { return read_results(results)["points"].get<std::vector<json>>(); }
};

TEST_F(BenchmarkOutputCli, OtherSubcommandsAndRunsThatWriteNothingRefuseThem) {
  auto r = run_decode_bench("list --benchmark_format=csv");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--benchmark_format is for sweep only"), std::string::npos) << r.output;
  r = run_decode_bench("show x.json --benchmark_out=" + (dir / "x.csv").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--benchmark_out is for sweep only"), std::string::npos) << r.output;
  r = run_decode_bench("sweep --dry-run --preset quick --benchmark_out=" + (dir / "x.csv").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--benchmark_out: reports a sweep's results; --dry-run runs nothing"), std::string::npos)
      << r.output;
  r = run_decode_bench("sweep --preset quick --benchmark_format=xml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--benchmark_format 'xml'"), std::string::npos) << r.output;
  // The results file itself is no output file: refused before anything runs.
  const auto same = sweep("--benchmark_out=" + results.string());
  EXPECT_EQ(same.exit_code, 2) << same.err;
  EXPECT_NE(same.err.find("--benchmark_out: '" + results.string() + "' is the sweep's own results file"),
            std::string::npos)
      << same.err;
  EXPECT_FALSE(fs::exists(results));
}

// The end-of-sweep table on stdout, the results file's name its last line (scripts read it there).
TEST_F(BenchmarkOutputCli, ASweepEndsWithItsTableThenTheResultsFile) {
  const auto r = sweep("");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, sweeps::results_table(points(), sweeps::TableFormat::text) + results.string() + "\n");
  EXPECT_EQ(r.out.rfind("capacity: 4 points (4 ok)\n", 0), 0u) << r.out;
  // Each progress line (stderr) says what the point came to.
  for (const json& p : points())
    EXPECT_NE(r.err.find("] " + p["id"].get<std::string>() + ": " + sweeps::point_outcome_text(p) + "\n"),
              std::string::npos)
        << r.err;
  EXPECT_NE(r.err.find(": ok: 1024 sequences ("), std::string::npos) << r.err;  // fragmentation 4: a quarter
}

TEST_F(BenchmarkOutputCli, FormatAndOutFileOfAHostOnlySweep) {
  const fs::path csv = dir / "out" / "run.csv";  // its folder is made
  auto r = sweep("--benchmark_format=csv --benchmark_out=" + csv.string() + " --benchmark_out_format=csv");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = read_results(results);
  const std::string expected_csv = sweeps::results_csv(doc, points());
  EXPECT_EQ(read_text(csv), expected_csv);
  EXPECT_EQ(r.out, expected_csv + results.string() + "\n");
  EXPECT_NE(r.err.find("the run as csv -> " + csv.string()), std::string::npos) << r.err;

  // --benchmark_out alone: the results document itself; console: the text tables.
  const fs::path copy = dir / "copy.json";
  r = sweep("--benchmark_out=" + copy.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_results(copy), read_results(results));
  r = sweep("--benchmark_format=json --benchmark_out=" + (dir / "t.txt").string() + " --benchmark_out_format=console");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_text(dir / "t.txt"), sweeps::results_table(points(), sweeps::TableFormat::text));
  const std::string out = r.out;
  const std::size_t last_line = out.rfind('\n', out.size() - 2) + 1;
  EXPECT_EQ(out.substr(last_line), results.string() + "\n");
  EXPECT_EQ(json::parse(out.substr(0, last_line)), read_results(results));
}

}  // namespace
}  // namespace decode_bench
