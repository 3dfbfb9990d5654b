// FlashInfer's MLA launchers on the host (backends/flashinfer/flashinfer_mla.hpp): the workspace
// bound in closed form, the work-list bound, the shape checks and the plan's and run's refusals,
// all before any CUDA call (there is no device here). Runs are GPU tests
// (tests/test_flashinfer_mla_backend_gpu.cpp).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/flashinfer/flashinfer_mla.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

// DeepSeek-V3's latent in decode-bench's pool: 576-wide rows, pages of 64, kpe after 512 ckv.
MlaArgs shape() {
  MlaArgs a;
  a.batch = 2;
  a.q_len = 1;
  a.heads = 16;
  a.kv_lora_rank = 512;
  a.rope_dim = 64;
  a.page_size = 64;
  a.row_stride = 576;
  a.page_stride = 64 * 576;
  a.kpe_offset = 512;
  a.sm_scale = 0.07f;
  return a;
}

// MLAPlan's allocations: nine work arrays of 16384 int32 (64 KiB each) and five of one int32 per SM,
// each rounded up to 16 bytes; partials for 2 x 64 rows per SM, 512 16-bit values and an FP32 LSE
// each.
TEST(FlashInferMlaLaunch, WorkspaceBoundsInClosedForm) {
  std::size_t f = 0, i = 0;
  mla_workspace_bytes(132, &f, &i);
  EXPECT_EQ(i, 9u * 65536 + 5 * 528);
  EXPECT_EQ(f, 132u * 128 * 1024 + 132 * 128 * 4);
  mla_workspace_bytes(78, &f, &i);
  EXPECT_EQ(i, 9u * 65536 + 5 * 320);  // 312 bytes rounded up to 320
  EXPECT_EQ(f, 78u * 128 * 1024 + 78 * 128 * 4);
}

// At least one item per (request, 64-row query tile), plus at most one per SM when split.
TEST(FlashInferMlaLaunch, WorkListBound) {
  EXPECT_EQ(mla_work_list_reason(128, 2, 128, 132), std::nullopt);  // 128 x 4 tiles + 132
  EXPECT_EQ(mla_work_list_reason(16384 - 132, 1, 64, 132), std::nullopt);
  const auto why = mla_work_list_reason(16384 - 131, 1, 64, 132);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("holds at most 16384 work items"), std::string::npos) << *why;
  EXPECT_TRUE(mla_work_list_reason(8192, 2, 64, 132).has_value());  // 2 tiles each
}

TEST(FlashInferMlaLaunch, ShapeChecksNameTheField) {
  EXPECT_EQ(mla_unsupported_reason(shape()), std::nullopt);
  const auto says = [](MlaArgs a, const std::string& part) {
    const auto why = mla_unsupported_reason(a);
    ASSERT_TRUE(why.has_value()) << part;
    EXPECT_NE(why->find(part), std::string::npos) << *why;
  };
  MlaArgs a = shape();
  a.kv_lora_rank = 256;
  says(a, "kv_lora_rank 256, rope_dim 64: FlashInfer's MLA kernel is compiled here for 512 and 64");
  a = shape();
  a.q_len = 0;
  says(a, "q_len 0");
  a = shape();
  a.heads = 0;
  says(a, "heads 0");
  a = shape();
  a.page_stride = 63 * 576;  // shorter than a page
  says(a, "page_stride >= page_size x row_stride");
  a = shape();
  a.page_size = 8'000'000;
  a.page_stride = 8'000'000LL * 576;
  says(a, "page_stride must fit 32 bits");
  a = shape();
  a.kpe_offset = 500;
  says(a, "kpe_offset");
  a = shape();
  a.row_stride = 580;
  a.page_stride = 64 * 580;
  says(a, "multiples of 8 elements");
  a = shape();
  a.sm_scale = 0;
  says(a, "sm_scale");
}

TEST(FlashInferMlaLaunch, PlanAndRunRefuseBeforeAnyCudaCall) {
  std::vector<unsigned char> host(1 << 20);
  std::vector<unsigned char> fake_device(16);
  MlaPlan plan;
  std::string error;
  const MlaArgs a = shape();
  // 100 and 64 tokens in 2 and 1 pages of 64.
  const std::int32_t indptr[] = {0, 2, 3};
  const std::int32_t short_lens[] = {100, 0};
  EXPECT_EQ(mla_plan(a, indptr, short_lens, fake_device.data(), 16, fake_device.data(), host.data(), host.size(),
                     nullptr, &plan, &error),
            cudaErrorInvalidValue);
  EXPECT_NE(error.find("request 1 has 0 KV tokens in 1 pages of 64"), std::string::npos) << error;
  const std::int32_t too_long[] = {129, 64};  // 129 tokens do not fit 2 pages
  EXPECT_EQ(mla_plan(a, indptr, too_long, fake_device.data(), 16, fake_device.data(), host.data(), host.size(),
                     nullptr, &plan, &error),
            cudaErrorInvalidValue);
  EXPECT_NE(error.find("request 0 has 129 KV tokens in 2 pages"), std::string::npos) << error;
  const std::int32_t lens[] = {100, 64};
  EXPECT_EQ(mla_plan(a, indptr, lens, nullptr, 0, fake_device.data(), host.data(), host.size(), nullptr, &plan, &error),
            cudaErrorInvalidValue);
  EXPECT_NE(error.find("workspace"), std::string::npos) << error;
  MlaArgs q2 = a;
  q2.q_len = 2;
  const std::int32_t one[] = {1, 64};  // fewer tokens than query positions
  EXPECT_EQ(mla_plan(q2, indptr, one, fake_device.data(), 16, fake_device.data(), host.data(), host.size(), nullptr,
                     &plan, &error),
            cudaErrorInvalidValue);
  EXPECT_NE(error.find("at least q_len (2) tokens"), std::string::npos) << error;

  for (const auto run : {&mla_run_bf16, &mla_run_fp16}) {
    EXPECT_EQ(run(a, MlaPlan{}, fake_device.data(), fake_device.data(), nullptr, &error), cudaErrorInvalidValue);
    EXPECT_NE(error.find("q, latent, page_indices and o must be set"), std::string::npos) << error;
    MlaArgs bad = a;
    bad.rope_dim = 32;
    EXPECT_EQ(run(bad, MlaPlan{}, nullptr, nullptr, nullptr, &error), cudaErrorInvalidValue);
    EXPECT_NE(error.find("rope_dim 32"), std::string::npos) << error;
  }
}

}  // namespace
}  // namespace decode_bench::flashinfer_launch
