// The attention variants on FlashInfer's backends, on the host: decode-bench's definitions
// (kernels/attention_variant.hpp) mapped to FlashInfer's parameters (flashinfer_variant_map.hpp)
// select exactly the cache positions each query token sees under FlashInfer's own mask conditions;
// each backend takes the combinations compiled for the variants preset and names the others; and
// the preset runs the three backends side by side. The runs are GPU tests
// (tests/test_flashinfer_variants_gpu.cpp).
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "backends/flashinfer/flashinfer_variant_map.hpp"
#include "backends/registry.hpp"
#include "flashinfer_build.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/point_problem.hpp"
#include "tests/flashinfer_backend_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

using ::decode_bench::testing::described;
using ::decode_bench::testing::flashinfer_built;
using ::decode_bench::testing::reason;

TEST(FlashInferVariantMap, MapsEachVariantToFlashInfersParameter) {
  const FlashInferVariantArgs plain = flashinfer_variant_args(AttentionVariant{});
  EXPECT_FALSE(plain.causal);
  EXPECT_EQ(plain.window_left, -1);
  EXPECT_EQ(plain.logits_soft_cap, 0.f);
  EXPECT_FALSE(plain.sinks);

  AttentionVariant v;
  v.q_len = 4;
  v.window = 128;
  v.logits_soft_cap = 50;
  v.sinks = true;
  const FlashInferVariantArgs f = flashinfer_variant_args(v);
  EXPECT_TRUE(f.causal);
  EXPECT_EQ(f.window_left, 127);
  EXPECT_EQ(f.logits_soft_cap, 50.f);
  EXPECT_TRUE(f.sinks);

  v.window = 1;  // the token itself only: nothing to its left
  EXPECT_EQ(flashinfer_variant_args(v).window_left, 0);
  v.window = std::int64_t{1} << 40;  // beyond any int32 length: still full, clamped
  EXPECT_EQ(flashinfer_variant_args(v).window_left, 2147483647);
}

// FlashInfer's mask conditions, as its kernels state them for query token qo_idx of a request of
// qo_len tokens over kv_len KV tokens: the causal mask (prefill.cuh, logits_mask: masked where
// kv_idx + qo_len > kv_len + qo_idx) and DefaultAttention's sliding window (variants.cuh: kept
// where kv_idx + qo_len + window_left >= kv_len + qo_idx; window_left < 0 is kv_len there). Over
// every small case they keep exactly decode-bench's visible_range.
TEST(FlashInferVariantMap, FlashInfersMasksKeepExactlyTheVisibleRange) {
  for (std::int64_t length = 1; length <= 20; ++length)
    for (int q_len = 1; q_len <= std::min<std::int64_t>(length, 5); ++q_len)
      for (std::int64_t window : {0, 1, 2, 3, 7, 19, 20, 25}) {
        AttentionVariant v;
        v.q_len = q_len;
        v.window = window;
        const FlashInferVariantArgs f = flashinfer_variant_args(v);
        const std::int64_t window_left = f.window_left >= 0 ? f.window_left : length;
        for (int i = 0; i < q_len; ++i) {
          const VisibleRange r = visible_range(length, q_len, i, window);
          for (std::int64_t t = 0; t < length; ++t) {
            const bool causal_kept = !f.causal || !(t + q_len > length + i);
            const bool window_kept = t + q_len + window_left >= length + i;
            // q_len 1 runs without the causal mask: the request's one token is the last position.
            const bool kept = causal_kept && window_kept && t < length;
            EXPECT_EQ(kept, t >= r.begin && t < r.end)
                << "length " << length << " q_len " << q_len << " window " << window << " i " << i << " t " << t;
          }
        }
      }
}

// FlashInfer's soft-cap (variants.cuh): tanh(x * (sm_scale / cap)) for the raw dot product x, then
// multiplied by sm_scale_log2 = cap log2 e in place of sm_scale log2 e: the scaled logit it feeds
// the base-2 softmax is cap tanh(s / cap) log2 e with s = x sm_scale, decode-bench's cap tanh(s / cap).
TEST(FlashInferVariantMap, SoftCapActsOnTheScaledLogitAsDecodeBenchDefinesIt) {
  const double cap = flashinfer_variant_args(AttentionVariant{1, 0, false, 50}).logits_soft_cap;
  const double sm_scale = 1.0 / std::sqrt(128.0), log2e = 1.0 / std::log(2.0);
  for (const double x : {-4000.0, -300.0, -1.0, 0.0, 0.5, 80.0, 640.0, 9000.0}) {
    const double flashinfer_log2 = std::tanh(x * (sm_scale / cap)) * (cap * log2e);
    const double s = x * sm_scale;
    EXPECT_NEAR(flashinfer_log2 / log2e, cap * std::tanh(s / cap), 1e-12) << x;
  }
}

