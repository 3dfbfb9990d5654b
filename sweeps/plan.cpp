#include "sweeps/plan.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <optional>
#include <stdexcept>

#include "harness/json_file.hpp"
#include "harness/name_filter.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/expand.hpp"
#include "sweeps/overrides.hpp"

namespace decode_bench::sweeps {

nlohmann::json load_preset_document(const std::string& name_or_path) {
  if (name_or_path.ends_with(".json")) {
    try {
      return read_json_file(name_or_path);
    } catch (const std::exception& e) {
      throw ConfigErrors("--preset", e.what());
    }
  }
  if (const auto preset = find_embedded_preset(name_or_path)) {
    try {
      return nlohmann::json::parse(preset->json);
    } catch (const nlohmann::json::parse_error& e) {
      throw ConfigErrors("--preset", "embedded preset '" + name_or_path + "' is not valid JSON: " + e.what());
    }
  }
  std::string names;
  for (const auto& p : embedded_presets()) names += (names.empty() ? "" : ", ") + std::string(p.name);
  throw ConfigErrors("--preset", "no embedded preset named '" + name_or_path + "' (embedded: " + names +
                                       "; a file path must end in .json)");
}

Shard parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  Shard s;
  bool ok = slash != std::string_view::npos;
  if (ok) {
    const auto a = std::from_chars(text.data(), text.data() + slash, s.index);
    const auto b = std::from_chars(text.data() + slash + 1, text.data() + text.size(), s.count);
    ok = a.ec == std::errc() && a.ptr == text.data() + slash && b.ec == std::errc() &&
         b.ptr == text.data() + text.size() && s.count >= 1 && s.index < s.count;
  }
  if (!ok)
    throw ConfigErrors("--shard", std::string("'").append(text).append("' is not i/n with 0 <= i < n (e.g. 0/4 .. 3/4)"));
  return s;
}

std::vector<Point> shard_points(const std::vector<Point>& points, const Shard& shard) {
  std::vector<Point> out;
  for (std::size_t k = shard.index; k < points.size(); k += shard.count) out.push_back(points[k]);
  return out;
}

Plan make_plan(const PlanRequest& request) {
  std::vector<ConfigError> errors;
  Plan plan;
  plan.preset = parse_preset(request.preset_document, request.context, errors);
  std::vector<Override> overrides;
  for (const auto& text : request.overrides)
    if (auto o = parse_override(text, errors)) overrides.push_back(std::move(*o));
  apply_overrides(plan.preset, overrides, request.context, errors);
  for (const auto& name : request.experiments) {
    const auto& exps = plan.preset.experiments;
    if (std::none_of(exps.begin(), exps.end(), [&](const Experiment& e) { return e.name == name; }))
      errors.push_back({"--experiment " + name, "no experiment named '" + name + "' in preset '" + plan.preset.name + "'"});
  }
  std::optional<NameFilter> filter;
  if (!request.filter.empty()) {
    try {
      filter.emplace(request.filter);
    } catch (const std::invalid_argument& e) {
      errors.push_back({request.filter_flag, e.what()});
    }
  }
  // Expansion of a preset with type errors would only repeat them as cross-axis noise.
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
  const std::vector<Point> all = expand_preset(plan.preset, request.context, errors, request.experiments);
  if (!errors.empty()) throw ConfigErrors(std::move(errors));
  plan.total_points = all.size();
  std::vector<Point> selected;
  std::size_t in_experiments = 0;
  for (const Point& p : all) {
    if (!request.experiments.empty() &&
        std::find(request.experiments.begin(), request.experiments.end(), p.experiment) == request.experiments.end())
      continue;
    ++in_experiments;
    if (!filter || filter->selects(p.id)) selected.push_back(p);
  }
  if (filter && selected.empty())
    throw ConfigErrors(request.filter_flag, "'" + request.filter + "' selects none of the " +
                                                std::to_string(in_experiments) + " points (--dry-run without it lists "
                                                "their ids)");
  plan.filter = request.filter;
  plan.filter_flag = request.filter_flag;
  plan.selected_points = selected.size();
  plan.points = shard_points(selected, request.shard);
  return plan;
}

}  // namespace decode_bench::sweeps
