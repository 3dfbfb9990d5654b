// Host rules of the CUDA-core split-K variant twins (kernels/flash_decode_variant.hpp): what they
// take (refusals naming the dtype, q_len, group or head dim), which family flash_decode routes a
// variant point to, the knob that pins the old routing, and plan_decode's refusals before any CUDA
// call. No GPU needed.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/decode_launch.hpp"
#include "kernels/flash_decode_variant.hpp"
#include "kernels/shared_prefix_variant.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {
namespace {

bool contains(const std::optional<std::string>& s, const std::string& part) {
  return s.has_value() && s->find(part) != std::string::npos;
}

const RowAttentionVariant kSinks{.sinks = reinterpret_cast<const float*>(16)};  // any non-null device pointer
const RowAttentionVariant kCap50{.logits_soft_cap = 50.f};
const RowAttentionVariant kWindow{.window = 128};

DecodeProblem problem(DecodeShape shape, DType dtype, const RowAttentionVariant& v) {
  DecodeProblem p;
  p.shape = shape;
  p.kv_dtype = dtype;
  p.num_seqs = 1;
  p.max_len = 65536;
  p.variant = v;
  return p;
}

TEST(FlashDecodeVariantRules, TheTwinsTakeOneTokenAtGroupsOneAndTwoInFp16AndBf16) {
  for (const RowAttentionVariant& v : {kSinks, kCap50, kWindow}) {
    for (DType dtype : {DType::fp16, DType::bf16}) {
      EXPECT_EQ(flash_decode_variant_unsupported_reason({32, 32, 128}, dtype, v), std::nullopt);
      EXPECT_EQ(flash_decode_variant_unsupported_reason({32, 16, 128}, dtype, v), std::nullopt);
      EXPECT_EQ(flash_decode_variant_unsupported_reason({32, 32, 80}, dtype, v), std::nullopt);
    }
    EXPECT_TRUE(contains(flash_decode_variant_unsupported_reason({32, 32, 128}, DType::fp32, v), "dtype fp32"));
    EXPECT_TRUE(contains(flash_decode_variant_unsupported_reason({32, 32, 128}, DType::fp8_e4m3, v), "dtype fp8_e4m3"));
    EXPECT_TRUE(contains(flash_decode_variant_unsupported_reason({32, 8, 128}, DType::fp16, v), "GQA group 4"));
    EXPECT_TRUE(contains(flash_decode_variant_unsupported_reason({32, 32, 64}, DType::fp16, v), "head_dim 64"));
    EXPECT_TRUE(contains(flash_decode_variant_unsupported_reason({32, 32, 256}, DType::bf16, v), "head_dim 256"));
    RowAttentionVariant two = v;
    two.q_len = 2;
    EXPECT_TRUE(contains(flash_decode_variant_unsupported_reason({32, 32, 128}, DType::fp16, two), "q_len 2"));
  }
  // Plain decode is not a variant: nothing to refuse.
  EXPECT_EQ(flash_decode_variant_unsupported_reason({32, 8, 64}, DType::fp8_e4m3, {}), std::nullopt);
}

// What the twins take is a subset of what the row family takes, so the support rule is unchanged.
TEST(FlashDecodeVariantRules, SupportIsTheRowFamilysRule) {
  for (DType dtype : {DType::fp16, DType::bf16})
    for (const DecodeShape& shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 16, 96}, DecodeShape{8, 8, 80}})
      for (const RowAttentionVariant& v : {kSinks, kCap50, kWindow}) {
        ASSERT_EQ(flash_decode_variant_unsupported_reason(shape, dtype, v), std::nullopt);
        EXPECT_EQ(row_attention_variant_unsupported_reason(shape, dtype, v), std::nullopt);
        EXPECT_EQ(decode_unsupported_reason(problem(shape, dtype, v)), std::nullopt);
      }
  EXPECT_TRUE(decode_unsupported_reason(problem({32, 32, 128}, DType::fp32, kSinks)).has_value());
  EXPECT_TRUE(decode_unsupported_reason(problem({32, 32, 64}, DType::fp16, kCap50)).has_value());
}

