// MLA decode points through the sweep's one pipeline on the GPU: the latent cache built and
// filled, q, o and lse poisoned and checked against the float64 MLA reference on the host, timed,
// and recorded with the MLA model (the latent rows once per sequence, FLOPs 2 x rows x 1088 per
// token) and its roofline bound. Skipped (with the reason) where no GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/results_schema.hpp"
#include "kernels/mla/mla_decode.hpp"         // kMlaNarrowMaxRows
#include "kernels/mla/mla_decode_wgmma.hpp"  // mla_prefers_wgmma, mla_decode_wgmma_available
#include "kernels/mla/mla_shape.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/decode_verify.hpp"
#include "sweeps/driver.hpp"
#include "sweeps/mla_point.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// h_q 16, 24 and 128 at q_len 1 and 2 over three ragged sequences (a uniform draw of mean 100);
// BF16, FP16 and FP8 E4M3; paged (7-token pages, shuffled) and contiguous.
TEST(MlaSweepGpu, ShortPointsVerifyAndRecordTheMlaModel) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"heads_q", {16, 24, 128}}, {"q_len", {1, 2}}, {"dtype", {"bf16", "fp16", "fp8_e4m3"}},
       {"layout", {"paged", "contiguous"}}},
      {{"attention", "mla"}, {"kernel", "flash_decode"}, {"page_size", 7}, {"page_order", "shuffled"},
       {"batch", 3}, {"T", 100}, {"length_dist", "uniform"}, {"seed", 5}, {"timing", "hot"}, {"counters", false}});
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 36u);
  auto runner = make_kernel_runner(KernelKind::flash_decode);
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    RunContext ctx;
    const json r = runner->run(point, ctx);
    ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
    EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r["verification"].dump();
    EXPECT_EQ(r["verification"]["method"], kVerifyOnHost);
    EXPECT_EQ(r["verification"]["reference"], "mla_reference");
    EXPECT_EQ(r["verification"]["non_finite"], 0);
    EXPECT_GT(r["verification"]["rows_checked"].get<int>(), 0);
    EXPECT_EQ(r["plan"]["family"], "mla_decode");
    // Rows = h_q x q_len: in FP16 / BF16 on the warpgroup-MMA kernel where the device runs it
    // (Hopper) and the dispatch prefers it (more than 16 rows, or 16 over enough tokens); else up to
    // 32 on the narrow kernel, more on the 64-row one.
    const MlaPoint m = parse_mla_point(point.parameters);
    const int rows = m.shape.rows();
    const bool half = m.decode.dtype == DType::fp16 || m.decode.dtype == DType::bf16;
    const std::int64_t max_len = *std::max_element(m.decode.lengths.begin(), m.decode.lengths.end());
    const bool preferred = mla_prefers_wgmma(m.shape, static_cast<int>(m.decode.lengths.size()), max_len);
    const char* kernel = preferred && half && mla_decode_wgmma_available(m.shape, m.decode.dtype, 0)
                             ? "mla_decode_wgmma"
                         : rows <= kMlaNarrowMaxRows ? "mla_decode_mma_narrow"
                                                     : "mla_decode_mma";
    EXPECT_EQ(r["plan"]["kernel"], kernel);
    // The model: the latent rows once per sequence, q, o and lse; FLOPs of every visible token.
    std::vector<std::int32_t> pages;
    if (m.decode.paged)
      for (const std::int32_t len : m.decode.lengths) pages.push_back((len + 6) / 7);
    const MlaTrafficModel expect = mla_traffic_model(m.shape, m.decode.dtype, m.decode.lengths, pages);
    EXPECT_DOUBLE_EQ(r["model"]["latent_bytes"].get<double>(), expect.latent_bytes);
    EXPECT_DOUBLE_EQ(r["model"]["k_bytes"].get<double>(), expect.latent_bytes);
    EXPECT_DOUBLE_EQ(r["model"]["v_bytes"].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(r["model"]["bytes"].get<double>(), expect.minimum_bytes());
    EXPECT_DOUBLE_EQ(r["model"]["flops"].get<double>(), expect.flops);
    EXPECT_DOUBLE_EQ(r["bound"]["bytes"].get<double>(), expect.minimum_bytes());
    EXPECT_GT(r["timing"]["median_us"].get<double>(), 0.0);
    // What the driver writes satisfies the results schema.
    json doc = make_results_document(make_meta({}, "t"), host_device_info());
    json written = r;
    written["id"] = point.id;
    written["parameters"] = point.parameters;
    doc["points"].push_back(written);
    EXPECT_NO_THROW(validate_results(doc));
  }
}

