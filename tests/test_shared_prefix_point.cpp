// Which shared-prefix points the runners refuse, and that each reason names the parameter.
#include <gtest/gtest.h>

#include "sweeps/shared_prefix_point.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

json supported() {
  return {{"kernel", "shared_prefix"}, {"layout", "paged"}, {"dtype", "fp16"}, {"heads_q", 32}, {"heads_kv", 32},
          {"head_dim", 128}, {"batch", 4}, {"prefix_len", 64}, {"suffix_len", 8}, {"page_size", 16}};
}

std::string reason_for(const json& change) {
  json p = supported();
  p.update(change);
  return shared_prefix_point_unsupported(p).value_or("<supported>");
}

TEST(SharedPrefixPointUnsupported, EachReasonNamesItsParameter) {
  EXPECT_EQ(reason_for(json::object()), "<supported>");
  EXPECT_EQ(reason_for({{"dtype", "bf16"}}), "<supported>");
  EXPECT_EQ(reason_for({{"dtype", "fp8_e4m3"}}), "<supported>");  // row attention and flash-decode take FP8
  EXPECT_EQ(reason_for({{"dtype", "fp8_e5m2"}}), "<supported>");
  EXPECT_EQ(reason_for({{"layout", "contiguous"}}),
            "layout contiguous: the sequences of a shared-prefix batch share pages, so it needs layout paged");
  EXPECT_EQ(reason_for({{"prefix_len", 0}}), "shared_prefix with prefix_len 0: a shared-prefix batch needs prefix_len > 0");
  EXPECT_EQ(reason_for({{"end_to_end", true}}), "end_to_end: shared-prefix points time the kernels only");
  EXPECT_EQ(reason_for({{"length_dist", "uniform"}}).rfind("length_dist uniform:", 0), 0u);
}

// The attention variants at one query token: taken (docs/kernels/shared_prefix.md, "Attention
// variants"); q_len > 1 refused by name.
TEST(SharedPrefixPointUnsupported, VariantsAtOneQueryTokenAreTaken) {
  EXPECT_EQ(reason_for({{"window", 40}}), "<supported>");
  EXPECT_EQ(reason_for({{"sinks", true}}), "<supported>");
  EXPECT_EQ(reason_for({{"logits_soft_cap", 50}}), "<supported>");
  EXPECT_EQ(reason_for({{"window", 40}, {"sinks", true}, {"logits_soft_cap", 5}, {"dtype", "bf16"}}), "<supported>");
  EXPECT_EQ(reason_for({{"q_len", 2}}).rfind("decode-bench's shared_prefix kernels have no build for q_len 2: q_len 2:", 0),
            0u)
      << reason_for({{"q_len", 2}});
}

}  // namespace
}  // namespace decode_bench::sweeps
