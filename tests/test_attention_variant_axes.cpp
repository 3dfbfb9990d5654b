// The attention-variant axes (q_len, window, sinks, logits_soft_cap): listed, validated with the
// key named, recorded per point, and refused by name by every backend without a path for them.
#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "kernels/attention_variant.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/cpu_reference_runner.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/point_problem.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using testing::one_experiment;
using testing::plan_errors;
using testing::plan_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(AttentionVariantAxes, AreInTheAxisTableWithTheirDomains) {
  const AxisDef* q_len = find_axis("q_len");
  ASSERT_NE(q_len, nullptr);
  EXPECT_EQ(axis_domain_text(*q_len), "integer in [1, 16]");
  EXPECT_EQ(q_len->default_value, 1);
  const AxisDef* window = find_axis("window");
  ASSERT_NE(window, nullptr);
  EXPECT_EQ(window->default_value, 0);
  const AxisDef* sinks = find_axis("sinks");
  ASSERT_NE(sinks, nullptr);
  EXPECT_EQ(sinks->type, AxisType::boolean);
  const AxisDef* cap = find_axis("logits_soft_cap");
  ASSERT_NE(cap, nullptr);
  EXPECT_EQ(cap->type, AxisType::number);
  EXPECT_NE(axis_value_error(*q_len, 17), "");
  EXPECT_NE(axis_value_error(*q_len, 0), "");
  EXPECT_NE(axis_value_error(*window, -1), "");
  EXPECT_NE(axis_value_error(*cap, -1.0), "");
  EXPECT_EQ(axis_value_error(*cap, 50), "");
}

TEST(AttentionVariantAxes, BadValuesAreReportedAtTheirKey) {
  const auto errors = plan_errors(one_experiment({{"q_len", {2, 17}}, {"window", -4}, {"logits_soft_cap", "big"}}));
  std::string all;
  for (const auto& e : errors) all += e.path + ": " + e.message + "\n";
  EXPECT_TRUE(contains(all, "experiments[0].axes.q_len[1]: out of range: integer in [1, 16], got 17")) << all;
  EXPECT_TRUE(contains(all, "experiments[0].axes.window")) << all;
  EXPECT_TRUE(contains(all, "experiments[0].axes.logits_soft_cap")) << all;
}

TEST(AttentionVariantAxes, QueryTokensWithTheBaselineOrBeyondTAreRefusedWithTheReason) {
  const auto baseline = plan_errors(one_experiment({{"kernel", "baseline"}, {"q_len", {1, 4}}}));
  ASSERT_EQ(baseline.size(), 1u);
  EXPECT_EQ(baseline[0].path, "experiments[0].axes.q_len[1]");
  EXPECT_TRUE(contains(baseline[0].message, "q_len 4 with kernel baseline: the 3-kernel baseline computes one query "
                                            "token per sequence"))
      << baseline[0].message;
  const auto too_long = plan_errors(one_experiment({{"T", 3}, {"q_len", 4}}));
  ASSERT_EQ(too_long.size(), 1u);
  EXPECT_EQ(too_long[0].path, "experiments[0].axes.q_len");
  EXPECT_TRUE(contains(too_long[0].message, "q_len 4 exceeds T 3")) << too_long[0].message;
  // q_len == T is legal: every cached token is a new one.
  EXPECT_TRUE(plan_errors(one_experiment({{"T", 4}, {"q_len", 4}})).empty());
}

TEST(AttentionVariantAxes, RandomLengthsShorterThanQueryLenSkipThePointByName) {
  // Uniform lengths on [1, 2T - 1] with T 2 draw lengths below 8 for some sequences.
  const json p = {{"kernel", "flash_decode"}, {"T", 2}, {"batch", 16}, {"length_dist", "uniform"}, {"q_len", 8}};
  const auto why = decode_request_unsupported(p);
  ASSERT_TRUE(why.has_value());
  EXPECT_TRUE(contains(*why, "q_len 8 exceeds the length")) << *why;
}