// Kernel batch_decode, the blocks axis honoured (8 splits merged by their LSE at 2000 tokens; one
// at a one-token sequence), both verified.
TEST(MlaSweepGpu, BatchDecodeWithForcedSplits) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"T", {1, 2000}}},
      {{"attention", "mla"}, {"kernel", "batch_decode"}, {"heads_q", 32}, {"dtype", "bf16"}, {"layout", "paged"},
       {"page_size", 64}, {"batch", 2}, {"blocks", 8}, {"timing", "hot"}, {"counters", false}, {"q_len", 1}});
  auto runner = make_kernel_runner(KernelKind::batch_decode);
  for (const Point& point : testing::plan_of(preset).points) {
    SCOPED_TRACE(point.id);
    RunContext ctx;
    const json r = runner->run(point, ctx);
    ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
    EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r["verification"].dump();
    EXPECT_EQ(r["plan"]["num_splits"], point.parameters["T"] == 1 ? 1 : 8);
  }
}

// DECODE_BENCH_MLA_TILE (the run's tuning policy) reaches the warpgroup-MMA plan: both tilings
// verified and recorded (tile_tokens, stages) where the device runs that kernel.
TEST(MlaSweepGpu, TileKnobReachesTheWarpgroupPlan) {
  DB_REQUIRE_GPU();
  MlaShape h128;
  if (!mla_decode_wgmma_available(h128, DType::bf16, 0)) GTEST_SKIP() << "no warpgroup-MMA MLA kernel on this device";
  const json preset = testing::one_experiment(
      {{"q_len", {1, 2}}},
      {{"attention", "mla"}, {"kernel", "flash_decode"}, {"heads_q", 128}, {"dtype", "bf16"}, {"layout", "paged"},
       {"page_size", 64}, {"batch", 2}, {"T", 300}, {"timing", "hot"}, {"counters", false}});
  auto runner = make_kernel_runner(KernelKind::flash_decode);
  for (const Point& point : testing::plan_of(preset).points)
    for (int tile : {0, 64, 32}) {
      SCOPED_TRACE(point.id + " tile " + std::to_string(tile));
      RunContext ctx;
      ctx.tuning.mla_tile = tile;
      const json r = runner->run(point, ctx);
      ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
      EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r["verification"].dump();
      EXPECT_EQ(r["plan"]["kernel"], "mla_decode_wgmma");
      const int expected = tile != 0 ? tile : 64;  // auto: 64-token tiles
      EXPECT_EQ(r["plan"]["tile_tokens"], expected);
      EXPECT_EQ(r["plan"]["stages"], mla_wgmma_stages(expected));
    }
}

// DECODE_BENCH_MLA_KERNEL (the run's tuning policy) pins the kernel: each verified and recorded
// where it computes the point; a pin it cannot honour (the narrow kernel at 64 rows) fails the
// point with the reason, no speed reported. Auto at 8 rows over 600 tokens: the narrow kernel.
TEST(MlaSweepGpu, KernelKnobPinsTheKernelOrFailsWithTheReason) {
  DB_REQUIRE_GPU();
  const json preset = testing::one_experiment(
      {{"heads_q", {8, 64}}},
      {{"attention", "mla"}, {"kernel", "flash_decode"}, {"dtype", "bf16"}, {"layout", "paged"}, {"page_size", 64},
       {"batch", 2}, {"T", 300}, {"timing", "hot"}, {"counters", false}});
  auto runner = make_kernel_runner(KernelKind::flash_decode);
  const bool wgmma = mla_decode_wgmma_available(MlaShape{}, DType::bf16, 0);
  const std::vector<std::pair<std::optional<MlaKernel>, std::string>> pins = {
      {std::nullopt, ""},
      {MlaKernel::wgmma, "mla_decode_wgmma"},
      {MlaKernel::mma_narrow, "mla_decode_mma_narrow"},
      {MlaKernel::mma, "mla_decode_mma"}};
  for (const Point& point : testing::plan_of(preset).points)
    for (const auto& [pin, name] : pins) {
      SCOPED_TRACE(point.id + " pin " + name);
      RunContext ctx;
      ctx.tuning.mla_kernel = pin;
      const json r = runner->run(point, ctx);
      const bool eight = point.parameters["heads_q"] == 8;
      const bool refused = (pin == MlaKernel::mma_narrow && !eight) || (pin == MlaKernel::wgmma && !wgmma);
      if (refused) {
        EXPECT_EQ(r.value("status", ""), "error") << r.dump();
        EXPECT_NE(r.dump().find("does not compute this point"), std::string::npos) << r.dump();
        EXPECT_FALSE(r.contains("timing") && r["timing"].contains("median_us")) << r.dump();
        continue;
      }
      ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
      EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r["verification"].dump();
      const std::string expect = !name.empty() ? name
                                 : !eight && wgmma ? "mla_decode_wgmma"
                                 : eight          ? "mla_decode_mma_narrow"
                                                  : "mla_decode_mma";
      EXPECT_EQ(r["plan"]["kernel"], expect);
    }
}

}  // namespace
}  // namespace decode_bench::sweeps
