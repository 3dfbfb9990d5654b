#pragma once
// From a preset name or file plus command-line choices to the list of points to run:
// load -> parse + validate (every error at once) -> apply overrides -> expand -> filter -> shard.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweeps/point.hpp"
#include "sweeps/preset.hpp"

namespace decode_bench::sweeps {

// An embedded preset by name, or a file when the argument ends in ".json".
// Throws ConfigErrors (path "--preset") naming the embedded presets when neither exists.
nlohmann::json load_preset_document(const std::string& name_or_path);

struct Shard {
  std::size_t index = 0;  // 0 <= index < count
  std::size_t count = 1;
  std::string text() const { return std::to_string(index) + "/" + std::to_string(count); }
};
// "i/n" with 0 <= i < n; errors name "--shard".
Shard parse_shard(std::string_view text);
// Every count-th point starting at index, in order: shards of one list are disjoint and cover it.
std::vector<Point> shard_points(const std::vector<Point>& points, const Shard& shard);

struct PlanRequest {
  nlohmann::json preset_document;
  std::vector<std::string> overrides;    // "KEY=VALUES" as given to --set
  std::vector<std::string> experiments;  // --experiment filter; empty = all
  Shard shard;
  ValidationContext context;
};

struct Plan {
  Preset preset;
  std::size_t total_points = 0;  // the whole expansion (after overrides, before filter and shard)
  std::vector<Point> points;     // what this run covers, in expansion order
};

// Throws ConfigErrors carrying every problem found.
Plan make_plan(const PlanRequest& request);

}  // namespace decode_bench::sweeps