TEST(AttentionVariantAxes, AreRecordedPerPointAndNamedInIdsOffTheirDefaults) {
  const Plan plan = plan_of(one_experiment(
      {{"q_len", {1, 4}}, {"window", 128}, {"sinks", true}, {"logits_soft_cap", 50}}, {{"T", 1024}}));
  ASSERT_EQ(plan.points.size(), 2u);
  const json& p = plan.points[1].parameters;
  EXPECT_EQ(p["q_len"], 4);
  EXPECT_EQ(p["window"], 128);
  EXPECT_EQ(p["sinks"], true);
  EXPECT_EQ(p["logits_soft_cap"], 50.0);
  EXPECT_TRUE(contains(plan.points[1].id, "/q_len=4/window=128/sinks=true/logits_soft_cap=50")) << plan.points[1].id;
  EXPECT_FALSE(contains(plan.points[0].id, "q_len")) << plan.points[0].id;
  // At the defaults a point keeps the id it had before the axes existed, and records them.
  const Plan plain = plan_of(one_experiment({{"T", 64}}));
  EXPECT_EQ(plain.points[0].id, "e/kernel=flash_decode/layout=contiguous/dtype=fp16/T=64");
  EXPECT_EQ(plain.points[0].parameters["q_len"], 1);
  EXPECT_EQ(plain.points[0].parameters["sinks"], false);
  // Capacity points launch no kernel: the axes are dropped there.
  const Plan capacity = plan_of(one_experiment({{"kernel", "capacity"}, {"q_len", {1, 2}}}));
  ASSERT_EQ(capacity.points.size(), 1u);
  EXPECT_FALSE(capacity.points[0].parameters.contains("q_len"));
}

TEST(AttentionVariantAxes, EndToEndTakesOneQueryTokenPerSequence) {
  const json p = {{"kernel", "flash_decode"}, {"layout", "contiguous"}, {"T", 64}, {"end_to_end", true}, {"q_len", 2}};
  EXPECT_EQ(decode_request_unsupported(p), "end_to_end with q_len 2: the E2E copies are of one query token per sequence");
  json one = p;
  one["q_len"] = 1;
  EXPECT_EQ(decode_request_unsupported(one), std::nullopt);
}

TEST(AttentionVariantAxes, DescribePointCarriesTheVariant) {
  const json p = {{"kernel", "flash_decode"}, {"T", 300}, {"q_len", 3}, {"window", 64}, {"sinks", true},
                  {"logits_soft_cap", 30.0}};
  const AttentionProblem problem = describe_point(KernelKind::flash_decode, p);
  EXPECT_EQ(problem.variant.q_len, 3);
  EXPECT_EQ(problem.variant.window, 64);
  EXPECT_TRUE(problem.variant.sinks);
  EXPECT_EQ(problem.variant.logits_soft_cap, 30.0);
  EXPECT_EQ(problem.variant.describe(), "q_len 3, window 64, sinks, logits_soft_cap 30");
  EXPECT_TRUE(describe_point(KernelKind::flash_decode, json{{"T", 300}}).variant.plain());
}

// decode-bench's flash_decode and batch_decode compute every variant on the tensor-core row path
// (FP16 / BF16 / FP8, head dims 80-128); elsewhere, and on every backend without a path, the point
// is refused naming the variant.
TEST(AttentionVariantAxes, EveryBackendWithoutAPathRefusesByName) {
  for (const json& change : {json{{"window", 128}}, json{{"q_len", 2}}, json{{"sinks", true}},
                             json{{"logits_soft_cap", 50.0}}}) {
    json p = {{"kernel", "flash_decode"}, {"layout", "paged"}, {"dtype", "fp16"}, {"T", 4096}, {"heads_q", 32},
              {"heads_kv", 8}};
    p.update(change);
    for (const json& unbuilt : {json{{"dtype", "fp8_e4m3"}, {"head_dim", 64}}, json{{"dtype", "fp32"}},
                                json{{"head_dim", 64}}, json{{"head_dim", 256}}, json{{"kernel", "baseline"}}}) {
      json q = p;
      q.update(unbuilt);
      if (q["kernel"] == "baseline" && q.value("q_len", 1) > 1) continue;  // refused at validation
      const KernelKind kind = q["kernel"] == "baseline" ? KernelKind::baseline : KernelKind::flash_decode;
      const AttentionProblem problem = describe_point(kind, q);
      const std::string named = problem.variant.describe();
      for (const auto& entry : registered_backends()) {
        const auto why = entry.make()->supports(problem);
        if (entry.name == kDefaultBackend) {
          ASSERT_TRUE(why.has_value()) << q.dump();
          EXPECT_TRUE(contains(*why, named)) << *why;
        }
      }
      EXPECT_EQ(find_backend(kDefaultBackend)->make()->supports(problem), decode_point_unsupported(q));
    }
    for (const char* dtype : {"fp16", "bf16", "fp8_e4m3", "fp8_e5m2"})
      for (const char* kernel : {"flash_decode", "batch_decode"}) {
        json q = p;
        q["dtype"] = dtype;
        q["kernel"] = kernel;
        const KernelKind kind = q["kernel"] == "batch_decode" ? KernelKind::batch_decode : KernelKind::flash_decode;
        EXPECT_EQ(find_backend(kDefaultBackend)->make()->supports(describe_point(kind, q)), std::nullopt) << q.dump();
      }
    EXPECT_EQ(decode_point_unsupported(p), std::nullopt) << p.dump();
  }
  // The plain problem is unaffected.
  const json plain = {{"kernel", "flash_decode"}, {"dtype", "fp16"}, {"T", 4096}, {"heads_q", 32}, {"heads_kv", 8}};
  EXPECT_EQ(find_backend(kDefaultBackend)->make()->supports(describe_point(KernelKind::flash_decode, plain)),
            std::nullopt);
}

