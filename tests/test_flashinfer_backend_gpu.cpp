// The `flashinfer` backend through the sweep's pipeline runner, as `--set backend=flashinfer` runs
// it: each way it maps a point onto FlashInfer (one contiguous sequence: single decode; a
// contiguous batch: batch decode over page tables into the slots; paged: batch decode over the
// pool's shuffled pages, also the plain decode of a shared-prefix batch), for each K/V type it
// compiles (FP16, BF16, FP8 E4M3 and E5M2 with the sweep's random per-KV-head scales), verified
// against the float64 reference with the rule of the point's K/V and o types, its plan and backend
// recorded; GQA group 7 skipped with FlashInfer's sentence. Skipped (with the reason) where no GPU
// exists or FlashInfer is not built.
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "flashinfer_build.hpp"
#include "harness/verify.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/flashinfer_backend_test_support.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

json run_flashinfer_point(KernelKind kernel, json params, std::string_view dtype = "fp16") {
  params["dtype"] = std::string(dtype);
  return ::decode_bench::testing::run_backend_point(kernel, "flashinfer", std::move(params));
}

// q and o: BF16 for BF16 K/V, FP16 for FP16 and FP8.
DType io_of(DType kv) { return kv == DType::bf16 ? DType::bf16 : DType::fp16; }

void expect_verified(const json& r, DType kv, std::string_view family, std::string_view kv_access) {
  ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
  EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r.dump();
  EXPECT_EQ(r["verification"]["tolerance"], verification_tolerance(kv, io_of(kv))) << r["verification"].dump();
  EXPECT_EQ(r["backend"]["name"], "flashinfer");
  EXPECT_EQ(r["backend"]["version"], flashinfer_build::kVersion);
  EXPECT_EQ(r["backend"]["io_dtype"], std::string(dtype_name(io_of(kv))));
  EXPECT_EQ(r["plan"]["family"], family) << r["plan"].dump();
  EXPECT_EQ(r["plan"]["kv_access"], kv_access) << r["plan"].dump();
  if (dtype_is_fp8(kv)) {
    EXPECT_EQ(r["plan"]["variant"]["name"], "kv_head_scale") << r["plan"].dump();
  } else {
    EXPECT_FALSE(r["plan"].contains("variant")) << r["plan"].dump();
  }
}

TEST(FlashInferBackendGpu, EveryLayoutAndKvTypeVerifiesThroughThePipeline) {
  DB_REQUIRE_GPU();
  if (std::string_view(flashinfer_build::kVersion).empty())
    GTEST_SKIP() << "backend flashinfer not built: " << flashinfer_build::kNotBuiltReason;
  for (const DType kv : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2}) {
    const std::string_view dtype = dtype_name(kv);
    for (const auto& [heads_q, heads_kv] : {std::pair{32, 8}, std::pair{8, 8}}) {
      SCOPED_TRACE(std::string(dtype) + " heads " + std::to_string(heads_q) + "/" + std::to_string(heads_kv));
      const json heads = {{"heads_q", heads_q}, {"heads_kv", heads_kv}};
      json one = heads;
      one.update({{"layout", "contiguous"}, {"batch", 1}, {"T", 5000}});
      expect_verified(run_flashinfer_point(KernelKind::flash_decode, one, dtype), kv, "flashinfer_single_decode",
                      "contiguous");
      json slots = heads;
      slots.update({{"layout", "contiguous"}, {"batch", 3}, {"T", 1000}});
      expect_verified(run_flashinfer_point(KernelKind::flash_decode, slots, dtype), kv, "flashinfer_batch_decode",
                      "contiguous_as_pages");
      json paged = heads;
      paged.update({{"layout", "paged"}, {"page_size", 16}, {"page_order", "shuffled"}, {"batch", 3}, {"T", 1000}});
      const json r = run_flashinfer_point(KernelKind::flash_decode, paged, dtype);
      expect_verified(r, kv, "flashinfer_batch_decode", "paged");
      EXPECT_EQ(r["plan"]["page_size"], 16);
    }
    const json forked = {{"layout", "paged"}, {"page_size", 16}, {"batch", 4},        {"heads_q", 32},
                         {"heads_kv", 8},     {"prefix_len", 512}, {"suffix_len", 64}};
    expect_verified(run_flashinfer_point(KernelKind::batch_decode, forked, dtype), kv, "flashinfer_batch_decode",
                    "paged");
  }
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
