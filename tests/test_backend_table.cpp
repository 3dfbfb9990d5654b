// `decode-bench show --by-backend` (sweeps/backend_table.hpp): shapes paired across backends, the
// ratio to the fastest, the four formats, and the command on the pinned peer run.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "sweeps/backend_table.hpp"
#include "tests/cli_split_runner.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

json timed(const std::string& id, const std::string& backend, double median_us) {
  json p = {{"id", id}, {"experiment", id.substr(0, id.find('/'))}, {"status", "ok"},
            {"timing", {{"median_us", median_us}}}};
  if (!backend.empty()) p["parameters"] = {{"backend", backend}};
  return p;
}

json untimed(const std::string& id, const std::string& backend, const std::string& status) {
  return {{"id", id},
          {"experiment", id.substr(0, id.find('/'))},
          {"status", status},
          {"reason", "why"},
          {"parameters", {{"backend", backend}}}};
}

// Two backends over experiment e: T=8 both ok, T=16 flashinfer skipped, T=32 decode-bench failed
// verification, T=64 neither ok; experiment f has one default-backend point without parameters.
std::vector<json> two_backends() {
  return {timed("e/kernel=k/T=8", "decode-bench", 10.0),
          timed("e/kernel=k/backend=flashinfer/T=8", "flashinfer", 12.5),
          timed("e/kernel=k/T=16", "decode-bench", 20.0),
          untimed("e/kernel=k/backend=flashinfer/T=16", "flashinfer", "skipped"),
          untimed("e/kernel=k/T=32", "decode-bench", "verification_failed"),
          timed("e/kernel=k/backend=flashinfer/T=32", "flashinfer", 40.0),
          untimed("e/kernel=k/T=64", "decode-bench", "error"),
          untimed("e/kernel=k/backend=flashinfer/T=64", "flashinfer", "skipped"),
          timed("f/kernel=k/T=8", "", 5.0)};
}

TEST(BackendTable, ShapeDropsOnlyTheBackendComponent) {
  EXPECT_EQ(shape_of(json{{"id", "e/kernel=k/backend=flashinfer/T=8"}}), "e/kernel=k/T=8");
  EXPECT_EQ(shape_of(json{{"id", "e/kernel=k/T=8"}}), "e/kernel=k/T=8");
  EXPECT_EQ(point_backend(json{{"id", "e/x"}}), "decode-bench");
  EXPECT_EQ(point_backend(json{{"parameters", {{"backend", "flashinfer"}}}}), "flashinfer");
}

TEST(BackendTable, RatiosAreEachMedianOverTheFastestOk) {
  const BackendTable t = backend_table(two_backends());
  ASSERT_EQ(t.backends, (std::vector<std::string>{"decode-bench", "flashinfer"}));
  ASSERT_EQ(t.rows.size(), 5u);
  const BackendRow& both = t.rows[0];
  EXPECT_EQ(both.shape, "e/kernel=k/T=8");
  EXPECT_EQ(both.fastest, "decode-bench");
  EXPECT_DOUBLE_EQ(*both.cells[0].over_fastest, 1.0);
  EXPECT_DOUBLE_EQ(*both.cells[1].over_fastest, 12.5 / 10.0);
  // A backend that did not time the shape takes no part: the other is fastest alone.
  EXPECT_EQ(t.rows[1].cells[1].status, "skipped");
  EXPECT_FALSE(t.rows[1].cells[1].over_fastest.has_value());
  EXPECT_EQ(t.rows[1].fastest, "decode-bench");
  EXPECT_EQ(t.rows[2].cells[0].status, "failed");
  EXPECT_FALSE(t.rows[2].cells[0].median_us.has_value());
  EXPECT_EQ(t.rows[2].fastest, "flashinfer");
  EXPECT_DOUBLE_EQ(*t.rows[2].cells[1].over_fastest, 1.0);
  EXPECT_EQ(t.rows[3].cells[0].status, "error");
  EXPECT_EQ(t.rows[3].fastest, "");
  // f's point has no flashinfer counterpart at all.
  EXPECT_EQ(t.rows[4].experiment, "f");
  EXPECT_EQ(t.rows[4].cells[1].status, "");
}

TEST(BackendTable, DefaultBackendFirstThenOthersByName) {
  const BackendTable t = backend_table({timed("e/backend=zeta/T=8", "zeta", 3.0),
                                        timed("e/backend=alpha/T=8", "alpha", 2.0), timed("e/T=8", "", 4.0)});
  EXPECT_EQ(t.backends, (std::vector<std::string>{"decode-bench", "alpha", "zeta"}));
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].fastest, "alpha");
  EXPECT_DOUBLE_EQ(*t.rows[0].cells[0].over_fastest, 2.0);
  EXPECT_DOUBLE_EQ(*t.rows[0].cells[2].over_fastest, 1.5);
}

