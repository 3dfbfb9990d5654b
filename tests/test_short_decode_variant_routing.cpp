// Host side of the attention variants on the short-sequence path (no GPU needed): the token bound a
// window gives (min(max_len, window)), which variant points the planner sends there (the first
// stage always; the long stage where the tensor-core row twins would otherwise run them; the knobs),
// what it refuses and why, and the group's split by that bound.
#include <string>

#include <gtest/gtest.h>

#include "kernels/decode_launch.hpp"
#include "kernels/short_decode_variant.hpp"

namespace decode_bench {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

constexpr int kSms = 132;  // an H100 SXM
constexpr DecodeShape kGptOss{64, 8, 64};

DecodeProblem variant_problem(DecodeShape shape, DType dtype, std::int64_t max_len, int num_seqs,
                              RowAttentionVariant variant) {
  DecodeProblem p;
  p.shape = shape;
  p.kv_dtype = dtype;
  p.num_seqs = num_seqs;
  p.max_len = max_len;
  p.variant = variant;
  return p;
}

// A window with sinks, as gpt-oss's sliding layers (the sink pointer is only tested for nullptr here).
RowAttentionVariant window_sinks(std::int32_t window) {
  static const float sink = 0.f;
  return {.window = window, .sinks = &sink};
}

std::string reason(const DecodeProblem& p, const DecodeOptions& o = {}) {
  const auto why = decode_short_unsupported_reason(p, o);
  return why ? *why : std::string("(none)");
}

TEST(ShortDecodeVariantRouting, TheWindowBoundsTheStagedTokens) {
  EXPECT_EQ(short_decode_tokens(variant_problem(kGptOss, DType::bf16, 32768, 1, window_sinks(128))), 128);
  EXPECT_EQ(short_decode_tokens(variant_problem(kGptOss, DType::bf16, 100, 1, window_sinks(128))), 100);
  EXPECT_EQ(short_decode_tokens(variant_problem(kGptOss, DType::bf16, 4096, 1, {.logits_soft_cap = 30})), 4096);
  EXPECT_EQ(short_decode_tokens(variant_problem(kGptOss, DType::bf16, 77, 1, {})), 77);  // plain: max_len
}

// gpt-oss's sliding layers (64 / 8 heads, d 64, BF16, window 128, sinks) at the models preset's
// batches: 128-token short decodes the path runs on both layouts, whatever the sequences' lengths;
// under auto the long stage takes every batch (up to 8 sequences the group split in two, 4 heads a
// block; from 16 whole groups of 8).
TEST(ShortDecodeVariantRouting, GptOssSlidingPointsTakeTheLongStageAtEveryBatch) {
  const DecodeOptions automatic;
  DecodeOptions up_to_128;
  up_to_128.tuning.fd_short_max_len = 128;
  for (auto [seqs, len] : {std::pair{1, 32768}, {2, 16384}, {8, 4096}, {16, 4096}, {64, 1024}, {128, 512}}) {
    const DecodeProblem p = variant_problem(kGptOss, DType::bf16, len, seqs, window_sinks(128));
    EXPECT_EQ(decode_short_unsupported_reason(p, automatic), std::nullopt) << seqs;
    EXPECT_TRUE(decode_prefers_short(p, automatic, true, kSms)) << seqs;
    EXPECT_TRUE(decode_prefers_short(p, automatic, false, kSms)) << seqs;
    EXPECT_TRUE(decode_prefers_short(p, up_to_128, true, kSms)) << seqs;
    EXPECT_TRUE(decode_prefers_short(p, up_to_128, false, kSms)) << seqs;
    // The long stage's split: up to 66 pairs leave SMs for a second part (two blocks of 4 heads), 128 none.
    EXPECT_EQ(short_decode_block_heads(p, kSms), seqs <= 8 ? 4 : 8) << seqs;
    EXPECT_EQ(short_decode_block_heads(p, kSms), short_decode_long_heads_per_block(8, seqs * 8, kSms)) << seqs;
    // The knobs: 64 closes the long stage, off keeps the row twins.
    DecodeOptions up_to_64, off;
    up_to_64.tuning.fd_short_max_len = 64;
    off.tuning.fd_short_seq = false;
    EXPECT_FALSE(decode_prefers_short(p, up_to_64, true, kSms)) << seqs;
    EXPECT_FALSE(decode_prefers_short(p, off, true, kSms)) << seqs;
  }
  // A window of 64 or less: the first stage and its group rule.
  const DecodeProblem w64 = variant_problem(kGptOss, DType::bf16, 4096, 16, window_sinks(64));
  EXPECT_EQ(short_decode_block_heads(w64, kSms), short_decode_heads_per_block(8, 128, kSms));
}

// Up to 64 tokens (a window of at most 64, or short sequences with sinks or a cap): the short path
// at every group, as plain decodes, also at groups 1-2 where the CUDA-core twins run longer ones.
// 65-128: where the tensor-core row twins would run it, at any heads a block; the CUDA-core twins'
// points (groups 1-2,
// FP16 / BF16, d 80-128) keep them unless DECODE_BENCH_FD_VARIANT_PATH=tensor_core sends them to
// the row family or DECODE_BENCH_FD_SHORT_MAX_LEN=128 to the short path.
TEST(ShortDecodeVariantRouting, FirstStageAtEveryGroupLongStageWhereTheRowTwinsRunFewBlocks) {
  const DecodeOptions automatic;
  DecodeOptions up_to_128, row_twins;
  up_to_128.tuning.fd_short_max_len = 128;
  row_twins.tuning.fd_variant_path = VariantPathOverride::tensor_core;
  for (DType dtype : {DType::fp16, DType::bf16})
    for (DecodeShape shape : {DecodeShape{32, 32, 128}, DecodeShape{32, 16, 128}, DecodeShape{32, 8, 128},
                              DecodeShape{71, 1, 128}, DecodeShape{128, 8, 96}})
      for (const RowAttentionVariant& v : {window_sinks(1), window_sinks(64), RowAttentionVariant{.window = 5},
                                           RowAttentionVariant{.logits_soft_cap = 5}}) {
        const std::string what = std::string(dtype_name(dtype)) + " " + std::to_string(shape.heads_q) + "/" +
                                 std::to_string(shape.heads_kv) + " window " + std::to_string(v.window);
        const std::int64_t len = v.window > 0 ? 5000 : 64;
        for (int seqs : {1, 64})
          for (bool paged : {true, false})
            EXPECT_TRUE(decode_prefers_short(variant_problem(shape, dtype, len, seqs, v), automatic, paged, kSms)) << what;
      }
  for (std::int32_t window : {65, 100, 128}) {
    // Group 4: 4 heads a block at any batch. Group 8: two parts of 4 up to 66 pairs, one of 8 beyond:
    // the long stage either way.
    for (bool paged : {true, false}) {
      EXPECT_TRUE(decode_prefers_short(variant_problem({32, 8, 128}, DType::fp16, 4096, 64, window_sinks(window)),
                                       automatic, paged, kSms)) << window;
      EXPECT_TRUE(decode_prefers_short(variant_problem({64, 8, 128}, DType::fp16, 4096, 8, window_sinks(window)),
                                       automatic, paged, kSms)) << window;
      const DecodeProblem g8 = variant_problem({64, 8, 128}, DType::fp16, 4096, 9, window_sinks(window));
      EXPECT_EQ(short_decode_block_heads(g8, kSms), 8) << window;
      EXPECT_TRUE(decode_prefers_short(g8, automatic, paged, kSms)) << window;
      EXPECT_TRUE(decode_prefers_short(g8, up_to_128, paged, kSms)) << window;
    }
    EXPECT_TRUE(decode_prefers_short(variant_problem({32, 1, 128}, DType::fp16, 4096, 2, window_sinks(window)),
                                     automatic, false, kSms)) << window;  // MQA: 2 x 8 parts of 4 heads
    for (DecodeShape twins : {DecodeShape{32, 32, 128}, DecodeShape{32, 16, 128}}) {
      const DecodeProblem p = variant_problem(twins, DType::bf16, 4096, 64, window_sinks(window));
      EXPECT_FALSE(decode_prefers_short(p, automatic, true, kSms)) << window;
      EXPECT_TRUE(decode_prefers_short(p, row_twins, true, kSms)) << window;
      EXPECT_TRUE(decode_prefers_short(p, up_to_128, true, kSms)) << window;
    }
  }
  // Full attention with sinks or a cap over at most 128 tokens, and one token past it.
  EXPECT_TRUE(decode_prefers_short(variant_problem({32, 8, 128}, DType::fp16, 128, 16, {.logits_soft_cap = 30}),
                                   automatic, false, kSms));
  EXPECT_FALSE(decode_prefers_short(variant_problem({32, 8, 128}, DType::fp16, 129, 16, {.logits_soft_cap = 30}),
                                    automatic, true, kSms));
  EXPECT_FALSE(decode_prefers_short(variant_problem({32, 8, 128}, DType::fp16, 4096, 16, window_sinks(129)),
                                    up_to_128, true, kSms));
  // Pinned choices of the other paths keep them, as for plain decodes.
  const DecodeProblem p = variant_problem({32, 8, 128}, DType::fp16, 4096, 16, window_sinks(32));
  EXPECT_FALSE(decode_prefers_short(p, {.splits = 2}, true, kSms));
  EXPECT_FALSE(decode_prefers_short(p, {.fused_merge = false}, true, kSms));
  DecodeOptions off;
  off.tuning.fd_short_seq = false;
  EXPECT_FALSE(decode_prefers_short(p, off, true, kSms));
}

// What the path refuses with a variant, by name: more than one query token, FP8 storage (no variant
// kernels compiled for it), a window of more than 128 tokens; the row twins' own refusals come first.
TEST(ShortDecodeVariantRouting, RefusalsNameWhatIsNotSupported) {
  const DecodeOptions automatic;
  EXPECT_TRUE(contains(reason(variant_problem({32, 8, 128}, DType::fp16, 4096, 4, {.q_len = 2, .window = 16})), "q_len 2"));
  const DecodeProblem fp8 = variant_problem({32, 8, 128}, DType::fp8_e4m3, 4096, 4, window_sinks(64));
  EXPECT_TRUE(contains(reason(fp8), "dtype fp8_e4m3")) << reason(fp8);
  EXPECT_FALSE(decode_prefers_short(fp8, automatic, true, kSms));
  const DecodeProblem wide = variant_problem({32, 8, 128}, DType::fp16, 4096, 4, window_sinks(200));
  EXPECT_TRUE(contains(reason(wide), "max_len 4096 (window 200: 200 tokens) is above its 128 tokens")) << reason(wide);
  EXPECT_TRUE(contains(reason(variant_problem({32, 8, 128}, DType::fp16, 129, 4, {.logits_soft_cap = 5})),
                       "max_len 129 is above its 128"));
  EXPECT_TRUE(contains(reason(variant_problem({32, 8, 256}, DType::bf16, 4096, 4, window_sinks(64))), "head_dim 256"));
  EXPECT_TRUE(contains(reason(variant_problem({64, 8, 64}, DType::fp16, 4096, 4, window_sinks(64))), "head_dim 64"));
  EXPECT_EQ(decode_short_unsupported_reason(variant_problem(kGptOss, DType::bf16, 4096, 4, window_sinks(128)), automatic),
            std::nullopt);

  // plan_decode refuses an explicit short_seq it cannot run before any CUDA call.
  DecodeOptions pinned;
  pinned.path = DecodePath::short_seq;
  DecodePlan plan;
  EXPECT_EQ(plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode,
                                         variant_problem({32, 8, 128}, DType::fp16, 4096, 4, {.q_len = 2, .window = 16}),
                                         pinned, &plan),
            cudaErrorInvalidValue);
  EXPECT_EQ(plan_decode<PagedKV<__nv_fp8_e4m3>>(DecodeKernel::flash_decode, fp8, pinned, &plan), cudaErrorInvalidValue);
  EXPECT_EQ(plan_decode<ContiguousKV<__nv_bfloat16>>(
                DecodeKernel::flash_decode, variant_problem({32, 8, 128}, DType::bf16, 4096, 4, window_sinks(200)),
                pinned, &plan),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace decode_bench
