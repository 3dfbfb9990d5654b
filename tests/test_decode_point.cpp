// Why the GPU decode runners skip a valid point (sweeps/decode_point.hpp), host-side: each reason
// names the parameter and its value, since the reason is all a "skipped" point records.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "sweeps/decode_point.hpp"
#include "sweeps/cpu_reference_runner.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/expand.hpp"
#include "sweeps/memory_estimate.hpp"
#include "sweeps/preset.hpp"

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
  // Every head_dim of the list (80 and 96 on the d = 128 kernel, tail masked) and GQA group,
  // and the axis defaults (an almost empty point).
  for (int d : {64, 80, 96, 128, 256}) EXPECT_EQ(reason_for({{"head_dim", d}}), "<supported>") << d;
  for (int d : {48, 160}) EXPECT_EQ(reason_for({{"head_dim", d}, {"kernel", "baseline"}}), "<supported>") << d;
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

// Zipf lengths run in the decode runners: drawn from the capacity runner's distribution (mean T,
// exponent zipf_alpha), reproducibly from the seed; a mean out of reach names T and zipf_alpha.
TEST(DecodePointUnsupported, ZipfLengthsRunAndAreDrawnFromTheSeed) {
  EXPECT_EQ(reason_for({{"length_dist", "zipf"}, {"zipf_alpha", 1.2}, {"T", 1024}}), "<supported>");
  const json p = {{"length_dist", "zipf"}, {"zipf_alpha", 1.2}, {"T", 1024}, {"batch", 64}, {"seed", 3}};
  const DecodePoint a = parse_decode_point(p), b = parse_decode_point(p);
  EXPECT_EQ(a.lengths, b.lengths);
  ASSERT_EQ(a.lengths.size(), 64u);
  const auto support = LengthDistribution::zipf(1024, 1.2).hi;
  for (auto len : a.lengths) {
    EXPECT_GE(len, 1);
    EXPECT_LE(len, support);
  }
  std::vector<std::int32_t> sorted = a.lengths;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_LT(sorted[32], 64) << "zipf(1.2) with mean 1K: most sequences are short";
  EXPECT_GT(a.max_len(), 4096) << "and a few are long";
  json other = p;
  other["seed"] = 4;
  EXPECT_NE(parse_decode_point(other).lengths, a.lengths);
  const std::string r = reason_for({{"length_dist", "zipf"}, {"zipf_alpha", 3.0}, {"T", 1000000}});
  EXPECT_EQ(r.rfind("length_dist zipf with T 1000000 and zipf_alpha 3", 0), 0u) << r;
  EXPECT_NE(r.find("out of reach"), std::string::npos) << r;
}

TEST(DecodePointUnsupported, EndToEndNeedsTheContiguousLayout) {
  EXPECT_EQ(reason_for({{"end_to_end", true}}),
            "end_to_end with layout paged: the E2E upload is of contiguous K/V slabs; use layout contiguous");
  EXPECT_EQ(reason_for({{"end_to_end", true}, {"layout", "contiguous"}}), "<supported>");
}

// The CPU reference times the lengths it is given: zipf lengths as drawn; prefix lengths would be
// timed as fixed ones, so it refuses them with the same reason as the GPU runners.
TEST(DecodePointUnsupported, TheCpuReferenceTakesZipfAndRefusesPrefixLengths) {
  const auto cpu = make_cpu_reference_runner();
  const auto reason = [&](const json& change) {
    json p = supported();
    p["layout"] = "contiguous";
    p.update(change);
    const auto r = cpu->cannot_run(Point{"e", p, "e/x", 0});
    return r ? *r : "<supported>";
  };
  EXPECT_EQ(reason(json::object()), "<supported>");
  EXPECT_EQ(reason({{"length_dist", "zipf"}, {"zipf_alpha", 1.2}, {"T", 1024}}), "<supported>");
  EXPECT_EQ(reason({{"prefix_len", 64}}), "prefix_len 64: shared-prefix points run under kernel shared_prefix or batch_decode (layout paged)");
}

