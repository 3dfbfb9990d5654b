// The `flashinfer_mla` and `flashinfer_mla_fa3` backends through the sweep's pipeline runner, as
// `--set backend=flashinfer_mla` runs them: FlashInfer's MLA decode (its FA2 kernel, and on compute
// capability 9.0 its Hopper kernel) over decode-bench's latent cache (paged over shuffled 7-token
// pages, and contiguous slabs as pages), BF16 and FP16, 16, 24 and 128 query heads at q_len 1 and 2
// (its causal mask), each point verified against the float64 MLA reference with the rule for a
// 16-bit o; a long sequence that FlashInfer's plan splits (its in-kernel merge); decode-bench's own
// MLA kernel on the same points, in the same run, also verified. Skipped (with the reason) where no
// GPU exists or FlashInfer is not built.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "flashinfer_build.hpp"
#include "kernels/mla/mla_shape.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/decode_verify.hpp"
#include "sweeps/mla_point.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/flashinfer_backend_test_support.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using ::decode_bench::testing::flashinfer_built;

// The minimum every MLA point records (decode-bench's model) plus what the plan says FlashInfer
// moves beyond it: split partials (512 16-bit values and an FP32 LSE per row, written and read
// back) and, contiguous, one page index per sequence.
void expect_flashinfer_mla_point(const Point& point, const json& r, const std::string& backend = "flashinfer_mla") {
  ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
  EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r["verification"].dump();
  EXPECT_EQ(r["verification"]["method"], kVerifyOnHost);
  EXPECT_EQ(r["verification"]["reference"], "mla_reference");
  // The FA2 kernel's denominator sums the rounded weights (its lse rule allows for that); the
  // Hopper kernel's sums the FP32 weights, as the reference does.
  EXPECT_EQ(r["verification"]["lse_rule"], backend == "flashinfer_mla_fa3" ? "relative" : "rounded_weights");
  EXPECT_EQ(r["verification"]["non_finite"], 0);
  EXPECT_GT(r["verification"]["rows_checked"].get<int>(), 0);
  const json& p = point.parameters;
  EXPECT_EQ(r["backend"]["name"], backend);
  EXPECT_EQ(r["backend"]["version"], flashinfer_build::kVersion);
  EXPECT_EQ(r["backend"]["io_dtype"], p["dtype"]);
  EXPECT_EQ(r["backend"]["lse_conversion"], "base 2 to natural, host, outside timing");
  const json& plan = r["plan"];
  EXPECT_EQ(plan["family"], "flashinfer_mla") << plan.dump();
  EXPECT_EQ(plan["mask"], "causal");
  EXPECT_EQ(plan["path"], backend == "flashinfer_mla_fa3" ? "fa3" : "fa2") << plan.dump();
  const bool paged = p["layout"] == "paged";
  EXPECT_EQ(plan["kv_access"], paged ? "paged" : "contiguous_as_pages");
  // MLAPlan's cluster: 2 CTAs when the packed query rows (q_len x heads) average above 64.
  const int rows = p["q_len"].get<int>() * p["heads_q"].get<int>();
  EXPECT_EQ(plan["cluster_ctas"], rows > 64 ? 2 : 1) << plan.dump();
  EXPECT_GE(plan["work_items"].get<int>(), p["batch"].get<int>());
  const MlaPoint m = parse_mla_point(p);
  std::vector<std::int32_t> pages;
  if (paged)
    for (const std::int32_t len : m.decode.lengths)
      pages.push_back((len + m.decode.page_size - 1) / m.decode.page_size);
  const MlaTrafficModel expect = mla_traffic_model(m.shape, m.decode.dtype, m.decode.lengths, pages);
  EXPECT_DOUBLE_EQ(r["model"]["bytes"].get<double>(), expect.minimum_bytes());
  EXPECT_DOUBLE_EQ(r["model"]["latent_bytes"].get<double>(), expect.latent_bytes);
  EXPECT_DOUBLE_EQ(r["model"]["flops"].get<double>(), expect.flops);
  const double partials = 2.0 * plan["partial_rows"].get<double>() * (512 * 2 + 4);
  const double tables = paged ? 0.0 : 4.0 * static_cast<double>(m.decode.lengths.size());
  EXPECT_DOUBLE_EQ(r["model"]["extra_bytes"].get<double>(), partials + tables);
  EXPECT_GT(r["timing"]["median_us"].get<double>(), 0.0);
}

// The points of h_q 16, 24 and 128 x q_len 1, 2 x BF16, FP16 x paged over shuffled 7-token pages and
// contiguous, through each of `backends` in one run (expected: their count x 24 points), each
// verified: FlashInfer's as expect_flashinfer_mla_point says, decode-bench's on its MLA kernel.
void verify_at_every_shape(const json& backends, std::size_t expected_points) {
  const json preset = testing::one_experiment(
      {{"heads_q", {16, 24, 128}}, {"q_len", {1, 2}}, {"dtype", {"bf16", "fp16"}}, {"layout", {"paged", "contiguous"}},
       {"backend", backends}},
      {{"attention", "mla"}, {"kernel", "flash_decode"}, {"page_size", 7}, {"page_order", "shuffled"},
       {"batch", 3}, {"T", 100}, {"length_dist", "uniform"}, {"seed", 5}, {"timing", "hot"}, {"counters", false}});
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), expected_points);
  auto runner = make_kernel_runner(KernelKind::flash_decode);
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    RunContext ctx;
    const json r = runner->run(point, ctx);
    const std::string backend = point.parameters["backend"];
    if (backend != "decode-bench") {
      expect_flashinfer_mla_point(point, r, backend);
    } else {
      ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
      EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r["verification"].dump();
      EXPECT_EQ(r["plan"]["family"], "mla_decode");
    }
  }
}

