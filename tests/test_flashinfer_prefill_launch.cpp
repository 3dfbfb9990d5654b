// The FlashInfer batch-prefill and merge launchers' argument checks (backends/flashinfer/), on the
// host: what they refuse and with which sentence, before any CUDA call (FlashInfer's plan reads the
// device only after these checks). The launches are GPU tests, through the backends
// (tests/test_flashinfer_tc_backend_gpu.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/flashinfer/flashinfer_batch_prefill.hpp"
#include "backends/flashinfer/flashinfer_merge_state.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

PagedPrefillArgs prefill_shape(int heads_q, int heads_kv, int requests, int rows) {
  PagedPrefillArgs a;
  a.heads_q = heads_q;
  a.heads_kv = heads_kv;
  a.head_dim = 128;
  a.requests = requests;
  a.total_rows = rows;
  a.page_size = 16;
  a.sm_scale = 0.088f;
  return a;
}

TEST(FlashInferPrefillLaunch, TakesEveryGqaGroupAtEveryCompiledHeadDim) {
  for (int head_dim : kPrefillHeadDims) {
    for (int group : {1, 4, 5, 7, 9, 12, 16, 32, 64}) {
      PagedPrefillArgs a = prefill_shape(2 * group, 2, 3, 3);
      a.head_dim = head_dim;
      EXPECT_EQ(paged_prefill_unsupported_reason(a), std::nullopt) << "group " << group << " head_dim " << head_dim;
    }
  }
}

TEST(FlashInferPrefillLaunch, RefusesShapesItDoesNotCompileOrAddress) {
  EXPECT_EQ(paged_prefill_unsupported_reason(prefill_shape(6, 4, 1, 1)), "heads_q 6 must be a positive multiple of heads_kv 4");
  PagedPrefillArgs d96 = prefill_shape(8, 8, 1, 1);
  d96.head_dim = 96;
  EXPECT_EQ(paged_prefill_unsupported_reason(d96),
            "head_dim 96: the FlashInfer prefill launchers are compiled for head_dim 64, 128 and 256");
  EXPECT_EQ(paged_prefill_unsupported_reason(prefill_shape(8, 8, 0, 0)), "requests 0 must be >= 1");
  EXPECT_EQ(paged_prefill_unsupported_reason(prefill_shape(8, 8, 3, 2)), "total_rows 2 must be >= requests");
  PagedPrefillArgs strides = prefill_shape(8, 8, 1, 1);
  strides.page_stride = 16 * 128;  // head and token strides left 0: neither packed nor complete
  EXPECT_EQ(paged_prefill_unsupported_reason(strides),
            "page_stride, head_stride and token_stride must all be 0 (packed pages) or >= head_dim");
  strides.head_stride = std::int64_t{1} << 33;
  strides.token_stride = 128;
  EXPECT_EQ(paged_prefill_unsupported_reason(strides),
            "page_stride, head_stride and token_stride must fit 32 bits (FlashInfer's paged_kv_t)");
  PagedPrefillArgs q_stride = prefill_shape(8, 8, 1, 1);
  q_stride.q_stride_n = 8 * 128 - 1;
  EXPECT_TRUE(paged_prefill_unsupported_reason(q_stride).has_value());
  PagedPrefillArgs scale = prefill_shape(8, 8, 1, 1);
  scale.sm_scale = 0;
  EXPECT_EQ(paged_prefill_unsupported_reason(scale), "sm_scale must be > 0");
}