// A zipf point's contiguous slabs are sized by the longest draw, which can reach the support's top.
TEST(DecodePointMemory, ZipfSlabsAreSizedByTheSupport) {
  const json p = {{"kernel", "flash_decode"}, {"layout", "contiguous"}, {"length_dist", "zipf"}, {"zipf_alpha", 1.2},
                  {"T", 1024}, {"batch", 64}, {"heads_q", 32}, {"heads_kv", 32}, {"head_dim", 128}, {"dtype", "fp16"}};
  const std::uint64_t token = 2 * 32 * 128 * 2, hi = LengthDistribution::zipf(1024, 1.2).hi;
  EXPECT_GE(estimate_device_bytes(p), 64 * hi * token);
  json fixed = p;
  fixed["length_dist"] = "fixed";
  EXPECT_EQ(estimate_device_bytes(fixed), 64 * 1024 * token + 2 * 64 * 32 * 128 * 4);  // K/V slabs + q and o
}

TEST(DecodePointUnsupported, HeadDimNamesTheValueAndTheSupportedOnes) {
  const std::string why_72 =
      "head_dim 72 is not supported (supported: multiples of 16 from 16 to 256; kernels are compiled for 64, 128 and "
      "256, smaller head dims run on the next one up with the tail dims masked)";
  EXPECT_EQ(reason_for({{"head_dim", 72}}), why_72);
  EXPECT_EQ(reason_for({{"head_dim", 72}, {"kernel", "baseline"}}), why_72);
  EXPECT_EQ(reason_for({{"head_dim", 72}, {"kernel", "batch_decode"}}), why_72);
  const std::string big = reason_for({{"head_dim", 512}, {"dtype", "fp8_e4m3"}});
  EXPECT_EQ(big.rfind("head_dim 512 is not supported", 0), 0u) << big;
}

// The models preset (configs/models.json) expands to points the decode runners take, Phi-3-mini's
// d = 96 included (it runs on the d = 128 kernels with the tail masked), none skipped for its head dim.
TEST(DecodePointUnsupported, ModelsPresetPointsIncludingPhi3MiniAreRunnable) {
  const auto preset = find_embedded_preset("models");
  ASSERT_TRUE(preset);
  std::vector<ConfigError> errors;
  const auto points = expand_preset(parse_preset(json::parse(preset->json), {}, errors), {}, errors);
  ASSERT_TRUE(errors.empty()) << format_config_errors(errors);
  int phi3 = 0, layered = 0;
  for (const auto& point : points) {
    const auto reason = decode_point_unsupported(point.parameters);
    // The current models' local and global layers (gpt-oss at d 64 with window and sinks on the
    // BF16 head-dim-64 variant kernel) all run: none is skipped.
    for (const char* name : {"gpt_oss_sliding", "gpt_oss_full", "gemma3_27b_local", "gemma3_27b_global", "qwen3_32b",
                             "llama3_1_405b"})
      if (point.experiment == name) {
        ++layered;
        EXPECT_EQ(point.parameters["dtype"], "bf16") << point.id;
        EXPECT_FALSE(reason.has_value()) << point.id << ": " << *reason;
      }
    if (point.experiment == "phi3_mini") {
      ++phi3;
      EXPECT_EQ(point.parameters["head_dim"], 96) << point.id;
      EXPECT_FALSE(reason.has_value()) << point.id << ": " << *reason;
    }
    if (reason) {
      EXPECT_EQ(reason->find("head_dim"), std::string::npos) << point.id << ": " << *reason;
    }
  }
  EXPECT_GT(phi3, 0);
  EXPECT_EQ(layered, 8 + 8 + 4 + 8 + 8 + 8);  // two layouts x four shapes; gemma3_27b_local two shapes
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
  const std::string r = reason_for({{"prefix_len", 64}, {"head_dim", 72}, {"heads_q", 3}, {"heads_kv", 1}});
  EXPECT_EQ(r.rfind("prefix_len 64:", 0), 0u) << r;
}

}  // namespace
}  // namespace decode_bench::sweeps
