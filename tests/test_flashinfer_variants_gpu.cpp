// The attention variants through FlashInfer's backends and the sweep's pipeline runner, as the
// variants preset runs them (FP16, head dim 128, page 16), verified on the host against the float64
// variant reference (kernels/cpu_reference_variant.hpp):
//   flashinfer     a window (window_left) and a soft-cap through its CUDA-core batch decode, paged
//                  and contiguous, a batch and one sequence (FlashInfer splits it)
//   flashinfer_tc  q_len 2 to 8 through its batch prefill with the causal mask (query tiles 16 and
//                  64), a window, a soft-cap, sinks and sinks with a soft-cap on one query token,
//                  one sequence split into KV chunks (the sink joins chunk 0 only)
// with FlashInfer's choices and the traffic model's window in closed form. Skipped (with the reason)
// where no GPU exists or FlashInfer is not built.
#include <string>

#include <gtest/gtest.h>

#include "flashinfer_build.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/flashinfer_backend_test_support.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using ::decode_bench::testing::flashinfer_built;

json run_point(const std::string& backend, json params) {
  return ::decode_bench::testing::run_backend_point(KernelKind::flash_decode, backend, std::move(params));
}

void expect_verified(const json& r, const std::string& backend, const char* family) {
  ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
  EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r.dump();
  EXPECT_EQ(r["backend"]["name"], backend);
  EXPECT_EQ(r["backend"]["io_dtype"], "fp16");
  EXPECT_EQ(r["plan"]["family"], family) << r["plan"].dump();
  // The variants' minimum (kernels/variant_traffic_model.hpp) under this backend's basis.
  EXPECT_EQ(r["model"]["name"].get<std::string>().rfind("variant_min_bytes+", 0), 0u) << r["model"].dump();
}

// The shapes every path runs: a paged batch over shuffled pages, contiguous slots addressed as
// pages, and one contiguous sequence that FlashInfer's plans split into KV chunks. 2048 tokens keep
// a sink visible to the check: its weight e^z (z up to 4) is a few percent of the denominator, so a
// sink left out or counted once per chunk moves the lse past its bound (2e-3 x |lse|).
const json kShapes[] = {
    {{"layout", "paged"}, {"page_size", 16}, {"page_order", "shuffled"}, {"batch", 3}, {"T", 1000}},
    {{"layout", "contiguous"}, {"batch", 3}, {"T", 1000}},
    {{"layout", "contiguous"}, {"batch", 1}, {"T", 2048}},
};

json with(json shape, const json& change) {
  shape.update(change);
  return shape;
}

TEST(FlashInferVariantsGpu, CudaCoreDecodeVerifiesWindowsAndSoftCaps) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  for (const json& heads : {json{{"heads_q", 32}, {"heads_kv", 8}}, json{{"heads_q", 32}, {"heads_kv", 32}}})
    for (const json& shape : kShapes)
      // window 1: the token itself only; 100 ends inside a page; a soft-cap of 0.1 bends the
      // generated data's logits (near 0), one of 50 leaves them nearly straight.
      for (const json& variant : {json{{"window", 1}}, json{{"window", 100}}, json{{"logits_soft_cap", 0.1}},
                                  json{{"logits_soft_cap", 50}}}) {
        json point = with(shape, heads);
        point.update(variant);
        SCOPED_TRACE(point.dump());
        const json r = run_point("flashinfer", point);
        expect_verified(r, "flashinfer", "flashinfer_batch_decode");
        const json& v = r["plan"]["flashinfer_variant"];
        EXPECT_EQ(v["window_left"], variant.contains("window") ? variant["window"].get<int>() - 1 : -1);
        EXPECT_EQ(v["logits_soft_cap"].get<float>(), static_cast<float>(variant.value("logits_soft_cap", 0.0)));
      }
}

