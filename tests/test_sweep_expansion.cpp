// Preset expansion: every value form and combination rule against hand-computed lists.
#include <fstream>
#include <iterator>
#include <set>

#include <gtest/gtest.h>

#include "sweep_test_support.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/expand.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using testing::ids_of;
using testing::one_experiment;
using testing::plan_of;

std::vector<json> values_of(const std::vector<Point>& points, const std::string& key) {
  std::vector<json> out;
  for (const auto& p : points) out.push_back(p.parameters.contains(key) ? p.parameters[key] : json());
  return out;
}

TEST(SweepExpansion, CartesianProductFollowsTheAxisTableOrder) {
  // T is listed before kernel in the JSON, but the table puts kernel first: kernel varies slowest.
  const Plan plan = plan_of(one_experiment({{"T", {1, 2, 3}}, {"kernel", {"baseline", "flash_decode"}}}));
  EXPECT_EQ(ids_of(plan.points), (std::vector<std::string>{
                                     "e/kernel=baseline/layout=contiguous/dtype=fp16/T=1",
                                     "e/kernel=baseline/layout=contiguous/dtype=fp16/T=2",
                                     "e/kernel=baseline/layout=contiguous/dtype=fp16/T=3",
                                     "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=1",
                                     "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=2",
                                     "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=3"}));
  for (std::size_t i = 0; i < plan.points.size(); ++i) EXPECT_EQ(plan.points[i].index, i);
  EXPECT_EQ(plan.total_points, 6u);
}

TEST(SweepExpansion, RangesIncludeTheirStop) {
  EXPECT_EQ(values_of(plan_of(one_experiment({{"T", {{"range", {16, 64, 16}}}}})).points, "T"),
            (std::vector<json>{16, 32, 48, 64}));
  EXPECT_EQ(values_of(plan_of(one_experiment({{"T", {{"range", {1, 3}}}}})).points, "T"),
            (std::vector<json>{1, 2, 3}));
  EXPECT_EQ(values_of(plan_of(one_experiment({{"T", {{"range", {10, 4, -3}}}}})).points, "T"),
            (std::vector<json>{10, 7, 4}));
  EXPECT_EQ(values_of(plan_of(one_experiment({{"fragmentation", {{"range", {1, 2, 0.5}}}}})).points, "fragmentation"),
            (std::vector<json>{1.0, 1.5, 2.0}));
}

TEST(SweepExpansion, PowersOfTwoIncludeBothEnds) {
  EXPECT_EQ(values_of(plan_of(one_experiment({{"T", {{"pow2", {12, 14}}}}})).points, "T"),
            (std::vector<json>{4096, 8192, 16384}));
  EXPECT_EQ(values_of(plan_of(one_experiment({{"T", {{"pow2", {4, 10, 2}}}}})).points, "T"),
            (std::vector<json>{16, 64, 256, 1024}));
  // Generators mix with plain values inside a list.
  EXPECT_EQ(values_of(plan_of(one_experiment({{"T", json::array({100, {{"pow2", {13, 14}}}})}})).points, "T"),
            (std::vector<json>{100, 8192, 16384}));
}

TEST(SweepExpansion, ZippedAxesAdvanceTogether) {
  json preset = one_experiment({{"batch", {1, 2, 3}}, {"T", {10, 20, 30}}, {"dtype", {"fp16", "fp32"}}});
  preset["experiments"][0]["zip"] = json::array({json::array({"batch", "T"})});
  const Plan plan = plan_of(preset);
  ASSERT_EQ(plan.points.size(), 6u);  // 2 dtypes x 3 pairs, not 2 x 3 x 3
  std::vector<std::pair<int, int>> pairs;
  for (const auto& p : plan.points) pairs.emplace_back(p.parameters["batch"], p.parameters["T"]);
  EXPECT_EQ(pairs, (std::vector<std::pair<int, int>>{{1, 10}, {2, 20}, {3, 30}, {1, 10}, {2, 20}, {3, 30}}));
  EXPECT_EQ(values_of(plan.points, "dtype"),
            (std::vector<json>{"fp16", "fp16", "fp16", "fp32", "fp32", "fp32"}));
}

TEST(SweepExpansion, ParametersAreCompleteWithDefaultsAndLayers) {
  json preset = one_experiment({{"T", {7}}}, {{"heads_q", 8}, {"heads_kv", 2}});
  preset["experiments"][0]["common"] = {{"heads_kv", 4}};  // experiment common beats preset common
  const Point p = plan_of(preset).points.at(0);
  EXPECT_EQ(p.parameters["heads_q"], 8);
  EXPECT_EQ(p.parameters["heads_kv"], 4);
  EXPECT_EQ(p.parameters["head_dim"], 128);
  EXPECT_EQ(p.parameters["kernel"], "flash_decode");
  EXPECT_EQ(p.parameters["blocks"], "auto");
  EXPECT_EQ(p.id, "e/kernel=flash_decode/layout=contiguous/dtype=fp16/heads_q=8/heads_kv=4/T=7");
}

