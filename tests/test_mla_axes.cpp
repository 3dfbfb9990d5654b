// The MLA axes in a sweep: attention = mla takes kv_lora_rank and rope_dim, drops heads_kv and
// head_dim from its points, refuses them by name when given, and runs as MLA decode points
// (tests/test_mla_sweep.cpp) or capacity points, whose latent row the capacity point counts.
#include <gtest/gtest.h>

#include "sweep_test_support.hpp"
#include "sweeps/capacity_point.hpp"
#include "sweeps/point_problems.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using testing::one_experiment;
using testing::plan_errors;
using testing::plan_of;

std::string all(const std::vector<ConfigError>& errors) { return format_config_errors(errors); }

TEST(MlaAxes, MlaPointsCarryTheLatentAxesAndNotTheKvHeadOnes) {
  const json preset = one_experiment({{"heads_q", {16, 128}}},
                                     {{"attention", "mla"}, {"kernel", "capacity"}, {"dtype", "bf16"}});
  const Plan plan = plan_of(preset);
  ASSERT_EQ(plan.points.size(), 2u);
  for (const auto& p : plan.points) {
    EXPECT_EQ(p.parameters["kv_lora_rank"], 512);
    EXPECT_EQ(p.parameters["rope_dim"], 64);
    EXPECT_FALSE(p.parameters.contains("heads_kv")) << p.id;
    EXPECT_FALSE(p.parameters.contains("head_dim")) << p.id;
  }
  // An MHA point is as before: no latent axes.
  const Plan mha = plan_of(one_experiment({{"heads_q", {32}}}, {{"heads_kv", 8}}));
  EXPECT_FALSE(mha.points.at(0).parameters.contains("kv_lora_rank"));
  EXPECT_TRUE(mha.points.at(0).parameters.contains("heads_kv"));
  EXPECT_EQ(mha.points.at(0).parameters["attention"], "mha");
}

TEST(MlaAxes, WhatMlaDoesNotTakeIsRefusedByName) {
  const auto errors = plan_errors(one_experiment(
      {{"heads_kv", {8}}, {"head_dim", {128}}}, {{"attention", "mla"}, {"kernel", "capacity"}, {"dtype", "fp32"}}));
  const std::string text = all(errors);
  EXPECT_NE(text.find("attention mla takes no heads_kv"), std::string::npos) << text;
  EXPECT_NE(text.find("attention mla takes no head_dim"), std::string::npos) << text;
  EXPECT_NE(text.find("fp16, bf16 or fp8_e4m3, not fp32"), std::string::npos) << text;
  const auto kernel = plan_errors(one_experiment({{"kernel", {"baseline"}}}, {{"attention", "mla"}}));
  ASSERT_EQ(kernel.size(), 1u) << all(kernel);
  EXPECT_EQ(kernel[0].path, "experiments[0].axes.kernel[0]");
  EXPECT_NE(kernel[0].message.find("runs with kernel flash_decode or batch_decode (MLA decode) or capacity, not baseline"),
            std::string::npos)
      << kernel[0].message;
  const auto prefix = plan_errors(
      one_experiment({{"prefix_len", {64}}}, {{"attention", "mla"}, {"kernel", "capacity"}, {"layout", "paged"}}));
  EXPECT_NE(all(prefix).find("no shared-prefix path"), std::string::npos) << all(prefix);
  const auto odd = plan_errors(one_experiment({{"rope_dim", {63}}}, {{"attention", "mla"}, {"kernel", "capacity"}}));
  EXPECT_NE(all(odd).find("must be even"), std::string::npos) << all(odd);
  const auto unknown = plan_errors(one_experiment({{"attention", {"gqa"}}}));
  EXPECT_NE(all(unknown).find("unknown value \"gqa\""), std::string::npos) << all(unknown);
}

// A capacity point of attention mla counts kv_lora_rank + rope_dim values per token once (as K
// and V halves): 1152 bytes for DeepSeek-V3's BF16 latent row per layer.
TEST(MlaAxes, CapacityPointCountsTheLatentRow) {
  const json p = {{"kernel", "capacity"}, {"attention", "mla"}, {"kv_lora_rank", 512}, {"rope_dim", 64},
                  {"dtype", "bf16"}, {"layout", "paged"}, {"page_size", 64}, {"T", 4096}};
  const CapacityPoint c = parse_capacity_point(p);
  EXPECT_EQ(c.query.layout.token_kv_bytes(), 1152u);
  json mha = p;
  mha["attention"] = "mha";
  mha["heads_kv"] = 1;
  mha["head_dim"] = 576;
  EXPECT_EQ(parse_capacity_point(mha).query.layout.token_kv_bytes(), 2304u);  // K and V apiece
}

}  // namespace
}  // namespace decode_bench::sweeps