TEST(AttentionVariant, SinkLogitsAreASeededDrawInTheirRange) {
  const auto a = sink_logits(64, 7), b = sink_logits(64, 7), c = sink_logits(64, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  for (float z : a) {
    EXPECT_GE(z, 0.0f);
    EXPECT_LT(z, 4.0f);
  }
}

TEST(AttentionVariant, VisibleRangesFollowTheWindowConvention) {
  // T 10, q_len 3: tokens at positions 7, 8, 9.
  EXPECT_EQ(visible_range(10, 3, 0, 0).begin, 0);
  EXPECT_EQ(visible_range(10, 3, 0, 0).end, 8);
  EXPECT_EQ(visible_range(10, 3, 2, 0).end, 10);
  // window 1: only its own position; window 4 at position 8: [5, 9).
  EXPECT_EQ(visible_range(10, 3, 1, 1).begin, 8);
  EXPECT_EQ(visible_range(10, 3, 1, 1).end, 9);
  EXPECT_EQ(visible_range(10, 3, 1, 4).begin, 5);
  // A window as long as the sequence, or longer, is full attention.
  EXPECT_EQ(visible_range(10, 1, 0, 10).begin, 0);
  EXPECT_EQ(visible_range(10, 1, 0, 11).begin, 0);
  EXPECT_EQ(visible_range(10, 1, 0, 9).begin, 1);
  const AttentionVariant v{.q_len = 3, .window = 4};
  EXPECT_EQ(read_range(10, v).begin, 4);  // position 7's window
  EXPECT_EQ(read_range(10, v).end, 10);
  EXPECT_EQ(v.effective_window(10), 4);
  EXPECT_EQ(v.effective_window(4), 0);
}

TEST(AttentionVariant, InvalidReasonsNameTheKey) {
  EXPECT_TRUE(contains(*variant_invalid_reason({.q_len = 0}, {}), "q_len 0"));
  EXPECT_TRUE(contains(*variant_invalid_reason({.q_len = 17}, {}), "q_len 17"));
  EXPECT_TRUE(contains(*variant_invalid_reason({.window = -1}, {}), "window -1"));
  EXPECT_TRUE(contains(*variant_invalid_reason({.logits_soft_cap = -2}, {}), "logits_soft_cap -2"));
  EXPECT_TRUE(contains(*variant_invalid_reason({.q_len = 4}, {8, 3}), "sequence 1"));
  EXPECT_EQ(variant_invalid_reason({.q_len = 4}, {8, 4}), std::nullopt);
}

}  // namespace
}  // namespace decode_bench::sweeps

namespace decode_bench::sweeps {
namespace {

// The cpu_reference kernel computes the variants (the float64 reference itself) and records the
// variant's traffic model; its q is q_len rows a sequence.
TEST(AttentionVariantAxes, TheCpuReferenceRunsEveryVariant) {
  const auto cpu = make_cpu_reference_runner();
  const json p = {{"kernel", "cpu_reference"}, {"layout", "contiguous"}, {"dtype", "fp16"}, {"T", 64},
                  {"batch", 2}, {"heads_q", 4}, {"heads_kv", 2}, {"head_dim", 32}, {"q_len", 3},
                  {"window", 8}, {"sinks", true}, {"logits_soft_cap", 30.0}};
  const Point point{"e", p, "e/x", 0};
  ASSERT_EQ(cpu->cannot_run(point), std::nullopt);
  RunContext ctx;
  const json r = cpu->run(point, ctx);
  EXPECT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(r["model"]["name"], "decode_variant_min_bytes");
  // K and V of the last 8 + 3 - 1 = 10 positions of 2 sequences, 2 KV heads of 32 fp16 dims.
  EXPECT_EQ(r["model"]["k_bytes"], 2 * 10 * 2 * 32 * 2.0);
  EXPECT_EQ(r["model"]["flops"], 4.0 * 2 * 3 * 8 * 4 * 32);
}

}  // namespace
}  // namespace decode_bench::sweeps