json fp16_point(json change) {
  json p = {{"layout", "paged"}, {"page_size", 16}, {"batch", 4}, {"T", 512}};
  p.update(change);
  return p;
}

TEST(FlashInferVariants, CudaCoreDecodeTakesAWindowOrASoftCap) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const auto b = find_backend("flashinfer")->make();
  for (const json& heads : {json{{"heads_q", 32}, {"heads_kv", 8}}, json{{"heads_q", 32}, {"heads_kv", 32}}})
    for (const json& layout : {json{{"layout", "paged"}}, json{{"layout", "contiguous"}, {"batch", 1}},
                               json{{"layout", "contiguous"}, {"batch", 3}}})
      for (const json& variant : {json{{"window", 128}}, json{{"logits_soft_cap", 50}}}) {
        json point = fp16_point(heads);
        point.update(layout);
        point.update(variant);
        EXPECT_EQ(reason(*b, described(point)), "(supported)") << point.dump();
      }
  EXPECT_EQ(reason(*b, described(fp16_point({{"q_len", 4}}))),
            "q_len 4: FlashInfer's CUDA-core decode takes one query token a request (flashinfer_tc runs q_len > 1 "
            "through its batch prefill with a causal mask)");
  EXPECT_EQ(reason(*b, described(fp16_point({{"sinks", true}}))),
            "sinks: FlashInfer 0.6.18's CUDA-core decode kernels have no sink term and call no variant hook that "
            "could add one (its prefill kernels do: flashinfer_tc runs sinks)");
  EXPECT_EQ(reason(*b, described(fp16_point({{"sinks", true}, {"logits_soft_cap", 50}}))),
            reason(*b, described(fp16_point({{"sinks", true}}))));
  EXPECT_EQ(reason(*b, described(fp16_point({{"window", 128}, {"logits_soft_cap", 50}}))),
            "window 128, logits_soft_cap 50: a window with a soft-cap is not compiled for FlashInfer's CUDA-core "
            "decode: each alone is");
  EXPECT_EQ(reason(*b, described(fp16_point({{"window", 128}, {"dtype", "bf16"}}))),
            "window 128, dtype bf16: FlashInfer's variants are compiled here for fp16 (the variants preset's dtype)");
  EXPECT_EQ(reason(*b, described(fp16_point({{"logits_soft_cap", 50}, {"dtype", "fp8_e4m3"}}))),
            "logits_soft_cap 50, dtype fp8_e4m3: FlashInfer's variants are compiled here for fp16 (the variants "
            "preset's dtype)");
}