// One sequence of 20,000 tokens at 16 heads through `backend`: one query tile against every SM's
// share of the KV, so FlashInfer's plan splits it and its kernel merges the partials after its
// grid-wide sync; kernel batch_decode, paged at 64 as the presets are. q_len 2 too.
void verify_split_long_sequence(const std::string& backend) {
  const json preset = testing::one_experiment(
      {{"q_len", {1, 2}}, {"dtype", {"bf16", "fp16"}}},
      {{"attention", "mla"}, {"kernel", "batch_decode"}, {"backend", backend}, {"heads_q", 16},
       {"layout", "paged"}, {"page_size", 64}, {"batch", 1}, {"T", 20000}, {"timing", "hot"}, {"counters", false}});
  auto runner = make_kernel_runner(KernelKind::batch_decode);
  for (const Point& point : testing::plan_of(preset).points) {
    SCOPED_TRACE(point.id);
    RunContext ctx;
    const json r = runner->run(point, ctx);
    expect_flashinfer_mla_point(point, r, backend);
    EXPECT_GE(r["plan"]["merge_ranges"].get<int>(), 1) << r["plan"].dump();
    EXPECT_GT(r["plan"]["partial_rows"].get<int>(), 0) << r["plan"].dump();
  }
}

TEST(FlashInferMlaBackendGpu, VerifiesAtEveryLayoutDtypeHeadCountAndQLen) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer_mla not built: " << flashinfer_build::kNotBuiltReason;
  verify_at_every_shape({"flashinfer_mla", "decode-bench"}, 48);
}

TEST(FlashInferMlaBackendGpu, ASplitLongSequenceMergesInsideTheKernel) {
  DB_REQUIRE_GPU();
  if (!flashinfer_built()) GTEST_SKIP() << "backend flashinfer_mla not built: " << flashinfer_build::kNotBuiltReason;
  verify_split_long_sequence("flashinfer_mla");
}

// Why flashinfer_mla_fa3 cannot run here, or "" where it can: its kernel in the build, a device of
// compute capability 9.0.
std::string fa3_skip_reason() {
  if (*flashinfer_build::kMlaFa3NotBuiltReason != '\0')
    return std::string("backend flashinfer_mla_fa3 not built: ") + flashinfer_build::kMlaFa3NotBuiltReason;
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return "the device's compute capability could not be read";
  if (major != 9 || minor != 0) return "FlashInfer's Hopper MLA kernel runs on compute capability 9.0 only";
  return "";
}

// FlashInfer's Hopper kernel at the same shapes, beside its FA2 kernel and decode-bench's in one run;
// its denominator is the FP32 weights' sum, so its lse is held to the relative rule.
TEST(FlashInferMlaFa3BackendGpu, VerifiesAtEveryLayoutDtypeHeadCountAndQLen) {
  DB_REQUIRE_GPU();
  if (const std::string why = fa3_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  verify_at_every_shape({"flashinfer_mla_fa3", "flashinfer_mla", "decode-bench"}, 72);
}

TEST(FlashInferMlaFa3BackendGpu, ASplitLongSequenceMergesInsideTheKernel) {
  DB_REQUIRE_GPU();
  if (const std::string why = fa3_skip_reason(); !why.empty()) GTEST_SKIP() << why;
  verify_split_long_sequence("flashinfer_mla_fa3");
}

// What the pipeline skips, with the backend's reason, before anything is built.
TEST(FlashInferMlaBackendGpu, Fp8AndTheFa3BackendAreSkippedWithTheirReasons) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"backend", {"flashinfer_mla", "flashinfer_mla_fa3"}}},
      {{"attention", "mla"}, {"kernel", "flash_decode"}, {"heads_q", 16}, {"dtype", "fp8_e4m3"}, {"layout", "paged"},
       {"page_size", 64}, {"batch", 2}, {"T", 256}, {"timing", "hot"}, {"counters", false}});
  auto runner = make_kernel_runner(KernelKind::flash_decode);
  for (const Point& point : testing::plan_of(preset).points) {
    SCOPED_TRACE(point.id);
    RunContext ctx;
    const json r = runner->run(point, ctx);
    EXPECT_EQ(r.value("status", ""), "skipped") << r.dump();
    const std::string why = r.value("reason", "");
    const bool built = point.parameters["backend"] == "flashinfer_mla"
                           ? flashinfer_built()
                           : *flashinfer_build::kMlaFa3NotBuiltReason == '\0';
    EXPECT_NE(why.find(built ? "dtype fp8_e4m3" : "not built"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
