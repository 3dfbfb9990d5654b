// The variants' minimum traffic (kernels/variant_traffic_model.hpp) against closed forms.
#include <gtest/gtest.h>

#include "kernels/variant_traffic_model.hpp"

namespace decode_bench {
namespace {

const DecodeShape kShape{32, 8, 128};

std::vector<std::int32_t> pages_of(const std::vector<std::int32_t>& lengths, int page_size) {
  std::vector<std::int32_t> pages;
  for (auto len : lengths) pages.push_back((len + page_size - 1) / page_size);
  return pages;
}

TEST(VariantTrafficModel, PlainVariantIsTheDecodeMinimum) {
  const std::vector<std::int32_t> lengths = {4096, 17, 1, 1000};
  for (DType dt : {DType::fp16, DType::fp8_e4m3}) {
    const TrafficModel plain = decode_traffic_model(DecodeKernel::flash_decode, kShape, dt, lengths, {}, 1);
    const TrafficModel v = variant_traffic_model(kShape, dt, lengths, 0, {});
    EXPECT_EQ(v.to_json("m"), plain.to_json("m"));
    const TrafficModel paged_plain =
        decode_traffic_model(DecodeKernel::flash_decode, kShape, dt, lengths, pages_of(lengths, 16), 1);
    EXPECT_EQ(variant_traffic_model(kShape, dt, lengths, 16, {}).to_json("m"), paged_plain.to_json("m"));
  }
}

TEST(VariantTrafficModel, AWindowReadsOnlyItsTokensAndTheirPages) {
  const std::vector<std::int32_t> lengths(16, 32768);
  const double row = 8 * 128 * 2.0;  // one token's K (or V) over the KV heads, fp16
  const TrafficModel w = variant_traffic_model(kShape, DType::fp16, lengths, 0, {.window = 1024});
  EXPECT_EQ(w.k_bytes, 16 * 1024 * row);
  EXPECT_EQ(w.v_bytes, w.k_bytes);
  EXPECT_EQ(w.flops, 4.0 * 16 * 1024 * 32 * 128);
  // The same bytes as full attention over 1024 tokens.
  const TrafficModel t1k = decode_traffic_model(DecodeKernel::flash_decode, kShape, DType::fp16,
                                                std::vector<std::int32_t>(16, 1024), {}, 1);
  EXPECT_EQ(w.minimum_bytes(), t1k.minimum_bytes());
  // Paged: 128 tokens ending at a page boundary cover 8 pages of 16; 129 tokens reach into a 9th.
  EXPECT_EQ(variant_traffic_model(kShape, DType::fp16, {4096}, 16, {.window = 128}).page_table_bytes, 8 * 4.0 + 2 * 4.0);
  EXPECT_EQ(variant_traffic_model(kShape, DType::fp16, {4096}, 16, {.window = 129}).page_table_bytes, 9 * 4.0 + 2 * 4.0);
  EXPECT_EQ(variant_traffic_model(kShape, DType::fp16, {4100}, 16, {.window = 5}).page_table_bytes, 2 * 4.0 + 2 * 4.0);
  // A window as long as the sequence or longer is full attention.
  const TrafficModel full = variant_traffic_model(kShape, DType::fp16, {300}, 16, {});
  EXPECT_EQ(variant_traffic_model(kShape, DType::fp16, {300}, 16, {.window = 300}).to_json("m"), full.to_json("m"));
  EXPECT_EQ(variant_traffic_model(kShape, DType::fp16, {300}, 16, {.window = 5000}).to_json("m"), full.to_json("m"));
}

TEST(VariantTrafficModel, QueryTokensMultiplyQAndOAndTheFlopsOnTheSameBytes) {
  const std::vector<std::int32_t> lengths(16, 4096);
  const TrafficModel one = variant_traffic_model(kShape, DType::fp16, lengths, 0, {});
  const TrafficModel four = variant_traffic_model(kShape, DType::fp16, lengths, 0, {.q_len = 4});
  EXPECT_EQ(four.k_bytes, one.k_bytes);
  EXPECT_EQ(four.q_bytes, 4 * one.q_bytes);
  EXPECT_EQ(four.o_bytes, 4 * one.o_bytes);
  // Token i of 4 sees 4096 - 4 + i + 1 positions: 4 * 4096 - 6 pairs per head.
  EXPECT_EQ(four.flops, 4.0 * 16 * (4 * 4096 - 6) * 32 * 128);
  EXPECT_EQ(visible_token_pairs(4096, {.q_len = 4}), 4 * 4096 - 6);
}

TEST(VariantTrafficModel, WindowWithQueryTokensReadsTheUnionOfTheirWindows) {
  // Tokens at 996..999 with window 10: the first sees 987..996, so 987..999 = 13 = 10 + 4 - 1 tokens.
  const TrafficModel m = variant_traffic_model(kShape, DType::fp16, {1000}, 0, {.q_len = 4, .window = 10});
  EXPECT_EQ(m.k_bytes, 13 * 8 * 128 * 2.0);
  EXPECT_EQ(m.flops, 4.0 * 4 * 10 * 32 * 128);  // each token sees exactly 10
}

TEST(VariantTrafficModel, SinksAndSoftCapCostNoCacheBytes) {
  const std::vector<std::int32_t> lengths(4, 1024);
  const TrafficModel plain = variant_traffic_model(kShape, DType::fp16, lengths, 0, {});
  const TrafficModel sinks = variant_traffic_model(kShape, DType::fp16, lengths, 0, {.sinks = true});
  EXPECT_EQ(sinks.q_bytes, plain.q_bytes + 32 * 4.0);  // one fp32 logit per query head
  EXPECT_EQ(sinks.k_bytes, plain.k_bytes);
  const TrafficModel cap = variant_traffic_model(kShape, DType::fp16, lengths, 0, {.logits_soft_cap = 50});
  EXPECT_EQ(cap.to_json("m"), plain.to_json("m"));
}

}  // namespace
}  // namespace decode_bench