TEST(FlashDecodeVariantRules, OneTokenVariantsAtGroupsOneAndTwoStayOnTheCudaCores) {
  const TuningPolicy automatic{};
  for (DType dtype : {DType::fp16, DType::bf16})
    for (const DecodeShape& shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 16, 128}})
      for (const RowAttentionVariant& v : {kSinks, kCap50, kWindow}) {
        const DecodeProblem p = problem(shape, dtype, v);
        EXPECT_FALSE(decode_prefers_tensor_core(problem(shape, dtype, {}))) << "the plain point's family";
        EXPECT_TRUE(decode_variant_on_cuda_core(p, automatic));
        EXPECT_FALSE(decode_prefers_tensor_core(p, automatic));
        EXPECT_FALSE(decode_prefers_tensor_core(p)) << "the default policy is automatic";
      }
  // Sinks, soft-cap and window together.
  RowAttentionVariant all = kSinks;
  all.logits_soft_cap = 30.f;
  all.window = 4096;
  EXPECT_FALSE(decode_prefers_tensor_core(problem({32, 32, 128}, DType::fp16, all)));
}

TEST(FlashDecodeVariantRules, EverythingElseStaysOnTheRowFamily) {
  const TuningPolicy automatic{};
  // Groups of 3 or more (the plain point runs there too), several query tokens, head dims the
  // twins lack (BF16 at 64: the row family's gpt-oss twin).
  EXPECT_TRUE(decode_prefers_tensor_core(problem({32, 8, 128}, DType::fp16, kSinks), automatic));
  EXPECT_TRUE(decode_prefers_tensor_core(problem({64, 8, 64}, DType::bf16, kWindow), automatic));
  EXPECT_TRUE(decode_prefers_tensor_core(problem({32, 4, 128}, DType::bf16, kCap50), automatic));
  RowAttentionVariant spec = kSinks;
  spec.q_len = 2;
  EXPECT_TRUE(decode_prefers_tensor_core(problem({32, 32, 128}, DType::fp16, spec), automatic));
  EXPECT_TRUE(decode_prefers_tensor_core(problem({32, 32, 64}, DType::bf16, kSinks), automatic));
  EXPECT_FALSE(decode_variant_on_cuda_core(problem({32, 32, 64}, DType::bf16, kSinks), automatic));
  // Plain decode is routed as before, whatever the variant knob says.
  TuningPolicy pinned;
  pinned.fd_variant_path = VariantPathOverride::tensor_core;
  EXPECT_FALSE(decode_prefers_tensor_core(problem({32, 32, 128}, DType::fp16, {}), pinned));
  EXPECT_TRUE(decode_prefers_tensor_core(problem({32, 8, 128}, DType::fp16, {}), pinned));
}

// FP8 variants: the twins are FP16 / BF16 only, so every FP8 variant point runs on the row kernel's
// FP8 twins, at groups 1, 2, 4 and 8 too, where the plain FP8 point runs on the CUDA cores; MQA and
// the groups without CUDA-core kernels alike. The support rule is the row family's.
TEST(FlashDecodeVariantRules, Fp8VariantsRunOnTheRowFamilyAtEveryGroup) {
  const TuningPolicy automatic{};
  RowAttentionVariant spec = kSinks;
  spec.q_len = 3;
  for (DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (const DecodeShape& shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 16, 128}, DecodeShape{32, 8, 128},
                                     DecodeShape{32, 4, 96}, DecodeShape{28, 4, 128}, DecodeShape{32, 1, 80}})
      for (const RowAttentionVariant& v : {kSinks, kCap50, kWindow, spec}) {
        const DecodeProblem p = problem(shape, dtype, v);
        EXPECT_EQ(decode_unsupported_reason(p), std::nullopt) << dtype_name(dtype) << " group " << shape.group();
        EXPECT_FALSE(decode_variant_on_cuda_core(p, automatic));
        EXPECT_TRUE(decode_prefers_tensor_core(p, automatic)) << dtype_name(dtype) << " group " << shape.group();
      }
  // The plain FP8 points of groups 1, 2, 4 and 8 stay on the CUDA cores.
  for (const DecodeShape& shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 16, 128}, DecodeShape{32, 8, 128}})
    EXPECT_FALSE(decode_prefers_tensor_core(problem(shape, DType::fp8_e4m3, {})));
  // Refused by name: head dims the FP8 twin does not cover, and groups the row kernel does not take.
  EXPECT_TRUE(contains(decode_unsupported_reason(problem({32, 8, 64}, DType::fp8_e5m2, kSinks)), "head_dim 64 (fp8_e5m2)"));
  EXPECT_TRUE(contains(decode_unsupported_reason(problem({32, 8, 256}, DType::fp8_e4m3, kCap50)), "head_dim 256"));
  EXPECT_TRUE(contains(decode_unsupported_reason(problem({34, 2, 128}, DType::fp8_e4m3, kWindow)), "GQA group 17"));
  // The shared-prefix composition does not take them (its rule delegates to the decode rules, which
  // now would): refused by name, the plain FP8 point still taken.
  for (const RowAttentionVariant& v : {kSinks, kCap50, kWindow})
    EXPECT_TRUE(contains(shared_prefix_variant_unsupported_reason({32, 8, 128}, DType::fp8_e5m2, v), "dtype fp8_e5m2"));
  EXPECT_EQ(shared_prefix_variant_unsupported_reason({32, 8, 128}, DType::fp8_e4m3, {}), std::nullopt);
}