TEST(SweepExpansion, IrrelevantAxesAreDroppedSoTheyDoNotMultiplyPoints) {
  const Plan plan = plan_of(one_experiment({{"layout", {"contiguous", "paged"}}, {"page_size", {1, 16}},
                                            {"fragmentation", {1, 4}}}));
  EXPECT_EQ(ids_of(plan.points), (std::vector<std::string>{
                                     "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=4096",
                                     "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=4096/fragmentation=4",
                                     "e/kernel=flash_decode/layout=paged/dtype=fp16/T=4096/page_size=1",
                                     "e/kernel=flash_decode/layout=paged/dtype=fp16/T=4096/page_size=16"}));
  EXPECT_FALSE(plan.points[0].parameters.contains("page_size"));
  EXPECT_FALSE(plan.points[2].parameters.contains("fragmentation"));
  // The baseline has no split-K: sweeping blocks over it gives one point.
  EXPECT_EQ(plan_of(one_experiment({{"kernel", "baseline"}, {"blocks", {16, 32}}})).points.size(), 1u);
}

TEST(SweepExpansion, SharedPrefixDerivesT) {
  const Plan plan = plan_of(one_experiment({{"prefix_len", {0, 1000}}, {"suffix_len", {24}}}));
  ASSERT_EQ(plan.points.size(), 2u);
  EXPECT_EQ(plan.points[0].parameters["T"], 4096);
  EXPECT_FALSE(plan.points[0].parameters.contains("suffix_len"));
  EXPECT_EQ(plan.points[1].parameters["T"], 1024);
}

TEST(SweepExpansion, GroupPrefixAddsToTAndGroupsOnlyMatterWithIt) {
  const Plan plan = plan_of(one_experiment({{"prefix_len", {1000}}, {"group_prefix_len", {0, 500}}, {"groups", {2, 3}},
                                            {"suffix_len", {24}}, {"batch", {8}}}));
  // group_prefix_len 0: groups is irrelevant, so its two values give one point.
  ASSERT_EQ(plan.points.size(), 3u);
  EXPECT_EQ(plan.points[0].parameters["T"], 1024);
  EXPECT_FALSE(plan.points[0].parameters.contains("groups"));
  EXPECT_EQ(plan.points[1].parameters["T"], 1524);
  EXPECT_EQ(plan.points[2].parameters["groups"], 3);
  // Without a prefix neither axis is kept; prefix_overlap belongs to kernel shared_prefix only.
  const Plan plain = plan_of(one_experiment({{"group_prefix_len", {0, 500}}, {"prefix_overlap", {true, false}}}));
  ASSERT_EQ(plain.points.size(), 1u);
  EXPECT_FALSE(plain.points[0].parameters.contains("group_prefix_len"));
  EXPECT_FALSE(plain.points[0].parameters.contains("prefix_overlap"));
  const Plan sp = plan_of(one_experiment({{"kernel", "shared_prefix"}, {"layout", "paged"}, {"prefix_len", 64},
                                          {"prefix_overlap", {true, false}}}));
  EXPECT_EQ(sp.points.size(), 2u);
}

TEST(SweepExpansion, NumbersGiveOneIdWhetherWrittenAsIntegerOrFloat) {
  const auto a = plan_of(one_experiment({{"fragmentation", 4}})).points.at(0);
  const auto b = plan_of(one_experiment({{"fragmentation", 4.0}})).points.at(0);
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.parameters, b.parameters);
}

TEST(SweepExpansion, IndicesRunAcrossExperiments) {
  json preset = one_experiment({{"T", {1, 2}}});
  preset["experiments"].push_back({{"name", "f"}, {"axes", {{"T", {3, 4, 5}}}}});
  const Plan plan = plan_of(preset);
  ASSERT_EQ(plan.points.size(), 5u);
  EXPECT_EQ(plan.points[2].experiment, "f");
  EXPECT_EQ(plan.points[4].index, 4u);
}

TEST(SweepExpansion, EveryEmbeddedPresetIsValid) {
  for (const auto& embedded : embedded_presets()) {
    SCOPED_TRACE(std::string(embedded.name));
    std::vector<ConfigError> errors;
    const Preset preset = parse_preset(json::parse(embedded.json), {}, errors);
    const auto points = expand_preset(preset, {}, errors);
    EXPECT_EQ(format_config_errors(errors), "");
    EXPECT_FALSE(points.empty());
    EXPECT_EQ(preset.name, std::string(embedded.name));  // the file stem is the name users type
  }
}

TEST(SweepExpansion, QuickTouchesEveryKernelAndPool) {
  const auto preset = find_embedded_preset("quick");
  ASSERT_TRUE(preset);
  std::set<std::string> kernels, layouts;
  for (const auto& p : plan_of(json::parse(preset->json)).points) {
    kernels.insert(p.parameters["kernel"]);
    layouts.insert(p.parameters["layout"]);
  }
  for (auto k : find_axis("kernel")->allowed) EXPECT_TRUE(kernels.count(std::string(k))) << k;
  for (auto l : find_axis("layout")->allowed) EXPECT_TRUE(layouts.count(std::string(l))) << l;
}

}  // namespace
}  // namespace decode_bench::sweeps

namespace decode_bench::sweeps {
namespace {

// docs/sweeps.md documents the axis table; keep them in step.
TEST(SweepDocs, EveryAxisHasARowInDocsSweeps) {
  std::ifstream in(std::string(DECODE_BENCH_SOURCE_DIR) + "/docs/sweeps.md");
  ASSERT_TRUE(in);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const AxisDef& a : axis_table())
    EXPECT_NE(text.find("| `" + std::string(a.name) + "` |"), std::string::npos) << a.name;
}

}  // namespace
}  // namespace decode_bench::sweeps
