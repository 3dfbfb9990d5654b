// The shared-prefix traffic model and prefix row tokens with attention variants
// (kernels/traffic_model.hpp), against closed forms for one small batch: 4 sequences of 100 tokens,
// a prefix of 64 (one level [0, 64), pages of 16), own suffixes [64, 100); then which variants the
// composition takes (kernels/shared_prefix_variant.hpp) and the reasons it gives for the rest, and
// what the row kernel's variant twin takes over explicit items.
#include <gtest/gtest.h>

#include "backends/decode_bench_support.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/shared_prefix_variant.hpp"
#include "kernels/traffic_model.hpp"
#include "pools/shared_prefix_batch.hpp"

namespace decode_bench {
namespace {

const DecodeShape kShape{8, 2, 128};
constexpr double kRow = 128.0 * 2 * 2;  // one token's K (or V) row over the KV heads, fp16

SharedPrefixLayout batch() {
  const SharedPrefixLayout l = shared_prefix_layout({.batch = 4, .prefix_len = 64, .suffix_len = 36}, 16);
  EXPECT_EQ(l.levels.size(), 1u);
  EXPECT_EQ(l.levels[0].token_end, 64);
  EXPECT_EQ(l.suffix_begin[0], 64);
  return l;
}

AttentionVariant window(std::int64_t w) {
  AttentionVariant v;
  v.window = w;
  return v;
}

TEST(SharedPrefixVariantModel, PlainCountsEveryStoredTokenOnce) {
  const TrafficModel m = shared_prefix_traffic_model(kShape, DType::fp16, batch(), true, 1);
  EXPECT_DOUBLE_EQ(m.k_bytes, (64 + 4 * 36) * kRow);
  EXPECT_DOUBLE_EQ(m.page_table_bytes, (4 + 4 * 3) * 4.0 + 5 * 4.0);  // level 4 pages, suffixes 3 each
  EXPECT_DOUBLE_EQ(m.flops, 4.0 * 4 * 100 * 8 * 128);
  EXPECT_DOUBLE_EQ(shared_prefix_row_tokens(batch()), 4.0 * 64);
  // A window wider than the sequences is the plain model.
  const TrafficModel w = shared_prefix_traffic_model(kShape, DType::fp16, batch(), true, 1, window(100));
  EXPECT_DOUBLE_EQ(w.k_bytes, m.k_bytes);
  EXPECT_DOUBLE_EQ(w.flops, m.flops);
  EXPECT_DOUBLE_EQ(w.page_table_bytes, m.page_table_bytes);
  EXPECT_DOUBLE_EQ(w.extra_bytes, m.extra_bytes);
}

TEST(SharedPrefixVariantModel, AWindowInsideThePrefixReadsItsTailOnce) {
  // Window 50: positions [50, 100). The level's [50, 64) once (14 tokens, page 3 of it), every
  // suffix whole (36 tokens, 3 pages); 50 visible tokens per sequence.
  const TrafficModel m = shared_prefix_traffic_model(kShape, DType::fp16, batch(), true, 1, window(50));
  EXPECT_DOUBLE_EQ(m.k_bytes, (14 + 4 * 36) * kRow);
  EXPECT_DOUBLE_EQ(m.v_bytes, m.k_bytes);
  EXPECT_DOUBLE_EQ(m.page_table_bytes, (1 + 4 * 3) * 4.0 + 5 * 4.0);
  EXPECT_DOUBLE_EQ(m.flops, 4.0 * 4 * 50 * 8 * 128);
  EXPECT_DOUBLE_EQ(shared_prefix_row_tokens(batch(), window(50)), 4.0 * 14);
  // The level states of all 4 x 8 rows written and read, the decode states re-read and rewritten.
  const double states = 4.0 * 8 * 129 * 4;
  EXPECT_DOUBLE_EQ(m.extra_bytes, 2.0 * states + 2.0 * states);
  // The plain decode over the same pages reads the level's 14 tokens once per sequence.
  const TrafficModel plain = shared_prefix_traffic_model(kShape, DType::fp16, batch(), false, 1, window(50));
  EXPECT_DOUBLE_EQ(plain.k_bytes, m.k_bytes);
  EXPECT_DOUBLE_EQ(plain.extra_bytes, 2.0 * (4 * 50 - (14 + 4 * 36)) * kRow);
  EXPECT_DOUBLE_EQ(plain.page_table_bytes, 4 * 4 * 4.0 + 5 * 4.0);  // pages 3..6 of each sequence
}

TEST(SharedPrefixVariantModel, AWindowInsideTheSuffixesReadsNoPrefix) {
  // Window 30: positions [70, 100), pages 4..6 of each suffix; no level row.
  const TrafficModel m = shared_prefix_traffic_model(kShape, DType::fp16, batch(), true, 1, window(30));
  EXPECT_DOUBLE_EQ(m.k_bytes, 4 * 30 * kRow);
  EXPECT_DOUBLE_EQ(m.page_table_bytes, 4 * 3 * 4.0 + 5 * 4.0);
  EXPECT_DOUBLE_EQ(m.flops, 4.0 * 4 * 30 * 8 * 128);
  EXPECT_DOUBLE_EQ(m.extra_bytes, 2.0 * 4 * 8 * 129 * 4);  // the merge's pass only
  EXPECT_DOUBLE_EQ(shared_prefix_row_tokens(batch(), window(30)), 0.0);
  // Exactly at the level's end (window 36: [64, 100)): the same bytes as the suffixes alone.
  const TrafficModel edge = shared_prefix_traffic_model(kShape, DType::fp16, batch(), true, 1, window(36));
  EXPECT_DOUBLE_EQ(edge.k_bytes, 4 * 36 * kRow);
  EXPECT_DOUBLE_EQ(shared_prefix_row_tokens(batch(), window(36)), 0.0);
}

TEST(SharedPrefixVariantModel, SinksCountWithQ) {
  AttentionVariant v;
  v.sinks = true;
  const TrafficModel plain = shared_prefix_traffic_model(kShape, DType::fp16, batch(), true, 1);
  const TrafficModel m = shared_prefix_traffic_model(kShape, DType::fp16, batch(), true, 1, v);
  EXPECT_DOUBLE_EQ(m.q_bytes, plain.q_bytes + 8 * 4.0);
  EXPECT_DOUBLE_EQ(m.k_bytes, plain.k_bytes);
}

TEST(SharedPrefixVariantSupport, WindowAndSinksAtOneQueryTokenOnly) {
  static const float kSinks = 0.f;
  const auto reason = [](const AttentionVariant& v, DType dtype = DType::fp16, DecodeShape shape = kShape) {
    return shared_prefix_variant_unsupported_reason(shape, dtype, row_attention_variant(v, &kSinks));
  };
  AttentionVariant v;
  EXPECT_FALSE(reason(v).has_value());
  v.window = 40;
  EXPECT_FALSE(reason(v).has_value());
  EXPECT_FALSE(reason(v, DType::bf16).has_value());
  v.sinks = true;
  EXPECT_FALSE(reason(v).has_value());
  EXPECT_FALSE(decode_bench_unsupported(KernelKind::shared_prefix, kShape, DType::fp16, v).has_value());
  // The suffix phase's variant kernels have no FP32 twin: its reason, named as the suffix phase's.
  const auto fp32 = reason(v, DType::fp32);
  ASSERT_TRUE(fp32.has_value());
  EXPECT_NE(fp32->find("suffix phase"), std::string::npos) << *fp32;
  AttentionVariant q2;
  q2.q_len = 2;
  ASSERT_TRUE(reason(q2).has_value());
  EXPECT_EQ(reason(q2)->rfind("q_len 2:", 0), 0u) << *reason(q2);
  // The soft-cap in both phases, alone and with the rest, FP16 and BF16 (BF16 at head dim 64 too).
  AttentionVariant cap;
  cap.logits_soft_cap = 50;
  EXPECT_FALSE(reason(cap).has_value());
  EXPECT_FALSE(reason(cap, DType::bf16, {16, 2, 64}).has_value());
  EXPECT_FALSE(decode_bench_unsupported(KernelKind::shared_prefix, kShape, DType::bf16, cap).has_value());
  cap.window = 100;
  cap.sinks = true;
  EXPECT_FALSE(reason(cap).has_value());
  const auto fp16_d64 = reason(cap, DType::fp16, {16, 2, 64});
  ASSERT_TRUE(fp16_d64.has_value());
  const auto why = decode_bench_unsupported(KernelKind::shared_prefix, kShape, DType::fp32, cap);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("logits_soft_cap 50"), std::string::npos) << *why;
}

// The row kernel's variant twin over explicit items (the shared prefix's levels): the soft-cap
// alone, with or without a row map for q; q_len, a window or sinks are decode items' only.
TEST(SharedPrefixVariantSupport, RowItemsTakeTheCapAlone) {
  static const RowAttentionItem kItem{};
  static const std::int32_t kRowQ = 0;
  static const float kSinks = 0.f;
  RowAttentionProblem p;
  p.shape = kShape;
  p.kv_dtype = DType::fp16;
  p.num_items = 1;
  p.items = &kItem;  // never read: the reason looks at counts and which pointers are set
  p.num_rows = 8;
  p.max_item_rows = 8;
  p.max_item_tokens = 64;
  p.variant.logits_soft_cap = 5;
  EXPECT_FALSE(row_attention_unsupported_reason(p).has_value());
  RowAttentionProblem q = p;
  q.row_q = &kRowQ;
  EXPECT_FALSE(row_attention_unsupported_reason(q).has_value());
  q = p;
  q.variant.window = 16;
  EXPECT_TRUE(row_attention_unsupported_reason(q).has_value());
  q = p;
  q.variant.sinks = &kSinks;
  EXPECT_TRUE(row_attention_unsupported_reason(q).has_value());
  q = p;
  q.variant.q_len = 2;
  EXPECT_TRUE(row_attention_unsupported_reason(q).has_value());
  // FP32 has no variant twin: refused whatever the items.
  q = p;
  q.kv_dtype = DType::fp32;
  EXPECT_TRUE(row_attention_unsupported_reason(q).has_value());
}

}  // namespace
}  // namespace decode_bench
