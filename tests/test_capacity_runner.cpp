// The sweep's capacity runner host-side: the paper preset's capacity experiment through the
// driver gives the seed paper's Figure 5 exactly, the point JSON is what results readers and the
// Figure 5 plot expect, and a bad parameter is an error that names it. On a machine with a GPU
// the same tests run the device arenas too; the counts must not change.
#include <cmath>
#include <filesystem>

#include <unistd.h>

#include <gtest/gtest.h>

#include "harness/device_query.hpp"
#include "harness/results_schema.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/builtin_runners.hpp"
#include "sweeps/capacity_runner.hpp"
#include "sweeps/driver.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class CapacityRunnerTest : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() /
                 ("decode_bench_capacity_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  RunnerRegistry registry;

  void SetUp() override {
    fs::create_directories(dir);
    register_builtin_runners(registry);  // the CLI's registration, not a test-only one
  }
  void TearDown() override { fs::remove_all(dir); }

  // The driver end to end with host hooks (no device memory check, no GPU needed).
  json sweep(const Plan& plan) {
    SweepOptions o;
    o.output = dir / "r.json";
    o.argv = {"decode-bench", "sweep"};
    o.preset_label = plan.preset.name;
    const SweepOutcome out = run_sweep(plan, registry, host_default_hooks(), o);
    EXPECT_TRUE(out.complete);
    EXPECT_EQ(out.failed, 0u);
    return read_results(o.output);  // what was written validates against the results schema
  }

  static std::string expected_backend() { return device_unavailable_reason(0) ? "accounting" : "device"; }
};

// Seed paper, Fig. 5, from configs/paper.json: FP32, 1 KV head, d = 128, 4 GiB, T = 512, so
// 512 KiB of K+V per sequence. Contiguous slabs of max_seq_len = 512 * fragmentation hold
// 8192 / fragmentation; paged (page 16) holds 4 GiB / 512 KiB = 8192 whatever the fragmentation.
TEST_F(CapacityRunnerTest, PaperPresetGivesFigure5Exactly) {
  PlanRequest request;
  request.preset_document = load_preset_document("paper");
  request.experiments = {"capacity"};
  const json doc = sweep(make_plan(request));

  struct Want {
    std::string layout;
    double fragmentation;
    std::int64_t max_seq_len, sequences;
    const char* stopped_by;
  };
  const Want want[] = {{"contiguous", 1, 512, 8192, "OutOfSlots"},   {"contiguous", 2, 1024, 4096, "OutOfSlots"},
                       {"contiguous", 4, 2048, 2048, "OutOfSlots"},  {"contiguous", 8, 4096, 1024, "OutOfSlots"},
                       {"paged", 1, 512, 8192, "OutOfPages"},        {"paged", 2, 1024, 8192, "OutOfPages"},
                       {"paged", 4, 2048, 8192, "OutOfPages"},       {"paged", 8, 4096, 8192, "OutOfPages"}};
  const json& points = doc["points"];
  ASSERT_EQ(points.size(), std::size(want)) << points.dump(1);
  for (std::size_t i = 0; i < std::size(want); ++i) {
    const json& pt = points[i];
    const json& p = pt["parameters"];
    const json& c = pt["capacity"];
    SCOPED_TRACE(pt.dump());
    EXPECT_EQ(pt["status"], "ok");
    EXPECT_FALSE(pt.contains("timing"));
    EXPECT_FALSE(pt.contains("verification"));
    // The preset's own shape: the seed's FP32, not the axis default fp16.
    EXPECT_EQ(p["dtype"], "fp32");
    EXPECT_EQ(p["heads_kv"], 1);
    EXPECT_EQ(p["head_dim"], 128);
    EXPECT_EQ(p["T"], 512);
    EXPECT_EQ(p["budget_bytes"], std::uint64_t{4} << 30);
    EXPECT_EQ(p["layout"], want[i].layout);
    EXPECT_EQ(p["fragmentation"], want[i].fragmentation);
    if (want[i].layout == "paged") {
      EXPECT_EQ(p["page_size"], 16);
    }
    EXPECT_EQ(p["max_seq_len"], want[i].max_seq_len);  // where fig5_capacity reads it
    EXPECT_EQ(c["sequences"], want[i].sequences);
    EXPECT_EQ(c["bytes_reserved"], std::uint64_t{4} << 30);
    EXPECT_EQ(c["bytes_used"], static_cast<std::uint64_t>(want[i].sequences) * 512 * 128 * 4 * 2);
    // Contiguous reserves max_seq_len per slot; paged reserves whole 16-token pages, none unused.
    const double reserved_per_sequence = want[i].layout == "contiguous" ? want[i].max_seq_len : 512.0;
    EXPECT_DOUBLE_EQ(c["fragmentation"].get<double>(), 1.0 - 512.0 / reserved_per_sequence);
    EXPECT_DOUBLE_EQ(c["mean_length"].get<double>(), 512.0);
    EXPECT_EQ(c["lengths"], "fixed:512");
    EXPECT_EQ(c["backend"], expected_backend());
    EXPECT_NE(c["stopped_by"].get<std::string>().find(want[i].stopped_by), std::string::npos);
  }
  EXPECT_EQ(doc["meta"]["sweep"]["status_counts"]["ok"], 8);
}

