#pragma once
// One point of a sweep: an experiment name plus a complete parameter set. Resume, shard and merge
// key on `id`, which is a pure function of (experiment, parameters).
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

struct Point {
  std::string experiment;
  nlohmann::json parameters;  // every relevant axis, defaults filled in; irrelevant axes absent
  std::string id;             // "exp/kernel=flash_decode/layout=paged/dtype=fp16/T=4096/page_size=16"
  std::size_t index = 0;      // position in the preset's full expansion
};

// "<experiment>/key=value/..." over the axis table's order: axes marked always_in_id, then every
// other parameter that differs from its default. Same parameters, same id; different, different.
std::string point_id(const std::string& experiment, const nlohmann::json& parameters);

}  // namespace decode_bench::sweeps
