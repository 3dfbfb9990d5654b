#pragma once
// From a preset name or file plus command-line choices to the list of points to run:
// load -> parse + validate (every error at once) -> apply overrides -> expand -> select
// (--experiment, --filter) -> shard. Selection comes before anything is built, so --dry-run,
// --shard and the point counts see exactly the points a run measures.
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
  // A NameFilter pattern (harness/name_filter.hpp) over point ids; empty = all. filter_flag is the
  // flag that gave it (--filter or --benchmark_filter), named in errors.
  std::string filter;
  std::string filter_flag = "--filter";
  Shard shard;
  ValidationContext context;
};

struct Plan {
  Preset preset;
  std::size_t total_points = 0;     // the whole expansion (after overrides, before filter and shard)
  std::size_t selected_points = 0;  // after --experiment and --filter, before the shard
  std::string filter;               // the request's filter pattern ("" = none)
  std::string filter_flag;          // the flag that gave it (--filter or --benchmark_filter)
  std::vector<Point> points;        // what this run covers, in expansion order
};

// Throws ConfigErrors carrying every problem found; among them, on the filter's flag, a filter
// that is not a valid regular expression or that selects none of the points.
Plan make_plan(const PlanRequest& request);

}  // namespace decode_bench::sweeps
