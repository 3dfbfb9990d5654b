#pragma once
// A decode point's parameters, read once from the point JSON with the axis defaults.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/attention_variant.hpp"
#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "pools/length_distribution.hpp"

namespace decode_bench::sweeps {

struct DecodePoint {
  DecodeShape shape;
  DType dtype = DType::fp16;
  bool paged = false;
  int page_size = 16;
  std::string page_order = "sequential";
  double fragmentation = 1.0;      // contiguous: slot length = ceil(T * fragmentation)
  int blocks = 0;                  // 0: automatic split count
  std::string timing = "cold";
  bool end_to_end = false;
  bool counters = true;            // the profiled counter pass after timing
  std::uint64_t seed = 0;
  AttentionVariant variant;        // q_len, window, sinks, logits_soft_cap
  std::vector<std::int32_t> lengths;  // one per sequence in the batch

  std::int64_t max_len() const;
};

// Why no decode runner (the CPU reference included) can produce these sequence lengths: a shared
// prefix, zipf lengths whose mean T is out of reach for zipf_alpha, or a drawn length shorter than
// q_len; or nullopt.
std::optional<std::string> decode_lengths_unsupported(const nlohmann::json& params);
// The zipf distribution of a length_dist = zipf point (mean T, exponent zipf_alpha); throws
// std::invalid_argument with the reason when the mean is out of reach.
LengthDistribution zipf_lengths_of(const nlohmann::json& params);
// Why no backend can measure this point as a plain decode (the reasons above, then end_to_end over
// a paged layout), or nullopt.
std::optional<std::string> decode_request_unsupported(const nlohmann::json& params);
// The same, then why decode-bench's own kernels cannot (backends/decode_bench_support.hpp), or nullopt.
std::optional<std::string> decode_point_unsupported(const nlohmann::json& params);
DecodePoint parse_decode_point(const nlohmann::json& params);
// The point's q_len, window, sinks and logits_soft_cap (defaults: plain decode).
AttentionVariant parse_attention_variant(const nlohmann::json& params);

}  // namespace decode_bench::sweeps
