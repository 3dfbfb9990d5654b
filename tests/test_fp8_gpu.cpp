// FP8 K/V through the split-K flash-decode kernel against the float64 reference on the same stored
// bytes and scales: E4M3 and E5M2, contiguous and over shuffled pages, GQA groups 1/4/8, head dims
// 64/128/256, per-head and per-tensor scales, split and unsplit plans. Skipped (with the reason)
// where no GPU exists. The baseline's refusal of FP8 is a host test.
#include <gtest/gtest.h>

#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;
using testing::run_decode_case;

testing::DecodeCaseResult run_fp8(DType dtype, const DecodeCase& c) {
  return dtype == DType::fp8_e4m3 ? run_decode_case<__nv_fp8_e4m3>(c) : run_decode_case<__nv_fp8_e5m2>(c);
}

std::string describe(DType dtype, const DecodeCase& c) {
  std::string lens;
  for (auto l : c.lengths) lens += std::to_string(l) + ",";
  return std::string(dtype_name(dtype)) + " Hq=" + std::to_string(c.shape.heads_q) + " Hkv=" +
         std::to_string(c.shape.heads_kv) + " D=" + std::to_string(c.shape.head_dim) + " T=" + lens +
         " page=" + std::to_string(c.page_size) + " splits=" + std::to_string(c.splits) +
         (c.per_tensor_scale ? " per-tensor scale" : " per-head scales");
}

void expect_verified(DType dtype, const DecodeCase& c) {
  const auto r = run_fp8(dtype, c);
  ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  // The reference sees the stored values, so the error is fp32 arithmetic alone: the FP32 bound.
  EXPECT_EQ(r.verification.tolerance, 1e-5);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
}

constexpr DType kFp8[] = {DType::fp8_e4m3, DType::fp8_e5m2};

TEST(Fp8DecodeGpu, HeadDimsGroupsAndLayouts) {
  DB_REQUIRE_GPU();
  for (auto dtype : kFp8)
    for (int d : {64, 128, 256})
      for (int group : {1, 4, 8})
        for (int page : {0, 1, 16})
          expect_verified(dtype, {DecodeKernel::flash_decode, {16, 16 / group, d}, {1013},
                                  page, 0, static_cast<std::uint64_t>(d + group + page)});
}

TEST(Fp8DecodeGpu, RaggedBatchSplitsAndPerTensorScale) {
  DB_REQUIRE_GPU();
  for (auto dtype : kFp8)
    for (int page : {0, 16})
      for (int splits : {0, 1, 7})
        for (bool per_tensor : {false, true}) {
          DecodeCase c{DecodeKernel::flash_decode, {8, 4, 128}, {0, 1, 17, 1013, 4096}, page, splits, 61};
          c.per_tensor_scale = per_tensor;
          c.launches = 2;
          expect_verified(dtype, c);
        }
}

TEST(Fp8DecodeGpu, LongSequenceOverShuffledPages) {
  DB_REQUIRE_GPU();
  for (auto dtype : kFp8) {
    expect_verified(dtype, {DecodeKernel::flash_decode, {4, 4, 128}, {65536}, 16, 0, 71});
    expect_verified(dtype, {DecodeKernel::flash_decode, {1, 1, 128}, {262144}, 0, 0, 72});
  }
}

// Host side (no GPU needed): the baseline has no FP8 path; planning refuses before any CUDA call,
// with a sentence that names the dtype.
TEST(Fp8Decode, BaselineRefusesFp8WithAReason) {
  for (DType dtype : kFp8) {
    const DecodeProblem problem{{8, 2, 128}, dtype, 1, 255};
    const auto why = decode_kernel_unsupported_reason(DecodeKernel::baseline, problem);
    ASSERT_TRUE(why.has_value());
    EXPECT_NE(why->find(std::string(dtype_name(dtype))), std::string::npos) << *why;
    EXPECT_FALSE(decode_kernel_unsupported_reason(DecodeKernel::flash_decode, problem).has_value());
    DecodePlan plan;
    const cudaError_t status =
        dtype == DType::fp8_e4m3
            ? plan_decode<ContiguousKV<__nv_fp8_e4m3>>(DecodeKernel::baseline, problem, {}, &plan)
            : plan_decode<PagedKV<__nv_fp8_e5m2>>(DecodeKernel::baseline, problem, {}, &plan);
    EXPECT_EQ(status, cudaErrorInvalidValue);
    plan.kernel = DecodeKernel::baseline;
    EXPECT_EQ(run_decode(ContiguousKV<__nv_fp8_e4m3>{}, DecodeProblem{{8, 2, 128}, DType::fp8_e4m3, 1, 255}, plan,
                         nullptr, nullptr),
              cudaErrorInvalidValue);
  }
}

}  // namespace
}  // namespace decode_bench
