// The `flashinfer` backend through the sweep's pipeline runner, as `--set backend=flashinfer` runs
// it: each way it maps a point onto FlashInfer (one contiguous sequence: single decode; a
// contiguous batch: batch decode over page tables into the slots; paged: batch decode over the
// pool's shuffled pages, also the plain decode of a shared-prefix batch) verified against the
// float64 reference with the FP16 rule, its plan and backend recorded; GQA group 7 skipped with
// FlashInfer's sentence. Skipped (with the reason) where no GPU exists or FlashInfer is not built.
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "flashinfer_build.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

json run_flashinfer_point(KernelKind kernel, json params) {
  json common = {{"kernel", std::string(kernel_name(kernel))},
                 {"backend", "flashinfer"},
                 {"dtype", "fp16"},
                 {"head_dim", 128},
                 {"timing", "hot"},
                 {"counters", false}};
  common.update(params);
  const Plan plan = testing::plan_of(testing::one_experiment(json::object(), common));
  EXPECT_EQ(plan.points.size(), 1u);
  RunContext ctx;
  return make_kernel_runner(kernel)->run(plan.points.at(0), ctx);
}

void expect_verified(const json& r, std::string_view family, std::string_view kv_access) {
  ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
  EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r.dump();
  EXPECT_EQ(r["verification"]["tolerance"], 1e-3);
  EXPECT_EQ(r["backend"]["name"], "flashinfer");
  EXPECT_EQ(r["backend"]["version"], flashinfer_build::kVersion);
  EXPECT_EQ(r["backend"]["io_dtype"], "fp16");
  EXPECT_EQ(r["plan"]["family"], family) << r["plan"].dump();
  EXPECT_EQ(r["plan"]["kv_access"], kv_access) << r["plan"].dump();
}

TEST(FlashInferBackendGpu, EveryLayoutVerifiesThroughThePipeline) {
  DB_REQUIRE_GPU();
  if (std::string_view(flashinfer_build::kVersion).empty())
    GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  for (const auto& [heads_q, heads_kv] : {std::pair{32, 8}, std::pair{8, 8}}) {
    SCOPED_TRACE("heads " + std::to_string(heads_q) + "/" + std::to_string(heads_kv));
    const json heads = {{"heads_q", heads_q}, {"heads_kv", heads_kv}};
    json one = heads;
    one.update({{"layout", "contiguous"}, {"batch", 1}, {"T", 5000}});
    expect_verified(run_flashinfer_point(KernelKind::flash_decode, one), "flashinfer_single_decode", "contiguous");
    json slots = heads;
    slots.update({{"layout", "contiguous"}, {"batch", 3}, {"T", 1000}});
    expect_verified(run_flashinfer_point(KernelKind::flash_decode, slots), "flashinfer_batch_decode",
                    "contiguous_as_pages");
    json paged = heads;
    paged.update({{"layout", "paged"}, {"page_size", 16}, {"page_order", "shuffled"}, {"batch", 3}, {"T", 1000}});
    const json r = run_flashinfer_point(KernelKind::flash_decode, paged);
    expect_verified(r, "flashinfer_batch_decode", "paged");
    EXPECT_EQ(r["plan"]["page_size"], 16);
  }
  const json forked = {{"layout", "paged"}, {"page_size", 16}, {"batch", 4},        {"heads_q", 32},
                       {"heads_kv", 8},     {"prefix_len", 512}, {"suffix_len", 64}};
  expect_verified(run_flashinfer_point(KernelKind::batch_decode, forked), "flashinfer_batch_decode", "paged");
}

TEST(FlashInferBackendGpu, GroupSevenIsSkippedWithFlashInfersSentence) {
  DB_REQUIRE_GPU();
  if (std::string_view(flashinfer_build::kVersion).empty())
    GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  const json r = run_flashinfer_point(KernelKind::flash_decode, {{"heads_q", 28}, {"heads_kv", 4}, {"T", 64}});
  EXPECT_EQ(r.value("status", ""), "skipped") << r.dump();
  EXPECT_EQ(r.value("reason", ""), "FlashInfer's CUDA-core decode: Unsupported group_size: 7");
}

}  // namespace
}  // namespace decode_bench::sweeps
