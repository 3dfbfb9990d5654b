// Bad presets, overrides and shard specs: every problem reported at once, each naming its path.
#include <gtest/gtest.h>

#include "sweeps/memory_estimate.hpp"

#include "sweep_test_support.hpp"
#include "sweeps/overrides.hpp"
#include "sweeps/point_problems.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using testing::ids_of;
using testing::one_experiment;
using testing::plan_errors;
using testing::plan_of;

// The message reported for `path`, or "<none>"; fails when the path is reported twice.
std::string message_at(const std::vector<ConfigError>& errors, const std::string& path) {
  std::string found = "<none>";
  int n = 0;
  for (const auto& e : errors)
    if (e.path == path) {
      found = e.message;
      ++n;
    }
  EXPECT_LE(n, 1) << path << " reported " << n << " times";
  return found;
}

std::string all(const std::vector<ConfigError>& errors) { return format_config_errors(errors); }

TEST(SweepValidation, EveryClassOfBadInputIsReportedAtOnceWithItsPath) {
  const json preset = {
      {"schema_version", 2},
      {"name", "bad"},
      {"colour", "blue"},
      {"common", {{"T", {1, 2}}, {"head_dim", 64}}},
      {"experiments",
       {{{"name", "a"},
         {"axes", {{"page_size", {16, 0}},
                   {"T", {{"range", {10, 1, 1}}}},
                   {"dtype", {"fp8"}},
                   {"heads_q", "many"},
                   {"batch", 1.5},
                   {"blocks", {"auto", "most"}},
                   {"end_to_end", "yes"},
                   {"kernel", {"my_kernel"}}}}},
        {{"name", "b"},
         {"speed", 3},
         {"axes", {{"warp_size", 32}, {"T", {1, 2, 3}}, {"batch", {1, 2}}, {"fragmentation", {{"pow2", {3}}}}}},
         {"zip", json::array({json::array({"T", "batch"}), json::array({"nope", "T"})})}},
        {{"name", "a"}, {"axes", {{"seed", {{"pow2", {1, 70}}}}}}},
        {{"name", "has/slash"}}}}};
  const auto errors = plan_errors(preset);
  EXPECT_NE(message_at(errors, "schema_version").find("must be 1"), std::string::npos) << all(errors);
  EXPECT_NE(message_at(errors, "colour").find("unknown key"), std::string::npos);
  EXPECT_NE(message_at(errors, "common.T").find("single value"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.page_size[1]").find("integer in [1,"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.T.range").find("never goes"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.dtype[0]").find("\"fp8\""), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.heads_q").find("integer"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.batch").find("integer"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.blocks[1]").find("auto"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.end_to_end").find("true or false"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[0].axes.kernel[0]").find("my_kernel"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[1].speed").find("unknown key"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[1].axes.warp_size").find("unknown axis"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[1].axes.fragmentation.pow2").find("[lo, hi]"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[1].zip[0]").find("equal lengths"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[1].zip[1][0]").find("not an axis"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[1].zip[1][1]").find("already zipped"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[2].name").find("duplicate"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[2].axes.seed.pow2").find("<= 62"), std::string::npos);
  EXPECT_NE(message_at(errors, "experiments[3].name").find("letters, digits"), std::string::npos);
  EXPECT_EQ(errors.size(), 20u) << all(errors);  // nothing else, nothing twice
}

// A value generator object names exactly one known generator: an unknown one is reported at its
// own key, two keys at the axis; a good one beside them still expands.
TEST(SweepValidation, ValueGeneratorsOfUnknownNameOrTwoKeysAreRefused) {
  const json preset = {
      {"schema_version", 1},
      {"name", "generators"},
      {"experiments",
       {{{"name", "a"}, {"axes", {{"T", {{"linspace", {1, 8}}}}, {"batch", {{"range", {1, 2}}}}}}},
        {{"name", "b"}, {"axes", {{"T", {{"range", {1, 2}}, {"pow2", {1, 2}}}}}}}}}};
  const auto errors = plan_errors(preset);
  EXPECT_NE(message_at(errors, "experiments[0].axes.T.linspace").find("unknown value generator 'linspace'"),
            std::string::npos)
      << all(errors);
  EXPECT_NE(message_at(errors, "experiments[1].axes.T").find("exactly one key"), std::string::npos) << all(errors);
  EXPECT_EQ(errors.size(), 2u) << all(errors);  // batch's range expands without error
}

TEST(SweepValidation, MissingRequiredFields) {
  const auto errors = plan_errors(json{{"name", "x"}});
  EXPECT_NE(message_at(errors, "schema_version"), "<none>");
  EXPECT_NE(message_at(errors, "experiments"), "<none>");
  EXPECT_NE(message_at(plan_errors(json::array()), "$"), "<none>");
  EXPECT_NE(message_at(plan_errors(json{{"schema_version", 1}, {"name", "x"}, {"experiments", json::array()}}),
                       "experiments"),
            "<none>");
}

TEST(SweepValidation, CrossAxisChecksNameTheOffendingValue) {
  const auto errors = plan_errors(one_experiment({{"heads_kv", {8, 3}}}, {{"heads_q", 32}}));
  ASSERT_EQ(errors.size(), 1u) << all(errors);
  EXPECT_EQ(errors[0].path, "experiments[0].axes.heads_kv[1]");
  EXPECT_NE(errors[0].message.find("heads_q 32 is not a multiple of heads_kv 3"), std::string::npos);
}

// Errors of a plan of the selected experiments only (empty: all).
std::vector<ConfigError> errors_of_selected(const json& preset, std::vector<std::string> overrides,
                                            std::vector<std::string> experiments) {
  PlanRequest r;
  r.preset_document = preset;
  r.overrides = std::move(overrides);
  r.experiments = std::move(experiments);
  try {
    make_plan(r);
  } catch (const ConfigErrors& e) {
    return e.errors();
  }
  return {};
}

// One bad override fails every point that combines it: one error per distinct problem, with the
// number of points and the experiments, and none for an experiment that is not selected.
TEST(SweepValidation, OneBadOverrideIsOneErrorPerDistinctProblem) {
  const json preset = {{"schema_version", 1},
                       {"name", "t"},
                       {"common", {{"heads_q", 32}}},
                       {"experiments",
                        {{{"name", "a"}, {"axes", {{"T", {1, 2, 3}}}}},
                         {{"name", "b"}, {"axes", {{"T", {4, 5}}}}},
                         {{"name", "c"}, {"common", {{"heads_q", 8}}}, {"axes", {{"T", {6, 7}}}}},
                         {{"name", "d"}, {"common", {{"heads_q", 10}}}}}}};
  const std::string a1 = "a/kernel=flash_decode/layout=contiguous/dtype=fp16/heads_q=32/heads_kv=5/T=1";
  const std::string c6 = "c/kernel=flash_decode/layout=contiguous/dtype=fp16/heads_q=8/heads_kv=5/T=6";
  const auto errors = errors_of_selected(preset, {"heads_kv=5"}, {});
  ASSERT_EQ(errors.size(), 2u) << all(errors);  // d: 10 is a multiple of 5
  EXPECT_EQ(errors[0].path, "--set heads_kv[0]");
  EXPECT_EQ(errors[0].message, "heads_q 32 is not a multiple of heads_kv 5 (5 points of experiments a, b; the first: " + a1 + ")");
  EXPECT_EQ(errors[1].path, "--set heads_kv[0]");
  EXPECT_EQ(errors[1].message, "heads_q 8 is not a multiple of heads_kv 5 (2 points of experiment c; the first: " + c6 + ")");

  const auto only_c = errors_of_selected(preset, {"heads_kv=5"}, {"c"});
  ASSERT_EQ(only_c.size(), 1u) << all(only_c);
  EXPECT_EQ(only_c[0].message, errors[1].message);
  EXPECT_TRUE(errors_of_selected(preset, {"heads_kv=5"}, {"d"}).empty());
  const auto b_and_d = errors_of_selected(preset, {"heads_kv=5"}, {"b", "d"});
  ASSERT_EQ(b_and_d.size(), 1u) << all(b_and_d);
  EXPECT_NE(b_and_d[0].message.find("(2 points of experiment b; the first: b/"), std::string::npos) << b_and_d[0].message;
}

// Many distinct problems: the first PointProblems::kMaxReported, then one line counting the rest.
TEST(SweepValidation, DistinctProblemsPastTheLimitAreCounted) {
  const std::size_t n = PointProblems::kMaxReported + 3;
  PointProblems problems;
  for (std::size_t k = 0; k < n; ++k)
    for (int copy = 0; copy < 2; ++copy)
      problems.add("p" + std::to_string(k), "m", "e", "e/" + std::to_string(k) + "/" + std::to_string(copy), " d");
  std::vector<ConfigError> errors;
  problems.report(errors);
  ASSERT_EQ(errors.size(), PointProblems::kMaxReported + 1);
  EXPECT_EQ(errors[0].path, "p0");
  EXPECT_EQ(errors[0].message, "m (2 points of experiment e; the first: e/0/0 d)");
  EXPECT_EQ(errors.back().path, "experiments");
  EXPECT_EQ(errors.back().message, "... and 3 more problems like the above, of 6 points");
  PointProblems one;
  one.add("p", "m", "e", "e/x", " d");
  errors.clear();
  one.report(errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].message, "m (point e/x d)");
}

TEST(SweepValidation, MoreGroupsThanSequencesAreRejected) {
  const auto errors = plan_errors(one_experiment({{"groups", {2, 9}}},
                                                 {{"batch", 8}, {"prefix_len", 64}, {"group_prefix_len", 32}}));
  ASSERT_EQ(errors.size(), 1u) << all(errors);
  EXPECT_EQ(errors[0].path, "experiments[0].axes.groups[1]");
  EXPECT_NE(errors[0].message.find("groups 9 exceeds batch 8"), std::string::npos) << errors[0].message;
}

// Shared-prefix points: the prefix pages once, then per sequence its own pages from the last fully
// shared page on (the copied partial page included), as pools/shared_prefix_batch.hpp builds them.
TEST(SweepMemoryEstimate, SharedPrefixCountsThePrefixOnce) {
  json p = {{"kernel", "batch_decode"}, {"layout", "paged"}, {"dtype", "fp16"}, {"heads_q", 2}, {"heads_kv", 2},
            {"head_dim", 4}, {"batch", 4}, {"prefix_len", 40}, {"suffix_len", 7}, {"T", 47}, {"page_size", 16}};
  // pages: ceil(40/16) = 3 for the prefix, 4 x (ceil(47/16) - 40/16) = 4 own; 16 tokens x 32 B each.
  const std::uint64_t kv = 7 * 16 * 32, tables = 4 * (4 * 3 + 4 + 1), q_and_o = 2 * 4 * 2 * 4 * 4;
  EXPECT_EQ(estimate_device_bytes(p), kv + tables + q_and_o);
  p["kernel"] = "shared_prefix";  // plus the level states: 2 x N x H_q x (D + 1) floats
  EXPECT_EQ(estimate_device_bytes(p), kv + tables + q_and_o + 2 * 4 * 2 * 5 * 4);
  // The cascade preset's largest point (1024 x (32K + 1K), 32 heads, d = 128) fits an 80 GB GPU.
  const json big = {{"kernel", "shared_prefix"}, {"layout", "paged"}, {"dtype", "fp16"}, {"heads_q", 32},
                    {"heads_kv", 32}, {"head_dim", 128}, {"batch", 1024}, {"prefix_len", 32768},
                    {"suffix_len", 1024}, {"T", 33792}, {"page_size", 16}};
  // K/V: 2048 prefix pages + 1024 x 64 own pages of 16 tokens x 16 KiB; block tables (8.6 MB), q and o
  // (33.5 MB) and the level states (33.8 MB) add 76 MB.
  const std::uint64_t big_kv = 67584ull * 16 * 16384;
  EXPECT_GT(estimate_device_bytes(big), big_kv);
  EXPECT_LT(estimate_device_bytes(big), big_kv + 80000000);
}

TEST(SweepValidation, PointsNeedingMoreThanTheDeviceHasAreRejected) {
  ValidationContext ctx;
  ctx.device_memory_bytes = std::uint64_t{1} << 30;  // 1 GiB
  // fp32, 1 head, d=128: 1 KiB of K+V per token; 2^19 tokens fit (512 MiB), 2^21 (2 GiB) does not.
  const json preset = one_experiment({{"T", {{"pow2", {19, 21, 2}}}}}, {{"dtype", "fp32"}});
  const auto errors = plan_errors(preset, {}, ctx);
  ASSERT_EQ(errors.size(), 1u) << all(errors);
  EXPECT_EQ(errors[0].path, "experiments[0].axes.T.pow2");
  EXPECT_NE(errors[0].message.find("2.00 GiB"), std::string::npos) << errors[0].message;
  EXPECT_TRUE(plan_errors(preset).empty());  // unknown device memory: no check
  // Fragmentation multiplies a contiguous slab.
  const auto frag = plan_errors(one_experiment({{"fragmentation", {1, 4}}}, {{"T", 1 << 19}, {"dtype", "fp32"}}), {}, ctx);
  ASSERT_EQ(frag.size(), 1u) << all(frag);
  EXPECT_EQ(frag[0].path, "common.T");
}

TEST(SweepValidation, RegisteredKernelsAreAccepted) {
  const json preset = one_experiment({{"kernel", {"flash_decode", "my_kernel"}}});
  EXPECT_EQ(plan_errors(preset).size(), 1u);
  ValidationContext ctx;
  ctx.registered_kernels = {"my_kernel"};
  EXPECT_EQ(plan_of(preset, {}, ctx).points.size(), 2u);
}

TEST(SweepOverrides, ReplaceAxesEverywhereWithEverySyntax) {
  json preset = one_experiment({{"T", {1, 2}}, {"dtype", {"fp32", "bf16"}}});
  preset["experiments"].push_back({{"name", "f"}, {"common", {{"T", 9}}}});
  const Plan plan = plan_of(preset, {"T=pow2:12..13", "dtype=fp16"});
  EXPECT_EQ(ids_of(plan.points), (std::vector<std::string>{
                                     "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=4096",
                                     "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=8192",
                                     "f/kernel=flash_decode/layout=contiguous/dtype=fp16/T=4096",
                                     "f/kernel=flash_decode/layout=contiguous/dtype=fp16/T=8192"}));
  auto Ts = [](const Plan& p) {
    std::vector<json> v;
    for (const auto& pt : p.points) v.push_back(pt.parameters["T"]);
    return v;
  };
  EXPECT_EQ(Ts(plan_of(one_experiment({{"T", 5}}), {"T=1,16..48:16,pow2:7..9:2"})),
            (std::vector<json>{1, 16, 32, 48, 128, 512}));
  EXPECT_EQ(Ts(plan_of(one_experiment({{"T", 5}}), {"T=[3,{\"pow2\":[2,3]}]"})), (std::vector<json>{3, 4, 8}));
  EXPECT_EQ(Ts(plan_of(one_experiment({{"T", 5}}), {"T=5..1:-2"})), (std::vector<json>{5, 3, 1}));
  // Booleans, floats and "auto" are typed by the axis.
  const Point p = plan_of(one_experiment(json::object()), {"end_to_end=true", "fragmentation=2.5", "blocks=auto"}).points.at(0);
  EXPECT_EQ(p.parameters["end_to_end"], true);
  EXPECT_EQ(p.parameters["fragmentation"], 2.5);
}

TEST(SweepOverrides, ScopedToOneExperimentAndLeavingZipGroups) {
  json preset = one_experiment({{"batch", {1, 2}}, {"T", {10, 20}}});
  preset["experiments"][0]["zip"] = json::array({json::array({"batch", "T"})});
  preset["experiments"].push_back({{"name", "f"}, {"axes", {{"T", {7}}}}});
  const Plan plan = plan_of(preset, {"e.T=30,40,50"});
  // e: batch x T is now cartesian (2 x 3); f keeps T=7.
  ASSERT_EQ(plan.points.size(), 7u);
  EXPECT_EQ(plan.points[6].parameters["T"], 7);
  EXPECT_EQ(plan.points[3].parameters["batch"], 2);
  EXPECT_EQ(plan.points[3].parameters["T"], 30);
}

TEST(SweepOverrides, BadOverridesAreReportedTogetherWithTheirOption) {
  const auto errors = plan_errors(one_experiment({{"T", 5}}),
                                  {"T", "nosuch=1", "page_size=0", "heads_q=abc", "T=pow2:x..3", "g.T=1",
                                   "T=[1,", "dtype="});
  EXPECT_NE(message_at(errors, "--set nosuch").find("unknown axis"), std::string::npos);
  EXPECT_NE(message_at(errors, "--set page_size[0]").find("integer in [1,"), std::string::npos);
  EXPECT_NE(message_at(errors, "--set heads_q[0]").find("\"abc\""), std::string::npos);
  EXPECT_NE(message_at(errors, "--set g.T").find("no experiment named 'g'"), std::string::npos);
  EXPECT_NE(message_at(errors, "--set dtype").find("no values"), std::string::npos);
  // "T" without '=' and "T=pow2:x..3" and "T=[1," all land on --set T: one message each.
  std::string on_T;
  for (const auto& e : errors)
    if (e.path == "--set T") on_T += e.message + "\n";
  EXPECT_NE(on_T.find("KEY=VALUES"), std::string::npos) << all(errors);
  EXPECT_NE(on_T.find("pow2:A..B"), std::string::npos) << all(errors);
  EXPECT_NE(on_T.find("not valid JSON"), std::string::npos) << all(errors);
  EXPECT_EQ(errors.size(), 8u) << all(errors);
}

TEST(SweepShards, CoverEveryPointExactlyOnce) {
  const Plan plan = plan_of(one_experiment({{"T", {{"range", {1, 23}}}}, {"dtype", {"fp16", "fp32"}}}));
  ASSERT_EQ(plan.points.size(), 46u);
  for (std::size_t n = 1; n <= 7; ++n) {
    std::vector<int> seen(plan.points.size(), 0);
    for (std::size_t i = 0; i < n; ++i)
      for (const Point& p : shard_points(plan.points, Shard{i, n})) ++seen[p.index];
    for (std::size_t k = 0; k < seen.size(); ++k) EXPECT_EQ(seen[k], 1) << "n=" << n << " point " << k;
  }
}

TEST(SweepShards, ParseAndReject) {
  const Shard s = parse_shard("2/5");
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.count, 5u);
  for (const char* bad : {"5/5", "1", "a/b", "1/0", "-1/3", "1/3x", "/3"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << bad << " accepted";
    } catch (const ConfigErrors& e) {
      EXPECT_EQ(e.errors().at(0).path, "--shard");
    }
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