TEST(BackendTable, OneBackendIsOneColumn) {
  EXPECT_EQ(format_backend_table({timed("e/T=8", "", 4.0)}, TableFormat::text),
            "e: 1 shape\n"
            "  shape  decode-bench (us)  decode-bench / fastest  fastest\n"
            "  T=8                 4.00                    1.00  decode-bench\n");
}

TEST(BackendTable, TextTable) {
  EXPECT_EQ(format_backend_table(two_backends(), TableFormat::text), R"(e: 4 shapes
  shape          decode-bench (us)  flashinfer (us)  decode-bench / fastest  flashinfer / fastest  fastest
  kernel=k/T=8               10.00            12.50                    1.00                  1.25  decode-bench
  kernel=k/T=16              20.00          skipped                    1.00                     -  decode-bench
  kernel=k/T=32             failed            40.00                       -                  1.00  flashinfer
  kernel=k/T=64              error          skipped                       -                     -  -

f: 1 shape
  shape         decode-bench (us)  flashinfer (us)  decode-bench / fastest  flashinfer / fastest  fastest
  kernel=k/T=8               5.00                -                    1.00                     -  decode-bench
)");
}

TEST(BackendTable, MarkdownTable) {
  EXPECT_EQ(format_backend_table(two_backends(), TableFormat::markdown), R"(### e: 4 shapes

| shape | decode-bench (us) | flashinfer (us) | decode-bench / fastest | flashinfer / fastest | fastest |
| :--- | ---: | ---: | ---: | ---: | :--- |
| `kernel=k/T=8` | 10.00 | 12.50 | 1.00 | 1.25 | decode-bench |
| `kernel=k/T=16` | 20.00 | skipped | 1.00 | - | decode-bench |
| `kernel=k/T=32` | failed | 40.00 | - | 1.00 | flashinfer |
| `kernel=k/T=64` | error | skipped | - | - | - |

### f: 1 shape

| shape | decode-bench (us) | flashinfer (us) | decode-bench / fastest | flashinfer / fastest | fastest |
| :--- | ---: | ---: | ---: | ---: | :--- |
| `kernel=k/T=8` | 5.00 | - | 1.00 | - | decode-bench |
)");
}

json with_io(json point, const std::string& io_dtype) {
  point["backend"] = {{"io_dtype", io_dtype}};
  return point;
}

// An experiment whose backends read q and wrote o in different types says so under its table,
// naming each backend's; one that shares a type, or records none, adds nothing.
TEST(BackendTable, ExperimentsWhoseBackendsDifferInIoDtypeSaySo) {
  const std::vector<json> points = {
      with_io(timed("e/kernel=k/T=8", "decode-bench", 10.0), "fp32"),
      with_io(timed("e/kernel=k/backend=fa/T=8", "fa", 9.0), "bf16"),
      with_io(timed("e/kernel=k/backend=fb/T=8", "fb", 11.0), "bf16"),
      untimed("e/kernel=k/T=16", "decode-bench", "skipped"),
      with_io(timed("e/kernel=k/backend=fa/T=16", "fa", 19.0), "fp16"),
      with_io(timed("f/kernel=k/T=8", "decode-bench", 5.0), "fp32"),
      with_io(timed("f/kernel=k/backend=fa/T=8", "fa", 6.0), "fp32"),
      timed("g/kernel=k/T=8", "decode-bench", 5.0),
      timed("g/kernel=k/backend=fa/T=8", "fa", 6.0)};
  const BackendTable t = backend_table(points);
  ASSERT_EQ(t.backends, (std::vector<std::string>{"decode-bench", "fa", "fb"}));
  const auto rows_of = [&](const std::string& experiment) {
    std::vector<const BackendRow*> rows;
    for (const BackendRow& r : t.rows)
      if (r.experiment == experiment) rows.push_back(&r);
    return rows;
  };
  const std::string note =
      "q and o: decode-bench fp32; fa bf16/fp16; fb bf16 (each kernel's time holds its own q and o traffic; the "
      "pipeline converts outside timing)";
  EXPECT_EQ(io_dtype_note(t, rows_of("e")), note);
  EXPECT_EQ(io_dtype_note(t, rows_of("f")), "");  // one type
  EXPECT_EQ(io_dtype_note(t, rows_of("g")), "");  // none recorded
  const std::string text = format_backend_table(points, TableFormat::text);
  EXPECT_NE(text.find("  fa\n  " + note + "\n\nf: 1 shape"), std::string::npos) << text;
  EXPECT_EQ(text.find("q and o:", text.find("f: 1 shape")), std::string::npos) << text;
  const std::string markdown = format_backend_table(points, TableFormat::markdown);
  EXPECT_NE(markdown.find("|\n\n" + note + "\n\n### f: 1 shape"), std::string::npos) << markdown;
  // csv and json keep their fields.
  EXPECT_EQ(format_backend_table(points, TableFormat::csv).find("q and o"), std::string::npos);
}

