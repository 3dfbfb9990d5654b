// Where a decode point's verification runs (sweeps/decode_verify.hpp), host-side: the float64 GPU
// reference takes every attention variant and dtype, and only a head_dim over its shared-memory
// limit sends a point to the host reference.
#include <gtest/gtest.h>

#include "kernels/gpu_reference.hpp"
#include "sweeps/decode_point.hpp"
#include "sweeps/decode_verify.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/expand.hpp"
#include "sweeps/preset.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

DecodePoint point(const json& change) {
  json p = {{"kernel", "flash_decode"}, {"layout", "paged"}, {"dtype", "fp16"}, {"heads_q", 32}, {"heads_kv", 8},
            {"head_dim", 128},          {"batch", 2},        {"T", 1024},       {"page_size", 16}};
  p.update(change);
  return parse_decode_point(p);
}

TEST(DecodeVerifyRouting, EveryVariantAndDtypeVerifiesOnTheDevice) {
  for (const json& change : {json::object(), json{{"q_len", 16}}, json{{"window", 1}}, json{{"sinks", true}},
                             json{{"logits_soft_cap", 30.0}},
                             json{{"q_len", 4}, {"window", 128}, {"sinks", true}, {"logits_soft_cap", 50.0}}})
    for (const char* dtype : {"fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"}) {
      json c = change;
      c["dtype"] = dtype;
      const DecodePoint d = point(c);
      EXPECT_TRUE(device_reference_supports(d)) << c.dump();
    }
}

TEST(DecodeVerifyRouting, OnlyAHeadDimOverTheLimitGoesToTheHost) {
  const int limit = gpu_reference_max_head_dim();
  EXPECT_TRUE(device_reference_supports(point({{"head_dim", limit}, {"q_len", 2}})));
  EXPECT_FALSE(device_reference_supports(point({{"head_dim", limit + 1}})));
  EXPECT_FALSE(device_reference_supports(point({{"head_dim", limit + 1}, {"q_len", 2}, {"sinks", true}})));
}

// The variants preset (configs/variants.json) verifies every point on the device: none needs the
// host copies and the host reference that made it too slow for one GPU call.
TEST(DecodeVerifyRouting, VariantsPresetVerifiesOnTheDevice) {
  const auto preset = find_embedded_preset("variants");
  ASSERT_TRUE(preset);
  std::vector<ConfigError> errors;
  const auto points = expand_preset(parse_preset(json::parse(preset->json), {}, errors), {}, errors);
  ASSERT_TRUE(errors.empty()) << format_config_errors(errors);
  int variants = 0;
  for (const auto& p : points) {
    const DecodePoint d = parse_decode_point(p.parameters);
    variants += !d.variant.plain();
    EXPECT_TRUE(device_reference_supports(d)) << p.id;
  }
  EXPECT_GT(variants, 0);
}

}  // namespace
}  // namespace decode_bench::sweeps
