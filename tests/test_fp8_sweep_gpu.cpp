// FP8 decode points through the sweep's runner on every data and verification path: K/V filled on
// the device or on the host, checked by the GPU or the CPU float64 reference. All four hold the
// same bytes and scales, so every path passes with the FP32 bound, the kernel's output (hence its
// error against either reference) is the same whatever the fill, and the two references give the
// same error to within their summation order. Skipped (with the reason) where no GPU exists.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sweep_test_support.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "sweeps/decode_verify.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

struct Path {
  bool verify_on_host, fill_on_host;
};

json run_point(PointRunner& runner, const Point& point, Path path) {
  RunContext ctx;
  ctx.verify_on_host = path.verify_on_host;
  ctx.fill_on_host = path.fill_on_host;
  return runner.run(point, ctx);
}

TEST(Fp8SweepGpu, DeviceAndHostFillsAndReferencesAgree) {
  DB_REQUIRE_GPU();
  // GQA group 4, D = 128, three sequences of 1000 tokens (no multiple of the 16-token pages).
  const json preset = testing::one_experiment(
      {{"dtype", {"fp8_e4m3", "fp8_e5m2"}}, {"layout", {"contiguous", "paged"}}},
      {{"kernel", "flash_decode"}, {"heads_q", 16}, {"heads_kv", 4}, {"head_dim", 128}, {"T", 1000}, {"batch", 3},
       {"page_size", 16}, {"page_order", "shuffled"}, {"timing", "hot"}, {"counters", false}});
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 4u);
  auto runner = make_kernel_runner(KernelKind::flash_decode);
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    const json gpu = run_point(*runner, point, {false, false});         // the defaults
    const json gpu_host_fill = run_point(*runner, point, {false, true});
    const json cpu = run_point(*runner, point, {true, false});
    const json cpu_host_fill = run_point(*runner, point, {true, true});  // the old paths
    for (const json* r : {&gpu, &gpu_host_fill, &cpu, &cpu_host_fill}) {
      ASSERT_EQ(r->value("status", ""), "ok") << r->dump();
      EXPECT_EQ((*r)["verification"]["tolerance"], 1e-5);
      EXPECT_TRUE((*r)["verification"]["passed"].get<bool>()) << r->dump();
      EXPECT_GT((*r)["verification"]["max_rel_error"].get<double>(), 0.0) << "fp32 arithmetic leaves some error";
    }
    EXPECT_EQ(gpu["verification"]["method"], kVerifyOnDevice);
    EXPECT_EQ(cpu["verification"]["method"], kVerifyOnHost);
    const auto err = [](const json& r) { return r["verification"]["max_rel_error"].get<double>(); };
    // Same bytes in the pool whichever side generated them: bit-identical kernel outputs.
    EXPECT_EQ(err(gpu), err(gpu_host_fill));
    EXPECT_EQ(err(cpu), err(cpu_host_fill));
    // Same math, other summation order: the errors of ~1e-7 agree to far below their size.
    EXPECT_NEAR(err(gpu), err(cpu), 1e-6 * err(cpu));
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
