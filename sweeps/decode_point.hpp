#pragma once
// A decode point's parameters, read once from the point JSON with the axis defaults.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"

namespace decode_bench::sweeps {

struct DecodePoint {
  std::string kernel;
  DecodeShape shape;
  DType dtype = DType::fp16;
  bool paged = false;
  int page_size = 16;
  std::string page_order = "sequential";
  double fragmentation = 1.0;      // contiguous: slot length = ceil(T * fragmentation)
  int blocks = 0;                  // 0: automatic split count
  std::string timing = "cold";
  bool end_to_end = false;
  std::uint64_t seed = 0;
  std::vector<std::int32_t> lengths;  // one per sequence in the batch

  std::int64_t max_len() const;
  std::int64_t total_tokens() const;
};

// Why the decode runners cannot run this point, or nullopt.
std::optional<std::string> decode_point_unsupported(const nlohmann::json& params);
DecodePoint parse_decode_point(const nlohmann::json& params);

}  // namespace decode_bench::sweeps
