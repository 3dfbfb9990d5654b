// Why the GPU decode runners skip a valid point (sweeps/decode_point.hpp), host-side: each reason
// names the parameter and its value, since the reason is all a "skipped" point records.
#include <gtest/gtest.h>

#include "sweeps/decode_point.hpp"
#include "sweeps/decode_runner.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// A point the decode runners support: flash-decode, FP16, 32 q heads over 8 KV heads (group 4),
// d = 128, fixed lengths, no prefix.
json supported() {
  return {{"kernel", "flash_decode"}, {"layout", "paged"},     {"dtype", "fp16"},       {"heads_q", 32},
          {"heads_kv", 8},            {"head_dim", 128},       {"batch", 4},            {"T", 4096},
          {"length_dist", "fixed"},   {"prefix_len", 0},       {"page_size", 16}};
}

std::string reason_for(const json& change) {
  json p = supported();
  p.update(change);
  const auto reason = decode_point_unsupported(p);
  return reason ? *reason : "<supported>";
}

TEST(DecodePointUnsupported, SupportedPointsHaveNoReason) {
  EXPECT_EQ(reason_for(json::object()), "<supported>");
  // Every compiled head_dim and GQA group, and the axis defaults (an almost empty point).
  for (int d : {64, 128, 256}) EXPECT_EQ(reason_for({{"head_dim", d}}), "<supported>") << d;
  for (int g : {1, 2, 4, 8}) EXPECT_EQ(reason_for({{"heads_q", 8 * g}}), "<supported>") << g;
  EXPECT_EQ(reason_for({{"length_dist", "uniform"}}), "<supported>");
  const auto defaults = decode_point_unsupported(json{{"kernel", "baseline"}});
  EXPECT_FALSE(defaults.has_value()) << *defaults;
}

// FP8 runs through flash-decode and batch decode; the baseline skips it with a reason naming the dtype.
TEST(DecodePointUnsupported, Fp8OnTheBaselineNamesTheDtype) {
  for (const char* dtype : {"fp8_e4m3", "fp8_e5m2"}) {
    EXPECT_EQ(reason_for({{"dtype", dtype}}), "<supported>") << dtype;
    EXPECT_EQ(reason_for({{"dtype", dtype}, {"kernel", "batch_decode"}}), "<supported>") << dtype;
    const std::string r = reason_for({{"dtype", dtype}, {"kernel", "baseline"}, {"layout", "contiguous"}});
    EXPECT_EQ(r, "dtype " + std::string(dtype) +
                     ": the 3-kernel baseline has no FP8 path (it reads K/V without dequantization scales)");
  }
  EXPECT_EQ(parse_decode_point(json{{"dtype", "fp8_e5m2"}}).dtype, DType::fp8_e5m2);
}

TEST(DecodePointUnsupported, SharedPrefixNamesPrefixLen) {
  EXPECT_EQ(reason_for({{"prefix_len", 1024}, {"suffix_len", 128}, {"T", 1152}}),
            "prefix_len 1024: shared-prefix points run under kernel shared_prefix or batch_decode (layout paged)");
}

TEST(DecodePointUnsupported, ZipfLengthsNameLengthDist) {
  const std::string r = reason_for({{"length_dist", "zipf"}, {"zipf_alpha", 1.5}});
  EXPECT_NE(r.find("length_dist zipf"), std::string::npos) << r;
  EXPECT_NE(r.find("capacity"), std::string::npos) << r;  // where zipf lengths are supported
}

TEST(DecodePointUnsupported, EndToEndNeedsTheContiguousLayout) {
  EXPECT_EQ(reason_for({{"end_to_end", true}}),
            "end_to_end with layout paged: the E2E upload is of contiguous K/V slabs; use layout contiguous");
  EXPECT_EQ(reason_for({{"end_to_end", true}, {"layout", "contiguous"}}), "<supported>");
}

// The CPU reference times the lengths it is given; zipf or prefix lengths would be timed as fixed
// ones, so it refuses them with the same reasons as the GPU runners.
TEST(DecodePointUnsupported, TheCpuReferenceRefusesZipfAndPrefixLengths) {
  const auto cpu = make_cpu_reference_runner();
  const auto reason = [&](const json& change) {
    json p = supported();
    p["layout"] = "contiguous";
    p.update(change);
    const auto r = cpu->cannot_run(Point{"e", p, "e/x", 0});
    return r ? *r : "<supported>";
  };
  EXPECT_EQ(reason(json::object()), "<supported>");
  EXPECT_NE(reason({{"length_dist", "zipf"}}).find("length_dist zipf"), std::string::npos);
  EXPECT_EQ(reason({{"prefix_len", 64}}), "prefix_len 64: shared-prefix points run under kernel shared_prefix or batch_decode (layout paged)");
}

TEST(DecodePointUnsupported, HeadDimNamesTheValueAndTheCompiledOnes) {
  EXPECT_EQ(reason_for({{"head_dim", 96}}), "head_dim 96 has no compiled kernel (supported: 64, 128, 256)");
}

// Grouped FP16/BF16 shapes run on the tensor-core path (groups 1-16, MQA up to 128 query heads);
// FP32 and FP8 keep the CUDA-core kernel's groups 1, 2, 4, 8; the baseline names both head counts.
TEST(DecodePointUnsupported, GqaGroupsFollowTheKernelsRule) {
  EXPECT_EQ(reason_for({{"heads_q", 28}, {"heads_kv", 4}}), "<supported>");
  EXPECT_EQ(reason_for({{"heads_q", 128}, {"heads_kv", 8}}), "<supported>");
  EXPECT_EQ(reason_for({{"heads_q", 71}, {"heads_kv", 1}, {"head_dim", 64}}), "<supported>");
  const std::string fp32 = reason_for({{"heads_q", 3}, {"heads_kv", 1}, {"dtype", "fp32"}});
  EXPECT_EQ(fp32.rfind("GQA group 3 has no compiled kernel", 0), 0u) << fp32;
  const std::string wide = reason_for({{"heads_q", 272}, {"heads_kv", 8}});
  EXPECT_EQ(wide.rfind("GQA group 34 has no compiled kernel", 0), 0u) << wide;
  EXPECT_EQ(reason_for({{"heads_q", 3}, {"heads_kv", 1}, {"kernel", "baseline"}}),
            "GQA group 3 (heads_q 3 / heads_kv 1) has no compiled baseline kernel (1, 2, 4, 8)");
}

// Several problems: the prefix is reported first (it rules out every kernel in this build).
TEST(DecodePointUnsupported, ThePrefixReasonComesFirst) {
  const std::string r = reason_for({{"prefix_len", 64}, {"head_dim", 96}, {"heads_q", 3}, {"heads_kv", 1}});
  EXPECT_EQ(r.rfind("prefix_len 64:", 0), 0u) << r;
}

}  // namespace
}  // namespace decode_bench::sweeps