// The window's K/V is the minimum; FlashInfer's CUDA-core decode reads the tokens before it too and
// masks them, counted as extra bytes; its tensor-core path starts at the window.
TEST(FlashInferVariantsGpu, WindowTrafficInClosedForm) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const json point = with(kShapes[0], {{"heads_q", 32}, {"heads_kv", 8}, {"window", 100}});
  const double row = 8 * 128 * 2.0;  // one token's K (or V) over the 8 KV heads, fp16
  const double window_kv = 3 * 100 * row, masked_kv = 2 * 3 * 900 * row, masked_pages = 3 * (900 / 16) * 4.0;
  const json cuda_core = run_point("flashinfer", point);
  expect_verified(cuda_core, "flashinfer", "flashinfer_batch_decode");
  EXPECT_EQ(cuda_core["model"]["k_bytes"].get<double>(), window_kv);
  EXPECT_EQ(cuda_core["model"]["name"], "variant_min_bytes+flashinfer_partials+masked_window_tokens");
  EXPECT_GE(cuda_core["model"]["extra_bytes"].get<double>(), masked_kv + masked_pages) << cuda_core["model"].dump();
  const json tc = run_point("flashinfer_tc", point);
  expect_verified(tc, "flashinfer_tc", "flashinfer_prefill_as_decode");
  EXPECT_EQ(tc["model"]["k_bytes"].get<double>(), window_kv);
  EXPECT_EQ(tc["model"]["name"], "variant_min_bytes+flashinfer_partials");
  EXPECT_LT(tc["model"]["extra_bytes"].get<double>(), masked_kv) << tc["model"].dump();
}

TEST(FlashInferVariantsGpu, TensorCorePathVerifiesQLenWithTheCausalMask) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  for (const json& shape : kShapes)
    for (const int q_len : {2, 3, 4, 8}) {
      const json point = with(shape, {{"heads_q", 32}, {"heads_kv", 8}, {"q_len", q_len}});
      SCOPED_TRACE(point.dump());
      const json r = run_point("flashinfer_tc", point);
      expect_verified(r, "flashinfer_tc", "flashinfer_prefill_as_decode");
      const json& v = r["plan"]["flashinfer_variant"];
      EXPECT_EQ(v["mask"], "causal");
      EXPECT_EQ(v["qo_len"], q_len);
      // FA2DetermineCtaTileQ of q_len x group 4 packed rows: 16 up to 16, then 64.
      EXPECT_EQ(r["plan"]["cta_tile_q"], q_len * 4 <= 16 ? 16 : 64) << r["plan"].dump();
      EXPECT_EQ(r["model"]["q_bytes"].get<double>(), point["batch"].get<double>() * q_len * 32 * 128 * 4.0);
    }
}

TEST(FlashInferVariantsGpu, TensorCorePathVerifiesWindowsSoftCapsAndSinks) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  for (const json& heads : {json{{"heads_q", 32}, {"heads_kv", 8}}, json{{"heads_q", 32}, {"heads_kv", 32}}})
    for (const json& shape : kShapes)
      for (const json& variant :
           {json{{"window", 1}}, json{{"window", 100}}, json{{"logits_soft_cap", 0.1}}, json{{"logits_soft_cap", 50}},
            json{{"sinks", true}}, json{{"sinks", true}, {"logits_soft_cap", 0.1}}}) {
        json point = with(shape, heads);
        point.update(variant);
        SCOPED_TRACE(point.dump());
        const json r = run_point("flashinfer_tc", point);
        expect_verified(r, "flashinfer_tc", "flashinfer_prefill_as_decode");
        const json& v = r["plan"]["flashinfer_variant"];
        EXPECT_EQ(v["mask"], "none");
        EXPECT_EQ(v["sinks"], variant.value("sinks", false));
        EXPECT_EQ(r["plan"]["cta_tile_q"], 16) << r["plan"].dump();
        // One sequence over 8 or 32 KV heads is far fewer blocks than the device has: FlashInfer's
        // plan splits it, so the sink's one-chunk rule is what verified.
        if (shape["batch"] == 1 && !variant.contains("window")) {
          EXPECT_TRUE(r["plan"]["split_kv"].get<bool>()) << r["plan"].dump();
        }
      }
}

}  // namespace
}  // namespace decode_bench::sweeps
