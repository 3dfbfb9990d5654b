// The FlashInfer launchers' argument checks (backends/flashinfer/), on the host: what they refuse
// and with which sentence, before any CUDA call. The GQA groups come from FlashInfer's own dispatch
// table, so its sentence is the reason; the launches themselves are GPU tests
// (tests/test_flashinfer_decode_gpu.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/flashinfer/flashinfer_batch_decode.hpp"
#include "backends/flashinfer/flashinfer_single_decode.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

TEST(FlashInferLaunch, CudaCoreGroupsAreFlashInfersDispatchTable) {
  for (int group : {1, 2, 3, 4, 6, 8}) {
    EXPECT_EQ(cuda_core_decode_unsupported_reason(4 * group, 4, 128), std::nullopt) << "group " << group;
  }
  for (int group : {5, 7, 9, 16}) {
    EXPECT_EQ(cuda_core_decode_unsupported_reason(4 * group, 4, 128), "Unsupported group_size: " + std::to_string(group));
  }
}

TEST(FlashInferLaunch, RefusesShapesTheLaunchersDoNotCompile) {
  const auto d64 = cuda_core_decode_unsupported_reason(8, 8, 64);
  ASSERT_TRUE(d64.has_value());
  EXPECT_NE(d64->find("head_dim 64"), std::string::npos) << *d64;
  const auto heads = cuda_core_decode_unsupported_reason(6, 4, 128);
  ASSERT_TRUE(heads.has_value());
  EXPECT_NE(heads->find("heads_q 6"), std::string::npos) << *heads;
  EXPECT_TRUE(cuda_core_decode_unsupported_reason(0, 1, 128).has_value());
}

template <class KV = __half>
SingleDecodeArgs<KV> single_args(int heads_q, int heads_kv, std::int64_t kv_len) {
  // Pointers that are never dereferenced: every case here is refused or only sized.
  static io_type_of<KV> io[1];
  static KV kv[1];
  static float scales[1];
  SingleDecodeArgs<KV> a;
  a.q = a.o = io;
  a.k = a.v = kv;
  if constexpr (is_fp8_kv<KV>) a.k_scale = a.v_scale = scales;
  a.heads_q = heads_q;
  a.heads_kv = heads_kv;
  a.head_dim = 128;
  a.kv_len = kv_len;
  a.kv_head_stride = kv_len * 128;
  a.kv_token_stride = 128;
  a.sm_scale = 0.088f;
  return a;
}