// The host indptrs are checked before FlashInfer's plan runs (it would read the device).
TEST(FlashInferPrefillLaunch, PlanRefusesBadIndptrsBeforeAnyDeviceCall) {
  std::size_t float_bytes = 1, int_bytes = 1;
  std::string error;
  const PagedPrefillArgs two = prefill_shape(32, 8, 2, 5);
  const std::vector<std::int32_t> qo{0, 3, 5}, kv{0, 4, 9};
  const std::vector<std::int32_t> qo_not_from_0{1, 3, 5}, qo_empty{0, 0, 5}, kv_empty{0, 4, 4}, qo_short{0, 3, 4};
  EXPECT_EQ(paged_prefill_workspace_bytes(two, qo_not_from_0.data(), kv.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_EQ(error, "qo_indptr_host[0] and kv_indptr_host[0] must be 0");
  EXPECT_EQ(paged_prefill_workspace_bytes(two, qo_empty.data(), kv.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_EQ(error,
            "request 0 has 0 query tokens and 4 KV pages: FlashInfer's batch prefill is planned here for at least one "
            "of each");
  EXPECT_EQ(paged_prefill_workspace_bytes(two, qo.data(), kv_empty.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_EQ(error,
            "request 1 has 2 query tokens and 0 KV pages: FlashInfer's batch prefill is planned here for at least one "
            "of each");
  EXPECT_EQ(paged_prefill_workspace_bytes(two, qo_short.data(), kv.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_EQ(error, "total_rows 5 must be qo_indptr_host[2] = 4");
  EXPECT_EQ(paged_prefill_workspace_bytes(two, nullptr, kv.data(), &float_bytes, &int_bytes, &error),
            cudaErrorInvalidValue);
  EXPECT_EQ(error, "qo_indptr_host and kv_indptr_host must be set");
  EXPECT_EQ(float_bytes, 1u);  // untouched
  EXPECT_EQ(int_bytes, 1u);
  PagedPrefillPlan plan;
  EXPECT_EQ(paged_prefill_plan(two, qo.data(), kv.data(), nullptr, 0, nullptr, nullptr, 0, nullptr, &plan, &error),
            cudaErrorInvalidValue);
  EXPECT_EQ(error, "the integer workspace (device and host) must be set");
}

TEST(FlashInferPrefillLaunch, RunRefusesMissingPointersAndPlan) {
  std::string error;
  const PagedPrefillArgs a = prefill_shape(32, 8, 1, 1);
  EXPECT_EQ(paged_prefill_run_fp16(a, PagedPrefillPlan{}, nullptr, nullptr, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_EQ(error, "q, k_pages, v_pages, qo_indptr, page_indices, kv_indptr, last_page_len and o must be set");
  static std::int32_t dummy[4];
  PagedPrefillArgs set = a;
  set.q = set.k_pages = set.v_pages = dummy;
  set.o = dummy;
  set.qo_indptr = set.page_indices = set.kv_indptr = set.last_page_len = dummy;
  EXPECT_EQ(paged_prefill_run_bf16(set, PagedPrefillPlan{}, nullptr, nullptr, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_EQ(error, "run needs a plan and its workspace");
}

TEST(FlashInferMergeState, RefusesWhatItsBlockCannotHold) {
  MergeStateArgs m;
  m.heads = 32;
  m.head_dim = 128;
  m.rows = 4;
  EXPECT_EQ(merge_state_unsupported_reason(m), std::nullopt);
  m.dtype = DType::bf16;
  EXPECT_EQ(merge_state_unsupported_reason(m), std::nullopt);
  m.heads = 64;  // 64 x 16 threads: FlashInfer's block limit exactly
  EXPECT_EQ(merge_state_unsupported_reason(m), std::nullopt);
  m.heads = 65;
  EXPECT_EQ(merge_state_unsupported_reason(m),
            "heads 65: FlashInfer's merge runs a block of heads x 16 threads at head_dim 128, so 1 .. 64");
  m.head_dim = 64;  // 8 threads a head
  m.heads = 128;
  EXPECT_EQ(merge_state_unsupported_reason(m), std::nullopt);
  m.head_dim = 256;  // 32 threads a head
  m.heads = 33;
  EXPECT_EQ(merge_state_unsupported_reason(m),
            "heads 33: FlashInfer's merge runs a block of heads x 32 threads at head_dim 256, so 1 .. 32");
  m.head_dim = 128;
  m.heads = 8;
  m.dtype = DType::fp32;
  EXPECT_EQ(merge_state_unsupported_reason(m), "dtype fp32: the FlashInfer merge launchers take fp16 and bf16");
  m.dtype = DType::fp16;
  m.head_dim = 96;
  EXPECT_EQ(merge_state_unsupported_reason(m), "head_dim 96: the FlashInfer merge launchers take head_dim 64, 128 and 256");
  m.head_dim = 128;
  std::string error;
  EXPECT_EQ(merge_state_in_place(m, nullptr, &error), cudaErrorInvalidValue);
  EXPECT_EQ(error, "o_a, lse_a, o_b and lse_b must be set");
}

}  // namespace
}  // namespace decode_bench::flashinfer_launch
