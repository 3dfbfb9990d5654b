// Host side of the fast sweep paths: the --verify / --fill / --no-counters options, the counters
// axis, the value generator's range and independence of layout, and the phase summary text.
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/dtype.hpp"
#include "kernels/kv_generator.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/config_error.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/phase_summary.hpp"
#include "sweeps/run_paths.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

TEST(RunPaths, DefaultsAreTheDevicePathsWithCounters) {
  RunContext ctx;
  std::vector<std::string> overrides;
  apply_run_paths({}, ctx, overrides);
  EXPECT_FALSE(ctx.verify_on_host);
  EXPECT_FALSE(ctx.fill_on_host);
  EXPECT_TRUE(overrides.empty());
}

TEST(RunPaths, OldPathsAndNoCountersAreSelectable) {
  RunContext ctx;
  std::vector<std::string> overrides = {"timing=hot"};
  apply_run_paths({.verify = "cpu", .fill = "host", .no_counters = true}, ctx, overrides);
  EXPECT_TRUE(ctx.verify_on_host);
  EXPECT_TRUE(ctx.fill_on_host);
  EXPECT_EQ(overrides, (std::vector<std::string>{"timing=hot", "counters=false"}));
}

TEST(RunPaths, BadValuesNameTheOption) {
  RunContext ctx;
  std::vector<std::string> overrides;
  for (const auto& [opts, flag] : std::vector<std::pair<RunPathOptions, std::string>>{
           {{.verify = "GPU"}, "--verify"}, {{.verify = ""}, "--verify"}, {{.fill = "gpu"}, "--fill"}}) {
    try {
      apply_run_paths(opts, ctx, overrides);
      ADD_FAILURE() << "accepted " << opts.verify << " / " << opts.fill;
    } catch (const ConfigErrors& e) {
      ASSERT_EQ(e.errors().size(), 1u);
      EXPECT_EQ(e.errors()[0].path, flag);
    }
  }
}

TEST(RunPaths, CountersAxisReachesThePointAndRejectsNonBooleans) {
  const json preset = testing::one_experiment({{"T", {64}}});
  EXPECT_TRUE(parse_decode_point(testing::plan_of(preset).points.at(0).parameters).counters);
  EXPECT_FALSE(parse_decode_point(testing::plan_of(preset, {"counters=false"}).points.at(0).parameters).counters);
  json off = preset;
  off["common"] = {{"counters", false}};
  EXPECT_FALSE(parse_decode_point(testing::plan_of(off).points.at(0).parameters).counters);
  json bad = preset;
  bad["common"] = {{"counters", "no"}};
  EXPECT_THROW(testing::plan_of(bad), ConfigErrors);
}

TEST(KvGenerator, ValuesAreInRangeNonZeroInEveryStorageTypeAndSpread) {
  std::set<float> distinct;
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const float x = generated_value(generated_row_key(7, GeneratedTensor::k, i % 3, i % 5, i / 15), i % 128);
    ASSERT_TRUE(x >= -1.0f && x < 1.0f && x != 0.0f) << x;
    ASSERT_NE(to_double(from_float<__half>(x)), 0.0);
    ASSERT_LT(std::abs(to_double(from_float<__half>(x))), 1.0);
    ASSERT_LT(std::abs(to_double(from_float<__nv_bfloat16>(x))), 1.0);
    ASSERT_NE(to_double(from_float<__nv_bfloat16>(x)), 0.0);
    distinct.insert(x);
    sum += x;
  }
  // 2^23 equally likely values: n draws repeat about n^2 / 2^24 = 2400 times (birthday bound).
  EXPECT_GT(distinct.size(), static_cast<std::size_t>(n - 3000)) << "values repeat too often";
  EXPECT_LT(distinct.size(), static_cast<std::size_t>(n - 1800)) << "fewer repeats than 2^23 values allow";
  EXPECT_LT(std::abs(sum / n), 0.01) << "mean of uniform (-0.99, 0.99) values";
  // The extremes of the mapping stay inside (-1, 1) after rounding to each type.
  for (std::uint64_t u : {std::uint64_t{0}, (std::uint64_t{1} << 23) - 1}) {
    const float x = (static_cast<float>(2 * u + 1) * 0x1.0p-23f - 1.0f) * 0.99f;
    EXPECT_LT(std::abs(to_double(from_float<__nv_bfloat16>(x))), 1.0);
    EXPECT_LT(std::abs(to_double(from_float<__half>(x))), 1.0);
  }
}

TEST(KvGenerator, EveryCoordinateChangesTheValueAndKDiffersFromV) {
  const auto at = [](std::uint64_t seed, GeneratedTensor t, int s, int h, std::int64_t tok, int i) {
    return generated_value(generated_row_key(seed, t, s, h, tok), i);
  };
  const float base = at(1, GeneratedTensor::k, 2, 3, 4, 5);
  EXPECT_EQ(base, at(1, GeneratedTensor::k, 2, 3, 4, 5));
  EXPECT_NE(base, at(2, GeneratedTensor::k, 2, 3, 4, 5));
  EXPECT_NE(base, at(1, GeneratedTensor::v, 2, 3, 4, 5));
  EXPECT_NE(base, at(1, GeneratedTensor::k, 3, 3, 4, 5));
  EXPECT_NE(base, at(1, GeneratedTensor::k, 2, 4, 4, 5));
  EXPECT_NE(base, at(1, GeneratedTensor::k, 2, 3, 5, 5));
  EXPECT_NE(base, at(1, GeneratedTensor::k, 2, 3, 4, 6));
}

// The host fill writes (H_kv, len, D) in order of the generator's coordinates, and a sequence's
// values do not depend on its length (a longer twin starts with the same tokens).
TEST(KvGenerator, HostFillFollowsTheAdmitLayout) {
  const int heads = 2, dim = 3;
  std::vector<float> k(heads * 4 * dim), k_long(heads * 6 * dim);
  fill_kv_host<float>(k, false, 9, 1, heads, 4, dim);
  fill_kv_host<float>(k_long, false, 9, 1, heads, 6, dim);
  for (int h = 0; h < heads; ++h)
    for (int t = 0; t < 4; ++t)
      for (int i = 0; i < dim; ++i) {
        const float want = generated_value(generated_row_key(kv_seed(9), GeneratedTensor::k, 1, h, t), i);
        EXPECT_EQ(k[(h * 4 + t) * dim + i], want);
        EXPECT_EQ(k_long[(h * 6 + t) * dim + i], want);
      }
}

TEST(PhaseSummary, ListsPhasesLargestFirstWithTheTimeOutsidePoints) {
  const std::string s = phase_summary({{"timing", 2.0}, {"counters", 5.0}, {"other", 1.0}}, 10.0, 0.5);
  EXPECT_NE(s.find("wall 10.0 s, measured 0.50 s"), std::string::npos) << s;
  const auto counters = s.find("counters"), timing = s.find("timing"), outside = s.find("outside points"),
             other = s.find("other");
  ASSERT_NE(outside, std::string::npos) << s;
  EXPECT_LT(counters, timing);  // 5 s before 2 s and the 2 s outside points (10 - 8)
  EXPECT_LT(outside, other);
  EXPECT_NE(s.find("50.0%"), std::string::npos) << s;
}

}  // namespace
}  // namespace decode_bench::sweeps