// Lengths and a shared prefix map as docs/results.md says; the closed forms come from
// tests/test_capacity.cpp (SharedPrefixClosedForms).
TEST_F(CapacityRunnerTest, PrefixAndLengthDistributionsMapToTheQuery) {
  const json preset = {
      {"schema_version", 1},
      {"name", "t"},
      {"common", {{"kernel", "capacity"}, {"dtype", "fp32"}, {"budget_bytes", std::uint64_t{4} << 30}}},
      {"experiments",
       {{{"name", "prefix"},
         {"common", {{"prefix_len", 384}, {"suffix_len", 128}}},
         {"axes", {{"layout", {"contiguous", "paged"}}}}},
        {{"name", "uniform"},
         {"common", {{"T", 256}, {"fragmentation", 4}, {"length_dist", "uniform"}, {"budget_bytes", 1 << 30}}},
         {"axes", {{"layout", "contiguous"}}}}}}};
  const json doc = sweep(testing::plan_of(preset));
  const json& pts = doc["points"];
  ASSERT_EQ(pts.size(), 3u) << pts.dump(1);
  // T = 384 + 128; contiguous admits each sequence whole (nothing to share): 4 GiB / 512 KiB.
  EXPECT_EQ(pts[0]["parameters"]["T"], 512);
  EXPECT_EQ(pts[0]["capacity"]["sequences"], 8192);
  // Paged forks the prefix: 24 shared pages once, 8 pages per sequence.
  EXPECT_EQ(pts[1]["capacity"]["sequences"], (262144 - 24) / 8);
  EXPECT_DOUBLE_EQ(pts[1]["capacity"]["mean_length"].get<double>(), 512.0);
  EXPECT_LT(pts[1]["capacity"]["stored_tokens"].get<double>(), pts[1]["capacity"]["logical_tokens"].get<double>());
  // Uniform on [1, 511] (mean 256) in slabs of 1024: 1 GiB / 1 MiB, nothing clamped.
  const json& u = pts[2]["capacity"];
  EXPECT_EQ(pts[2]["parameters"]["max_seq_len"], 1024);
  EXPECT_EQ(u["sequences"], 1024);
  EXPECT_EQ(u["lengths"], "uniform:1..511");
  EXPECT_NEAR(u["mean_length"].get<double>(), 256.0, 256.0 * 0.1);
}

// Axis validation stops bad values in presets; a point built another way (a hand-written
// plan, a future axis range) still fails with the key and value in the reason.
TEST_F(CapacityRunnerTest, BadParametersAreErrorsThatNameThem) {
  const json good = {{"kernel", "capacity"}, {"layout", "contiguous"}, {"dtype", "fp32"},
                     {"T", 512},             {"budget_bytes", 1 << 20}, {"fragmentation", 1.0}};
  const std::pair<json, std::string> cases[] = {
      {{{"budget_bytes", 0}}, "budget_bytes 0: must be >= 1"},
      {{{"T", 0}}, "T 0: must be in [1, 2147483647]"},
      {{{"layout", "diagonal"}}, "layout \"diagonal\": expected contiguous or paged"},
      {{{"dtype", "fp8"}}, "dtype \"fp8\": expected fp32, fp16, bf16, fp8_e4m3 or fp8_e5m2"},
      {{{"fragmentation", 0.5}}, "fragmentation 0.5: must be >= 1"},
      {{{"prefix_len", 512}}, "prefix_len 512: must be below T 512"},
      {{{"page_size", 0}}, "page_size 0: must be in [1, 2147483647]"},
      {{{"budget_bytes", "4GiB"}}, "budget_bytes \"4GiB\": must be an integer"},
  };
  Plan plan;
  plan.preset.name = "hand-written";
  for (const auto& [change, _] : cases) {
    Point p;
    p.experiment = "bad";
    p.parameters = good;
    p.parameters.update(change);
    p.id = "bad/" + change.dump();
    p.index = plan.points.size();
    plan.points.push_back(p);
  }
  SweepOptions o;
  o.output = dir / "r.json";
  const json doc = run_sweep(plan, registry, host_default_hooks(), o).document;
  ASSERT_EQ(doc["points"].size(), std::size(cases));
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const json& pt = doc["points"][i];
    EXPECT_EQ(pt["status"], "error") << pt.dump();
    EXPECT_NE(pt.value("reason", "").find(cases[i].second), std::string::npos)
        << "want '" << cases[i].second << "' in: " << pt.value("reason", "");
  }
  // The unchanged point runs: 1 MiB / 512 KiB.
  Point ok{"good", good, "good", 0};
  RunContext ctx;
  EXPECT_EQ(registry.find("capacity")->run(ok, ctx)["capacity"]["sequences"], 2);
}

}  // namespace
}  // namespace decode_bench::sweeps
