// `decode-bench show` through the executable, on synthetic results files: tables, CSV and JSON on
// standard output, selection, a sweep's sidecar, and exit 2 naming a bad file or option.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/results_schema.hpp"
#include "sweeps/results_csv.hpp"
#include "sweeps/results_table.hpp"
#include "tests/cli_runner.hpp"
#include "tests/cli_split_runner.hpp"
#include "tests/results_table_fixture.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using ::decode_bench::testing::run_decode_bench;

class ShowCli : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() / ("decode_bench_show_" + std::to_string(::getpid()) + "_" +
                                              ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::path results = dir / "run.json";
  json doc = testing::sample_results_document();
  void SetUp() override {
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_results(results, doc);
  }
  void TearDown() override { fs::remove_all(dir); }
  // `show ARGS`: its exit code, *out what it printed on standard output.
  int show(const std::string& args, std::string* out) {
    const auto r = ::decode_bench::testing::run_decode_bench_split("show " + args);
    *out = r.out;
    return r.exit_code;
  }
};

TEST_F(ShowCli, PrintsEachFormatOfTheSelectedPoints) {
  const std::vector<json> points = doc["points"].get<std::vector<json>>();
  std::string out;
  ASSERT_EQ(show(results.string(), &out), 0);
  EXPECT_EQ(out, results_table(points, TableFormat::text));
  ASSERT_EQ(show(results.string() + " --format markdown", &out), 0);
  EXPECT_EQ(out, results_table(points, TableFormat::markdown));
  ASSERT_EQ(show(results.string() + " --format csv", &out), 0);
  EXPECT_EQ(out, results_csv(doc, points));
  ASSERT_EQ(show(results.string() + " --format json --experiment cap --filter '=16$'", &out), 0);
  EXPECT_EQ(json::parse(out), json::array({doc["points"][3]}));
  ASSERT_EQ(show(results.string() + " --format csv --experiment e --experiment cap --filter 'T=8|page_size=0'", &out),
            0);
  EXPECT_EQ(out, results_csv(doc, {doc["points"][1], doc["points"][4]}));
}

TEST_F(ShowCli, BadInputExitsTwoNamingTheFileOrTheOption) {
  auto r = run_decode_bench("show " + (dir / "nosuch.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find((dir / "nosuch.json").string() + ": no such file"), std::string::npos) << r.output;

  const std::string malformed = std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/malformed_results.json";
  r = run_decode_bench("show " + malformed);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(malformed), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("meta.tool_version: missing required field"), std::string::npos) << r.output;

  std::ofstream(dir / "garbage.json") << "{ not json";
  r = run_decode_bench("show " + (dir / "garbage.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("garbage.json"), std::string::npos) << r.output;

  r = run_decode_bench("show " + results.string() + " --filter '('");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--filter"), std::string::npos) << r.output;
  r = run_decode_bench("show " + results.string() + " --experiment nosuch");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--experiment 'nosuch'"), std::string::npos) << r.output;
  r = run_decode_bench("show " + results.string() + " --format xml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--format"), std::string::npos) << r.output;
  EXPECT_EQ(run_decode_bench("show").exit_code, 2);
}

// A filter that keeps nothing prints the empty table and says so on stderr; it is no error.
TEST_F(ShowCli, AnEmptySelectionIsReported) {
  const auto r = run_decode_bench("show " + results.string() + " --format csv --filter nothing-has-this");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("no point of " + results.string() + " is selected (5 in the file)"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("id,experiment,status,reason,median_us"), std::string::npos) << r.output;  // header only
}

// A sweep's sidecar (header, points, a last line cut short by a crash) shows like a final file.
TEST_F(ShowCli, ReadsASweepSidecar) {
  const fs::path sidecar = dir / "stopped.json.partial.jsonl";
  {
    std::ofstream f(sidecar);
    f << json{{"decode_bench_partial", 1}, {"meta", doc["meta"]}, {"device", doc["device"]}}.dump() << "\n"
      << doc["points"][0].dump() << "\n"
      << doc["points"][3].dump() << "\n"
      << "{\"id\": \"cut";
  }
  const std::vector<json> two = {doc["points"][0], doc["points"][3]};
  std::string out;
  for (const fs::path& name : {sidecar, dir / "stopped.json"}) {  // the sidecar, or the results path it belongs to
    ASSERT_EQ(show(name.string() + " --format csv", &out), 0) << name;
    EXPECT_EQ(out, results_csv(doc, two)) << name;
  }
  const auto r = run_decode_bench("show " + sidecar.string());
  EXPECT_NE(r.output.find("1 unreadable line(s) left out"), std::string::npos) << r.output;

  std::ofstream(dir / "empty.partial.jsonl") << "not a sidecar\n";
  const auto bad = run_decode_bench("show " + (dir / "empty.partial.jsonl").string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("empty.partial.jsonl holds no sweep header"), std::string::npos) << bad.output;
}

// RFC 4180 read back: rows of fields (quoted fields may hold commas, doubled quotes, line breaks).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted && c == '"' && i + 1 < text.size() && text[i + 1] == '"')
      rows.back().back() += text[++i];
    else if (c == '"')
      quoted = !quoted;
    else if (!quoted && c == ',')
      rows.back().emplace_back();
    else if (!quoted && c == '\n')
      rows.emplace_back(1);
    else
      rows.back().back() += c;
  }
  if (rows.back() == std::vector<std::string>(1)) rows.pop_back();  // after the last line break
  return rows;
}

// The committed synthetic run (its ids hold commas): one CSV row per point, every row as wide as
// the header, the ids read back whole.
TEST_F(ShowCli, ExportsTheSyntheticPaperRunAsCsv) {
  const std::string file = std::string(DECODE_BENCH_SOURCE_DIR) + "/tests/data/synthetic_paper_results.json";
  std::string out;
  ASSERT_EQ(show(file + " --format csv", &out), 0);
  const json synthetic = read_results(file);
  const auto rows = csv_rows(out);
  ASSERT_EQ(rows.size(), synthetic["points"].size() + 1);
  EXPECT_EQ(rows[0][0], "id");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].size(), rows[0].size()) << out;
    EXPECT_EQ(rows[i][0], synthetic["points"][i - 1]["id"].get<std::string>());
  }
  ASSERT_EQ(show(file + " --experiment fig6_page_size", &out), 0);
  EXPECT_EQ(out.rfind("fig6_page_size: 8 points (7 ok, 1 skipped)\n", 0), 0u) << out;
  EXPECT_NE(out.find(": synthetic: page larger than the sequence\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace decode_bench::sweeps