// DECODE_BENCH_FD_VARIANT_PATH=tensor_core: every variant point on the row family, as before the twins.
TEST(FlashDecodeVariantRules, TheKnobPinsTheRowFamily) {
  const TuningPolicy pinned = parse_tuning_policy({{"DECODE_BENCH_FD_VARIANT_PATH", "tensor_core"}});
  EXPECT_EQ(pinned.fd_variant_path, VariantPathOverride::tensor_core);
  EXPECT_EQ(parse_tuning_policy({{"DECODE_BENCH_FD_VARIANT_PATH", "auto"}}).fd_variant_path,
            VariantPathOverride::automatic);
  EXPECT_THROW((void)parse_tuning_policy({{"DECODE_BENCH_FD_VARIANT_PATH", "cuda_core"}}), TuningPolicyError);
  for (DType dtype : {DType::fp16, DType::bf16})
    for (const RowAttentionVariant& v : {kSinks, kCap50, kWindow}) {
      const DecodeProblem p = problem({32, 32, 128}, dtype, v);
      EXPECT_FALSE(decode_variant_on_cuda_core(p, pinned));
      EXPECT_TRUE(decode_prefers_tensor_core(p, pinned));
    }
}

// plan_decode refuses what the twins do not take when the CUDA-core path is pinned (or chosen by
// heads_per_block), before any CUDA call: several query tokens, a group of 4.
TEST(FlashDecodeVariantRules, PlanDecodeRefusesWhatTheTwinsDoNotTake) {
  DecodePlan plan;
  DecodeProblem p = problem({32, 32, 128}, DType::fp16, kSinks);
  p.variant.q_len = 2;
  EXPECT_EQ((plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, {.path = DecodePath::cuda_core}, &plan)),
            cudaErrorInvalidValue);
  EXPECT_EQ((plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, p, {.heads_per_block = 2}, &plan)),
            cudaErrorInvalidValue);
  p = problem({32, 8, 128}, DType::fp16, kCap50);
  EXPECT_EQ((plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, {.path = DecodePath::cuda_core}, &plan)),
            cudaErrorInvalidValue);
  EXPECT_EQ((plan_decode<ContiguousKV<__half>>(DecodeKernel::baseline, problem({32, 32, 128}, DType::fp16, kSinks), {},
                                               &plan)),
            cudaErrorInvalidValue);
  // FP8 has no twin: the CUDA-core path pinned refuses an FP8 variant, at group 1 and at group 4.
  for (const DecodeShape& shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 8, 128}})
    EXPECT_EQ((plan_decode<PagedKV<__nv_fp8_e4m3>>(DecodeKernel::flash_decode, problem(shape, DType::fp8_e4m3, kSinks),
                                                   {.path = DecodePath::cuda_core}, &plan)),
              cudaErrorInvalidValue);
}

}  // namespace
}  // namespace decode_bench