TEST(FlashInferLaunch, SingleDecodeRefusesGroupSevenWithFlashInfersReason) {
  std::string error;
  EXPECT_EQ(single_decode(single_args(28, 4, 100), nullptr, 0, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_EQ(error, "Unsupported group_size: 7");
}

TEST(FlashInferLaunch, SingleDecodeRefusals) {
  EXPECT_EQ(single_decode_unsupported_reason(single_args(32, 8, 100)), std::nullopt);
  EXPECT_TRUE(single_decode_unsupported_reason(single_args(32, 8, 0)).has_value());
  auto no_q = single_args(32, 8, 100);
  no_q.q = nullptr;
  EXPECT_TRUE(single_decode_unsupported_reason(no_q).has_value());
  auto tight = single_args(32, 8, 100);
  tight.kv_token_stride = 64;
  EXPECT_TRUE(single_decode_unsupported_reason(tight).has_value());
  // 8 heads of 4M tokens x 128 elements pass 2^32 elements: the kernel's offsets are 32-bit.
  const auto wide = single_decode_unsupported_reason(single_args(8, 8, std::int64_t{1} << 22));
  ASSERT_TRUE(wide.has_value());
  EXPECT_NE(wide->find("32-bit"), std::string::npos) << *wide;
  EXPECT_EQ(single_decode_unsupported_reason(single_args(8, 8, std::int64_t{1} << 21)), std::nullopt);
}

TEST(FlashInferLaunch, SingleDecodeWorkspaceIsOneChunkPer256Tokens) {
  EXPECT_EQ(single_decode_workspace_bytes(single_args(32, 8, 256)), 0u);  // never split
  // ceil(T / 256) chunks of (H_q, 128) FP16 partials and H_q float LSEs.
  EXPECT_EQ(single_decode_workspace_bytes(single_args(32, 8, 257)), 2u * 32 * (128 * 2 + 4));
  EXPECT_EQ(single_decode_workspace_bytes(single_args(32, 8, 4096)), 16u * 32 * (128 * 2 + 4));
  std::string error;
  static unsigned char small[16];
  EXPECT_EQ(single_decode(single_args(32, 8, 4096), small, sizeof small, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_NE(error.find("workspace of 16 bytes"), std::string::npos) << error;
}

template <class KV = __half>
PagedDecodeArgs<KV> paged_shape(int heads_q, int heads_kv, int batch) {
  PagedDecodeArgs<KV> a;
  a.batch = batch;
  a.heads_q = heads_q;
  a.heads_kv = heads_kv;
  a.head_dim = 128;
  a.page_size = 16;
  a.sm_scale = 0.088f;
  return a;
}

TEST(FlashInferLaunch, PagedDecodeRefusesBeforeTouchingTheDevice) {
  const std::vector<std::int32_t> indptr = {0, 2, 5};
  std::size_t float_bytes = 0, int_bytes = 0;
  std::string error;
  EXPECT_EQ(paged_decode_workspace_bytes(paged_shape(28, 4, 2), indptr.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_EQ(error, "Unsupported group_size: 7");

  const std::vector<std::int32_t> empty_seq = {0, 2, 2};
  EXPECT_EQ(paged_decode_workspace_bytes(paged_shape(32, 8, 2), empty_seq.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_NE(error.find("sequence 1 has no page"), std::string::npos) << error;

  const std::vector<std::int32_t> offset = {1, 2, 5};
  EXPECT_EQ(paged_decode_workspace_bytes(paged_shape(32, 8, 2), offset.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_NE(error.find("indptr_host[0]"), std::string::npos) << error;

  EXPECT_TRUE(paged_decode_unsupported_reason(paged_shape(32, 8, 0)).has_value());
  auto no_page = paged_shape(32, 8, 2);
  no_page.page_size = 0;
  EXPECT_TRUE(paged_decode_unsupported_reason(no_page).has_value());

  // Strides: all 0 (packed pages) or all at least head_dim, each within 32 bits.
  auto strided = paged_shape(32, 8, 2);
  strided.page_stride = 16 * 128;
  strided.head_stride = 4096 * 128;
  strided.token_stride = 128;
  EXPECT_EQ(paged_decode_unsupported_reason(strided), std::nullopt);
  strided.token_stride = 0;
  EXPECT_TRUE(paged_decode_unsupported_reason(strided).has_value());
  strided.token_stride = 128;
  strided.head_stride = std::int64_t{1} << 32;
  const auto wide = paged_decode_unsupported_reason(strided);
  ASSERT_TRUE(wide.has_value());
  EXPECT_NE(wide->find("32 bits"), std::string::npos) << *wide;

  // run refuses a missing plan or pointers with its own sentence.
  PagedDecodePlan plan;
  EXPECT_EQ(paged_decode_run(paged_shape(32, 8, 2), plan, nullptr, nullptr, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_NE(error.find("must be set"), std::string::npos) << error;
}

// The K/V types: the workspace holds partials in o's type (BF16 for BF16 K/V, FP16 for FP8 K/V),
// FP8 K/V need their per-head scales and 16-bit K/V take none.
TEST(FlashInferLaunch, EachKvTypeSizesAndChecksItsScales) {
  EXPECT_EQ(single_decode_workspace_bytes(single_args<__nv_bfloat16>(32, 8, 4096)), 16u * 32 * (128 * 2 + 4));
  EXPECT_EQ(single_decode_workspace_bytes(single_args<__nv_fp8_e4m3>(32, 8, 4096)), 16u * 32 * (128 * 2 + 4));
  EXPECT_EQ(single_decode_unsupported_reason(single_args<__nv_bfloat16>(32, 8, 100)), std::nullopt);
  EXPECT_EQ(single_decode_unsupported_reason(single_args<__nv_fp8_e4m3>(32, 8, 100)), std::nullopt);
  EXPECT_EQ(single_decode_unsupported_reason(single_args<__nv_fp8_e5m2>(32, 8, 100)), std::nullopt);

  auto unscaled = single_args<__nv_fp8_e5m2>(32, 8, 100);
  unscaled.v_scale = nullptr;
  EXPECT_EQ(single_decode_unsupported_reason(unscaled), "FP8 K/V need k_scale and v_scale (one per KV head)");
  std::string error;
  EXPECT_EQ(single_decode(unscaled, nullptr, 0, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_EQ(error, "FP8 K/V need k_scale and v_scale (one per KV head)");
  auto scaled = single_args<__nv_bfloat16>(32, 8, 100);
  static float scale[1];
  scaled.k_scale = scale;
  EXPECT_EQ(single_decode_unsupported_reason(scaled), "k_scale and v_scale are for FP8 K/V only");

  PagedDecodePlan plan;
  plan.padded_batch_size = 2;
  static int table[1];
  static __half io[1];
  static __nv_fp8_e4m3 kv[1];
  auto paged = paged_shape<__nv_fp8_e4m3>(32, 8, 2);
  paged.q = paged.o = io;
  paged.k_pages = paged.v_pages = kv;
  paged.page_indices = paged.indptr = paged.last_page_len = table;
  EXPECT_EQ(paged_decode_run(paged, plan, nullptr, table, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_EQ(error, "FP8 K/V need k_scale and v_scale (one per KV head)");
}

}  // namespace
}  // namespace decode_bench::flashinfer_launch
