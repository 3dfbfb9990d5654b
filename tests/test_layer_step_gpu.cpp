// A decode step of L layers through the sweep's runner on a GPU (sweeps/layer_step.hpp): every
// layer's output of the graph's replay against the float64 reference of that layer's own K, V and
// q (a launch bound to another layer's cache fails it: the layers' values differ), on both
// layouts, both decode kernels and both references (the attention variants too), and the recorded
// fields consistent with each other. Skipped (with the reason) where no GPU exists.
#include <gtest/gtest.h>

#include <string>

#include "harness/results_schema.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/decode_verify.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "sweeps/point_kernel.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

void expect_consistent_step(const json& r, int layers) {
  ASSERT_EQ(r.value("status", ""), kStatusOk) << r.dump();
  ASSERT_TRUE(r.contains("layers")) << r.dump();
  const json& s = r["layers"];
  EXPECT_EQ(s["count"], layers);
  const json& per_layer = s["verification"]["per_layer"];
  ASSERT_EQ(per_layer.size(), static_cast<std::size_t>(layers));
  for (int l = 0; l < layers; ++l) {
    EXPECT_TRUE(per_layer[l]["passed"].get<bool>()) << "layer " << l << ": " << per_layer[l].dump();
    EXPECT_EQ(per_layer[l]["non_finite"], 0) << "layer " << l << ": every output written";
  }
  // Each layer read its own values: the same kernel over other data leaves other rounding errors.
  EXPECT_NE(per_layer[0]["max_abs_error"], per_layer[layers - 1]["max_abs_error"]);
  const double step = s["step_us"].get<double>();
  EXPECT_GT(step, 0.0);
  EXPECT_DOUBLE_EQ(s["per_layer_us"].get<double>() * layers, step);
  EXPECT_DOUBLE_EQ(s["step_us"].get<double>(), s["timing"]["median_us"].get<double>());
  EXPECT_DOUBLE_EQ(s["single_launch_us"].get<double>(), r["timing"]["median_us"].get<double>());
  EXPECT_DOUBLE_EQ(s["per_layer_over_single"].get<double>(),
                   s["per_layer_us"].get<double>() / s["single_launch_us"].get<double>());
  EXPECT_DOUBLE_EQ(s["plan_us"].get<double>(), r["backend"]["plan_us"].get<double>());
  EXPECT_GE(s["bind_us"].get<double>(), 0.0);
}

// Every point of the preset (`points` of them) run with `layers` layers, verified once on the GPU
// reference and once on the host one: each run a consistent step whose layers' verification names
// the reference (every layer the same: written once).
void expect_every_point_verifies_on_both_references(const json& preset, std::size_t points, int layers) {
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), points);
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    auto runner = make_kernel_runner(*kernel_of(point.parameters));
    for (bool on_host : {false, true}) {
      RunContext ctx;
      ctx.verify_on_host = on_host;
      const json r = runner->run(point, ctx);
      expect_consistent_step(r, layers);
      EXPECT_EQ(r["layers"]["verification"]["method"], on_host ? kVerifyOnHost : kVerifyOnDevice);
    }
  }
}

TEST(LayerStepGpu, EveryLayerOfTheGraphMatchesItsOwnReference) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"kernel", {"flash_decode", "batch_decode"}}, {"layout", {"contiguous", "paged"}}},
      {{"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}, {"T", 300}, {"batch", 6}, {"length_dist", "uniform"},
       {"page_size", 16}, {"page_order", "shuffled"}, {"layers", 4}, {"counters", false}});
  expect_every_point_verifies_on_both_references(preset, 4, 4);
}

// The attention variants over layers, on both references: every layer's kernel reads the point's
// sink logits (the layers share them), and both references read those, not the layer seed's.
TEST(LayerStepGpu, VariantLayersVerifyOnBothReferences) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"layout", {"contiguous", "paged"}}},
      {{"kernel", "flash_decode"}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}, {"T", 300}, {"batch", 3},
       {"page_size", 16}, {"page_order", "shuffled"}, {"q_len", 3}, {"window", 100}, {"sinks", true},
       {"logits_soft_cap", 30}, {"layers", 3}, {"counters", false}});
  expect_every_point_verifies_on_both_references(preset, 2, 3);
}

TEST(LayerStepGpu, HotReplaysAndTheBaselineAlsoVerify) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"kernel", {"baseline", "flash_decode"}}, {"timing", {"hot"}}},
      {{"heads_q", 32}, {"heads_kv", 32}, {"head_dim", 128}, {"T", 32}, {"batch", 64}, {"layers", 8},
       {"counters", false}});
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 2u);
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    auto runner = make_kernel_runner(*kernel_of(point.parameters));
    RunContext ctx;
    const json r = runner->run(point, ctx);
    expect_consistent_step(r, 8);
    EXPECT_NE(r["layers"]["method"].get<std::string>().find("hot"), std::string::npos);
  }
}

TEST(LayerStepGpu, SharedPrefixPointsAreSkippedWithTheReason) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"kernel", {"shared_prefix"}}},
      {{"layout", "paged"}, {"heads_q", 8}, {"heads_kv", 8}, {"head_dim", 128}, {"prefix_len", 256},
       {"suffix_len", 64}, {"batch", 4}, {"layers", 2}, {"counters", false}});
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 1u);
  auto runner = make_kernel_runner(KernelKind::shared_prefix);
  RunContext ctx;
  const json r = runner->run(plan.points[0], ctx);
  EXPECT_EQ(r["status"], kStatusSkipped) << r.dump();
  EXPECT_NE(r["reason"].get<std::string>().find("layers"), std::string::npos) << r["reason"];
}

}  // namespace
}  // namespace decode_bench::sweeps