TEST(BackendTable, CsvColumnsPerBackend) {
  const std::string csv = format_backend_table(two_backends(), TableFormat::csv);
  std::istringstream in(csv);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 6u) << csv;
  EXPECT_EQ(lines[0],
            "shape,experiment,decode-bench_median_us,decode-bench_status,decode-bench_over_fastest,"
            "flashinfer_median_us,flashinfer_status,flashinfer_over_fastest,fastest");
  EXPECT_EQ(lines[1], "e/kernel=k/T=8,e,10,ok,1,12.5,ok,1.25,decode-bench");
  EXPECT_EQ(lines[2], "e/kernel=k/T=16,e,20,ok,1,,skipped,,decode-bench");
  EXPECT_EQ(lines[3], "e/kernel=k/T=32,e,,failed,,40,ok,1,flashinfer");
  EXPECT_EQ(lines[4], "e/kernel=k/T=64,e,,error,,,skipped,,");
  EXPECT_EQ(lines[5], "f/kernel=k/T=8,f,5,ok,1,,,,decode-bench");
}

TEST(BackendTable, JsonObjectsCarryTheCsvFields) {
  const json rows = json::parse(format_backend_table(two_backends(), TableFormat::json));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (json{{"shape", "e/kernel=k/T=8"},
                           {"experiment", "e"},
                           {"decode-bench_median_us", 10.0},
                           {"decode-bench_status", "ok"},
                           {"decode-bench_over_fastest", 1.0},
                           {"flashinfer_median_us", 12.5},
                           {"flashinfer_status", "ok"},
                           {"flashinfer_over_fastest", 1.25},
                           {"fastest", "decode-bench"}}));
  EXPECT_TRUE(rows[3]["fastest"].is_null());
  EXPECT_EQ(rows[3]["decode-bench_status"], "error");
  EXPECT_TRUE(rows[3]["decode-bench_median_us"].is_null());
}

// The pinned run of the peer preset through both backends, through the executable.
TEST(BackendTableCli, PeerBackendsRowNamesTheFastest) {
  const std::string file = std::string(DECODE_BENCH_SOURCE_DIR) + "/results/reference/h100/peer.json";
  const json doc = json::parse(std::ifstream(file));
  const std::string shape =
      "kernel=flash_decode/layout=contiguous/dtype=fp16/heads_q=32/heads_kv=32/T=65536/counters=false";
  // The backends in the table's order: decode-bench first, then the others by name.
  std::map<std::string, double> median;
  for (const json& p : doc["points"]) {
    if (p["experiment"] != "long_mha" || p["status"] != "ok" || shape_of(p) != "long_mha/" + shape) continue;
    median[point_backend(p)] = p["timing"]["median_us"].get<double>();
  }
  ASSERT_EQ(median.size(), 3u) << "decode-bench, flashinfer and flashinfer_tc each timed the shape";
  const double ours = median.at("decode-bench"), fi = median.at("flashinfer"), tc = median.at("flashinfer_tc");
  ASSERT_LT(ours, fi) << "the pinned run has decode-bench faster on this shape";
  ASSERT_LT(ours, tc) << "the pinned run has decode-bench faster on this shape";
  const auto r = ::decode_bench::testing::run_decode_bench_split("show " + file + " --by-backend");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  char expected[512];
  std::snprintf(expected, sizeof expected, "  %s  %.2f  %.2f  %.2f  1.00  %.2f  %.2f  decode-bench\n", shape.c_str(), ours,
                fi, tc, fi / ours, tc / ours);
  // Columns are padded to their widest cell; compare with runs of spaces squeezed to two.
  std::string squeezed;
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    if (r.out[i] == ' ' && i + 1 < r.out.size() && r.out[i + 1] == ' ') {
      while (i + 1 < r.out.size() && r.out[i + 1] == ' ') ++i;
      squeezed += "  ";
      continue;
    }
    squeezed += r.out[i];
  }
  EXPECT_NE(squeezed.find(expected), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("long_mha: "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace decode_bench::sweeps
