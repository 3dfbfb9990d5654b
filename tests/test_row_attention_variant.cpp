// The attention variants as the row-attention path takes them (kernels/row_attention_variant.hpp):
// the decode problem's rows and token bound, and which shapes and storage types are refused, why.
#include <gtest/gtest.h>

#include <string>

#include "kernels/decode_launch.hpp"
#include "kernels/row_attention_variant.hpp"

namespace decode_bench {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(RowAttentionVariant, FromTheSweepsVariant) {
  const float sinks[4] = {};
  const RowAttentionVariant r = row_attention_variant({.q_len = 3, .window = 128, .sinks = true, .logits_soft_cap = 50}, sinks);
  EXPECT_EQ(r.q_len, 3);
  EXPECT_EQ(r.window, 128);
  EXPECT_EQ(r.logits_soft_cap, 50.f);
  EXPECT_EQ(r.sinks, sinks);
  EXPECT_FALSE(r.plain());
  // No sinks requested: the pointer is dropped; a window past 2^31 covers every sequence.
  EXPECT_EQ(row_attention_variant({.window = 1}, sinks).sinks, nullptr);
  EXPECT_EQ(row_attention_variant({.window = std::int64_t{1} << 31}, nullptr).window, 0);
  EXPECT_TRUE(row_attention_variant({}, sinks).plain());
}

TEST(RowAttentionVariant, DecodeItemsHoldGroupTimesQueryLengthRows) {
  DecodeProblem p;
  p.shape = {32, 8, 128};
  p.num_seqs = 16;
  p.max_len = 32768;
  const std::int32_t lens[16] = {};
  p.host_seq_lens = lens;
  p.variant.q_len = 4;
  p.variant.window = 1024;
  const RowAttentionProblem r = decode_as_row_attention(p);
  EXPECT_EQ(r.num_items, 16 * 8);
  EXPECT_EQ(r.max_item_rows, 4 * 4);
  EXPECT_EQ(r.num_rows, 16 * 4 * 32);
  EXPECT_EQ(r.max_item_tokens, 1024 + 3);  // the window of each of the 4 tokens together
  EXPECT_EQ(r.host_seq_lens, nullptr);     // the uniform grid
  EXPECT_EQ(r.variant.q_len, 4);
  // A window past the sequence reads the sequence; plain problems keep their rows and lengths.
  p.variant.window = 40000;
  EXPECT_EQ(decode_as_row_attention(p).max_item_tokens, 32768);
  p.variant = {};
  EXPECT_EQ(decode_as_row_attention(p).max_item_rows, 4);
  EXPECT_EQ(decode_as_row_attention(p).host_seq_lens, lens);
}

TEST(RowAttentionVariant, RefusalsNameWhatIsNotBuilt) {
  const RowAttentionVariant v{.q_len = 2};
  EXPECT_EQ(row_attention_variant_unsupported_reason({32, 8, 128}, DType::fp16, v), std::nullopt);
  EXPECT_EQ(row_attention_variant_unsupported_reason({32, 8, 96}, DType::bf16, v), std::nullopt);
  // FP8 at head dims 80-128 on the head-dim-128 twin (narrow tiling); not at 64 or 256; FP32 nowhere.
  for (DType fp8 : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    EXPECT_EQ(row_attention_variant_unsupported_reason({32, 8, 128}, fp8, v), std::nullopt);
    EXPECT_EQ(row_attention_variant_unsupported_reason({32, 1, 80}, fp8, v), std::nullopt);
    EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 64}, fp8, v),
                         "head_dim 64 (" + std::string(dtype_name(fp8)) + ")"));
    EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 256}, fp8, v), "head_dim 256"));
  }
  EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 128}, DType::fp32, v), "dtype fp32"));
  EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 128}, DType::fp32, v), "no fp32 path"));
  EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 64}, DType::fp16, v), "head_dim 64"));
  EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 256}, DType::fp16, v), "head_dim 256"));
  // BF16 at head dim 64 (gpt-oss, the models preset) and below, on the head-dim-64 kernel; FP16 there is not built.
  EXPECT_EQ(row_attention_variant_unsupported_reason({64, 8, 64}, DType::bf16, v), std::nullopt);
  EXPECT_EQ(row_attention_variant_unsupported_reason({64, 8, 48}, DType::bf16, v), std::nullopt);
  EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({64, 8, 64}, DType::fp16, v), "head_dim 64 (fp16)"));
  EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 256}, DType::bf16, v), "head_dim 256"));
  EXPECT_TRUE(contains(*row_attention_variant_unsupported_reason({32, 8, 72}, DType::bf16, v), "head_dim 72"));
  EXPECT_EQ(row_attention_variant_unsupported_reason({32, 8, 64}, DType::fp8_e4m3, {}), std::nullopt);  // plain
  // Through the decode rules: the baseline computes none, and a group without the row path is refused.
  DecodeProblem p;
  p.shape = {32, 8, 128};
  p.variant.logits_soft_cap = 50;
  EXPECT_EQ(decode_unsupported_reason(p), std::nullopt);
  EXPECT_TRUE(decode_prefers_tensor_core(p));
  EXPECT_TRUE(contains(*decode_kernel_unsupported_reason(DecodeKernel::baseline, p), "baseline"));
  p.shape = {34, 2, 128};  // group 17
  EXPECT_TRUE(contains(*decode_unsupported_reason(p), "GQA group 17"));
}

// What the variant kernels have no build for is refused by plan_decode before any CUDA call, never
// computed plain: the baseline, the CUDA-core path pinned, FP8 storage at head dim 64, FP16 at 64.
TEST(RowAttentionVariant, PlanDecodeRefusesWhatIsNotBuilt) {
  DecodeProblem p{{32, 8, 128}, DType::fp16, 1, 64};
  p.variant.q_len = 2;
  DecodePlan plan;
  EXPECT_EQ((plan_decode<ContiguousKV<__half>>(DecodeKernel::baseline, p, {}, &plan)), cudaErrorInvalidValue);
  EXPECT_EQ((plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, {.path = DecodePath::cuda_core}, &plan)),
            cudaErrorInvalidValue);
  p.kv_dtype = DType::fp8_e4m3;
  p.shape.head_dim = 64;
  EXPECT_EQ((plan_decode<ContiguousKV<__nv_fp8_e4m3>>(DecodeKernel::flash_decode, p, {}, &plan)), cudaErrorInvalidValue);
  EXPECT_EQ((plan_decode<ContiguousKV<__nv_fp8_e4m3>>(DecodeKernel::baseline, p, {}, &plan)), cudaErrorInvalidValue);
  p.kv_dtype = DType::fp16;
  p.shape.head_dim = 64;
  EXPECT_EQ((plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, {}, &plan)), cudaErrorInvalidValue);
}

}  // namespace
}  // namespace decode_bench