TEST(FlashInferVariants, TensorCorePathTakesQLenWindowSoftCapAndSinks) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const auto b = find_backend("flashinfer_tc")->make();
  for (const json& variant :
       {json{{"q_len", 2}}, json{{"q_len", 8}}, json{{"window", 128}}, json{{"window", 4096}},
        json{{"logits_soft_cap", 50}}, json{{"sinks", true}}, json{{"sinks", true}, {"logits_soft_cap", 50}}})
    for (const json& heads : {json{{"heads_q", 32}, {"heads_kv", 8}}, json{{"heads_q", 32}, {"heads_kv", 32}}})
      for (const json& layout : {json{{"layout", "paged"}}, json{{"layout", "contiguous"}, {"batch", 1}}}) {
        json point = fp16_point(heads);
        point.update(layout);
        point.update(variant);
        EXPECT_EQ(reason(*b, described(point)), "(supported)") << point.dump();
      }
  // 16 query tokens x group 4 = 64 packed rows: tile 64, compiled; 16 x 8 = 128 rows: tile 128, not.
  EXPECT_EQ(reason(*b, described(fp16_point({{"q_len", 16}}))), "(supported)");
  EXPECT_EQ(reason(*b, described(fp16_point({{"q_len", 16}, {"heads_q", 64}}))),
            "q_len 16: 16 query token(s) x GQA group 8 = 128 packed rows: FlashInfer's plan takes a query tile above "
            "64, which is not compiled for this variant (up to 64 rows are)");
  // One query token of MQA's 32 heads packs 32 rows: tile 64, compiled for the causal mask only.
  EXPECT_EQ(reason(*b, described(fp16_point({{"window", 128}, {"heads_kv", 1}}))),
            "window 128: 1 query token(s) x GQA group 32 = 32 packed rows: FlashInfer's plan takes a query tile above "
            "16, which is not compiled for this variant (up to 16 rows are)");
  EXPECT_EQ(reason(*b, described(fp16_point({{"q_len", 2}, {"sinks", true}}))),
            "q_len 2, sinks: a causal mask (several query tokens a request) with a window, soft-cap or sinks is not "
            "compiled: causal alone is");
  EXPECT_EQ(reason(*b, described(fp16_point({{"window", 128}, {"sinks", true}}))),
            "window 128, sinks: a window with a soft-cap or sinks is not compiled: a window alone is");
  EXPECT_EQ(reason(*b, described(fp16_point({{"window", 128}, {"dtype", "bf16"}}))),
            "window 128, dtype bf16: FlashInfer's variants are compiled here for fp16 (the variants preset's dtype)");
  EXPECT_EQ(reason(*b, described(fp16_point({{"q_len", 2}, {"head_dim", 64}}))),
            "q_len 2, head_dim 64: FlashInfer's variants are compiled here for head_dim 128 (the variants preset's)");
}

// Neither backend runs a variant through FlashInfer's cascade.
TEST(FlashInferVariants, TheCascadeTakesNoVariant) {
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const json shared = {{"layout", "paged"},     {"page_size", 16}, {"batch", 4},       {"prefix_len", 32},
                       {"suffix_len", 8},       {"window", 16},    {"prefix_overlap", false}};
  for (const char* name : {"flashinfer", "flashinfer_tc"}) {
    const auto b = find_backend(name)->make();
    EXPECT_EQ(reason(*b, described(shared, KernelKind::shared_prefix)),
              "the cascade of this backend has no path for window 16") << name;
    EXPECT_EQ(reason(*b, described(shared, KernelKind::batch_decode)),
              "the decode of a shared-prefix batch of this backend has no path for window 16") << name;
  }
}

// configs/variants.json runs decode-bench, flashinfer and flashinfer_tc over the same points:
// decode-bench and flashinfer_tc take every one; flashinfer skips q_len > 1 and sinks, by name. The
// FP8 experiment (fp8_variants) runs decode-bench alone.
TEST(FlashInferVariants, VariantsPresetComparesTheThreeBackends) {
  const auto preset = find_embedded_preset("variants");
  ASSERT_TRUE(preset);
  const Plan plan = testing::plan_of(json::parse(preset->json));
  ASSERT_EQ(plan.points.size(), 140u);  // (16 spec_decode + 20 variants + 8 variant_costs) x 3 backends + 8 fp8_variants
  std::map<std::string, int> points, skipped;
  for (const Point& point : plan.points) {
    const std::string backend = backend_of(point.parameters);
    ++points[backend];
    if (backend != "decode-bench" && !flashinfer_built()) continue;
    const auto why = find_backend(backend)->make()->supports(describe_point(KernelKind::flash_decode, point.parameters));
    if (!why) continue;
    ++skipped[backend];
    EXPECT_EQ(backend, "flashinfer") << point.id << ": " << *why;
    const bool q_len = point.parameters.value("q_len", 1) > 1, sinks = point.parameters.value("sinks", false);
    EXPECT_TRUE(q_len || sinks) << point.id << ": " << *why;
    EXPECT_EQ(why->rfind(q_len ? "q_len " : "sinks: ", 0), 0u) << *why;
  }
  EXPECT_EQ(points, (std::map<std::string, int>{{"decode-bench", 52}, {"flashinfer", 44}, {"flashinfer_tc", 44}}));
  if (flashinfer_built()) {  // q_len 2, 4, 8 of spec_decode (12); sinks of variants (4) and variant_costs (4)
    EXPECT_EQ(skipped, (std::map<std::string, int>{{"flashinfer", 20}}));
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
