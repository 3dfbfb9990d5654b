// A results file read back as tables, progress lines and CSV (sweeps/results_table.hpp,
// sweeps/results_csv.hpp), on the hand-written document of results_table_fixture.hpp: exact
// text, RFC 4180 quoting, selection.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "sweeps/results_csv.hpp"
#include "sweeps/results_table.hpp"
#include "tests/results_table_fixture.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

std::vector<json> all_points(const json& doc) { return doc["points"].get<std::vector<json>>(); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

// An experiment with capacity points adds their count as a column.
TEST(ResultsTable, TextTablesGroupByExperimentWithSkippedAndErrorPointsAfterTheirTable) {
  const json doc = testing::sample_results_document();
  EXPECT_EQ(results_table(all_points(doc), TableFormat::text),
            "e: 3 points (1 ok, 1 verification_failed, 1 skipped)\n"
            "  point   median (us)  GB/s  of ceiling  of floor  verified  max error\n"
            "  T=4096       444.47   4.7       0.002     0.010  yes         1.8e-08\n"
            "  T=8192            -     -           -         -  no          1.2e-02\n"
            "  skipped  T=1048576: needs 9 GiB, \"huge\"\n"
            "\n"
            "cap: 2 points (1 ok, 1 error)\n"
            "  point         median (us)  GB/s  of ceiling  of floor  verified  max error  sequences\n"
            "  page_size=16            -     -           -         -  -                 -       4096\n"
            "  error  page_size=0: boom\n");
}

TEST(ResultsTable, MarkdownTablesHoldTheSameCells) {
  json doc = testing::sample_results_document();
  doc["points"][0]["id"] = "e/a|b";  // a pipe in a cell is escaped, or it would split the row
  EXPECT_EQ(results_table(all_points(doc), TableFormat::markdown),
            "### e: 3 points (1 ok, 1 verification_failed, 1 skipped)\n"
            "\n"
            "| point | median (us) | GB/s | of ceiling | of floor | verified | max error |\n"
            "| :--- | ---: | ---: | ---: | ---: | :--- | ---: |\n"
            "| `a\\|b` | 444.47 | 4.7 | 0.002 | 0.010 | yes | 1.8e-08 |\n"
            "| `T=8192` | - | - | - | - | no | 1.2e-02 |\n"
            "\n"
            "- skipped: T=1048576: needs 9 GiB, \"huge\"\n"
            "\n"
            "### cap: 2 points (1 ok, 1 error)\n"
            "\n"
            "| point | median (us) | GB/s | of ceiling | of floor | verified | max error | sequences |\n"
            "| :--- | ---: | ---: | ---: | ---: | :--- | ---: | ---: |\n"
            "| `page_size=16` | - | - | - | - | - | - | 4096 |\n"
            "\n"
            "- error: page_size=0: boom\n");
}

// Past kListedUnmeasured unmeasured points an experiment gets one line per status.
TEST(ResultsTable, ManySkippedPointsShrinkToOneLinePerStatus) {
  std::vector<json> points;
  for (std::size_t i = 0; i <= kListedUnmeasured; ++i)
    points.push_back({{"id", "x/p" + std::to_string(i)},
                      {"experiment", "x"},
                      {"parameters", json::object()},
                      {"status", "skipped"},
                      {"reason", "r" + std::to_string(i)}});
  points.push_back(
      {{"id", "x/q"}, {"experiment", "x"}, {"parameters", json::object()}, {"status", "error"}, {"reason", "boom"}});
  EXPECT_EQ(results_table(points, TableFormat::text),
            "x: 10 points (9 skipped, 1 error)\n"
            "  skipped  9 points, the first p0: r0\n"
            "  error  q: boom\n");
  points.pop_back();
  points.pop_back();  // kListedUnmeasured points: each listed
  const std::string listed = results_table(points, TableFormat::text);
  EXPECT_NE(listed.find("  skipped  p7: r7\n"), std::string::npos) << listed;
  EXPECT_EQ(listed.find("the first"), std::string::npos) << listed;
}

TEST(ResultsTable, ProgressLineSaysWhatBecameOfThePoint) {
  const json doc = testing::sample_results_document();
  const json& p = doc["points"];
  EXPECT_EQ(point_outcome_text(p[0]), "ok: 444.47 us, 4.7 GB/s, 0.002 of the DRAM read ceiling");
  EXPECT_EQ(point_outcome_text(p[1]), "verification failed (max error 1.2e-02, tolerance 0.001)");
  EXPECT_EQ(point_outcome_text(p[2]), "skipped (needs 9 GiB, \"huge\")");
  EXPECT_EQ(point_outcome_text(p[3]), "ok: 4096 sequences (accounting)");
  EXPECT_EQ(point_outcome_text(p[4]), "error (boom)");
  // A host-timed point has no ceiling fraction; a failed point without numbers shows its reason.
  EXPECT_EQ(
      point_outcome_text({{"status", "ok"}, {"timing", {{"median_us", 4658.143}}}, {"achieved", {{"gbps", 0.45}}}}),
      "ok: 4658.14 us, 0.5 GB/s");
  EXPECT_EQ(point_outcome_text({{"status", "verification_failed"}, {"reason", "non-finite output"}}),
            "verification failed (non-finite output)");
}

TEST(ResultsCsv, OneRowPerPointWithParametersAsColumnsAndRfc4180Quoting) {
  const json doc = testing::sample_results_document();
  EXPECT_EQ(
      results_csv(doc, all_points(doc)),
      "id,experiment,status,reason,T,kernel,page_size,median_us,gbps,tflops,fraction_of_dram_read,"
      "fraction_of_read_floor,model_bytes,model_flops,verified,max_abs_error,capacity_sequences,capacity_backend,"
      "device_index,device_name\n"
      "e/T=4096,e,ok,,4096,baseline,,444.469,4.7206,0.0047,0.0015058,0.0103389,2098180,2097152,true,1.84e-08,,,,GPU A\n"
      "e/T=8192,e,verification_failed,FAILED: max_rel_error 0.05 (tol 0.001),8192,baseline,,,,,,,,,false,0.0123,,,,"
      "GPU A\n"
      "e/T=1048576,e,skipped,\"needs 9 GiB, \"\"huge\"\"\",1048576,baseline,,,,,,,,,,,,,,GPU A\n"
      "cap/page_size=16,cap,ok,,,capacity,16,,,,,,,,,,4096,accounting,,GPU A\n"
      "cap/page_size=0,cap,error,boom,,capacity,0,,,,,,,,,,,,,GPU A\n");
}

TEST(ResultsCsv, FieldsAreQuotedOnlyWhenTheyMustBe) {
  EXPECT_EQ(csv_field("plain text"), "plain text");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
  EXPECT_EQ(csv_field(""), "");
}

// A --devices run names each point's own GPU; a parameter named like a fixed column keeps both.
TEST(ResultsCsv, DeviceNamesComeFromTheDevicesListAndParameterNamesNeverShadowColumns) {
  json doc = testing::sample_results_document();
  doc["devices"] = {{{"index", 0}, {"info", {{"name", "GPU A"}}}}, {{"index", 1}, {"info", {{"name", "GPU B"}}}}};
  json p = doc["points"][4];
  p["device"] = 1;
  p["parameters"]["status"] = "x";
  const std::string csv = results_csv(doc, {p});
  EXPECT_EQ(csv,
            "id,experiment,status,reason,kernel,page_size,parameters.status,median_us,gbps,tflops,"
            "fraction_of_dram_read,fraction_of_read_floor,model_bytes,model_flops,verified,max_abs_error,"
            "capacity_sequences,capacity_backend,device_index,device_name\n"
            "cap/page_size=0,cap,error,boom,capacity,0,x,,,,,,,,,,,,1,GPU B\n");
}

TEST(PointSelection, ByExperimentAndByARegexSearchInTheId) {
  const json doc = testing::sample_results_document();
  const auto ids = [](const std::vector<json>& points) {
    std::vector<std::string> out;
    for (const json& p : points) out.push_back(p["id"]);
    return out;
  };
  EXPECT_EQ(ids(select_points(doc["points"], {})).size(), 5u);
  EXPECT_EQ(ids(select_points(doc["points"], {{"cap"}, ""})),
            (std::vector<std::string>{"cap/page_size=16", "cap/page_size=0"}));
  EXPECT_EQ(ids(select_points(doc["points"], {{}, "T=[0-9]{4}$"})), (std::vector<std::string>{"e/T=4096", "e/T=8192"}));
  EXPECT_EQ(ids(select_points(doc["points"], {{"e", "cap"}, "=16|=8"})),
            (std::vector<std::string>{"e/T=8192", "cap/page_size=16"}));
  EXPECT_TRUE(select_points(doc["points"], {{"cap"}, "T="}).empty());

  const std::string bad_regex = message_of([&] { select_points(doc["points"], {{}, "("}); });
  EXPECT_NE(bad_regex.find("--filter '('"), std::string::npos) << bad_regex;
  const std::string bad_experiment = message_of([&] { select_points(doc["points"], {{"nosuch"}, ""}); });
  EXPECT_NE(bad_experiment.find("--experiment 'nosuch'"), std::string::npos) << bad_experiment;
  EXPECT_NE(bad_experiment.find("cap, e"), std::string::npos) << bad_experiment;  // the ones there are
}

TEST(ResultsFormats, NamesParseAndJsonIsThePointsArray) {
  EXPECT_EQ(parse_table_format("text"), TableFormat::text);
  EXPECT_EQ(parse_table_format("markdown"), TableFormat::markdown);
  EXPECT_EQ(parse_table_format("csv"), TableFormat::csv);
  EXPECT_EQ(parse_table_format("json"), TableFormat::json);
  EXPECT_FALSE(parse_table_format("console"));
  const json doc = testing::sample_results_document();
  const std::vector<json> two = {doc["points"][0], doc["points"][3]};
  EXPECT_EQ(json::parse(format_results(doc, two, TableFormat::json)), json(two));
}

}  // namespace
}  // namespace decode_bench::sweeps
