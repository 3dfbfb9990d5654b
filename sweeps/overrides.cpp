#include "sweeps/overrides.hpp"

#include <algorithm>
#include <charconv>

#include "sweeps/axes.hpp"
#include "sweeps/text_split.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

std::optional<json> parse_number(std::string_view s) {
  std::int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return json(i);
  double d = 0;
  auto [q, ec2] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (ec2 == std::errc() && q == s.data() + s.size()) return json(d);
  return std::nullopt;
}

// A single value, typed by the axis; text that does not fit stays a string so the axis check
// reports it ("must be an integer ..., got \"abc\"").
json typed_scalar(std::string_view s, const AxisDef& axis) {
  switch (axis.type) {
    case AxisType::integer:
    case AxisType::integer_or_auto:
    case AxisType::number:
      if (auto n = parse_number(s)) return *n;
      break;
    case AxisType::boolean:
      if (s == "true") return true;
      if (s == "false") return false;
      break;
    case AxisType::string: break;
  }
  return std::string(s);
}

// "A..B" or "A..B:STEP" -> [A, B] / [A, B, STEP]
std::optional<json> parse_bounds(std::string_view s) {
  const auto dots = s.find("..");
  if (dots == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> parts = {s.substr(0, dots)};
  std::string_view rest = s.substr(dots + 2);
  if (const auto colon = rest.find(':'); colon != std::string_view::npos) {
    parts.push_back(rest.substr(0, colon));
    parts.push_back(rest.substr(colon + 1));
  } else {
    parts.push_back(rest);
  }
  json out = json::array();
  for (auto part : parts) {
    auto n = parse_number(part);
    if (!n) return std::nullopt;
    out.push_back(*n);
  }
  return out;
}

void erase_axis(std::vector<AxisValues>& list, const std::string& name) {
  list.erase(std::remove_if(list.begin(), list.end(), [&](const AxisValues& a) { return a.name == name; }), list.end());
}

void override_experiment(Experiment& exp, const AxisValues& values) {
  erase_axis(exp.common, values.name);
  erase_axis(exp.axes, values.name);
  for (auto& group : exp.zip) group.erase(std::remove(group.begin(), group.end(), values.name), group.end());
  exp.zip.erase(std::remove_if(exp.zip.begin(), exp.zip.end(), [](const auto& g) { return g.size() < 2; }),
                exp.zip.end());
  exp.axes.push_back(values);
}

}  // namespace

std::optional<Override> parse_override(std::string_view text, std::vector<ConfigError>& errors) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    errors.push_back({"--set " + std::string(text), "expected KEY=VALUES or EXPERIMENT.KEY=VALUES"});
    return std::nullopt;
  }
  Override o;
  std::string key(text.substr(0, eq));
  const std::string_view values = text.substr(eq + 1);
  o.label = "--set " + key;
  if (const auto dot = key.find('.'); dot != std::string::npos) {
    o.experiment = key.substr(0, dot);
    key = key.substr(dot + 1);
  }
  o.axis = key;
  const AxisDef* axis = find_axis(key);
  if (!axis) {
    errors.push_back({o.label, "unknown axis '" + key + "' (decode-bench sweep --list-axes lists them)"});
    return std::nullopt;
  }
  if (values.empty()) {
    errors.push_back({o.label, "no values after '='"});
    return std::nullopt;
  }
  if (values.front() == '[' || values.front() == '{') {
    try {
      o.spec = json::parse(values);
    } catch (const json::parse_error& e) {
      errors.push_back({o.label, "is not valid JSON: " + std::string(e.what())});
      return std::nullopt;
    }
    return o;
  }
  o.spec = json::array();
  for (std::string_view item : split_at(values, ',')) {
    const bool pow2 = item.starts_with("pow2:");
    const std::string_view body = pow2 ? item.substr(5) : item;
    if (pow2 || (body.find("..") != std::string_view::npos && axis->type != AxisType::string)) {
      const auto bounds = parse_bounds(body);
      if (!bounds) {
        errors.push_back({o.label, std::string("'").append(item).append("' is not ").append(pow2 ? "pow2:A..B[:STEP]" : "A..B[:STEP]")});
        return std::nullopt;
      }
      o.spec.push_back({{pow2 ? "pow2" : "range", *bounds}});
    } else {
      o.spec.push_back(typed_scalar(item, *axis));
    }
  }
  return o;
}

void apply_overrides(Preset& preset, const std::vector<Override>& overrides, const ValidationContext& ctx,
                     std::vector<ConfigError>& errors) {
  for (const Override& o : overrides) {
    AxisValues values{o.axis, {}, {}, o.label};
    values.values = list_value_spec(o.spec, o.label, values.value_paths, errors);
    check_axis_values(values, ctx, errors);
    if (o.experiment.empty()) {
      erase_axis(preset.common, o.axis);
      for (Experiment& exp : preset.experiments) override_experiment(exp, values);
      continue;
    }
    const auto it = std::find_if(preset.experiments.begin(), preset.experiments.end(),
                                 [&](const Experiment& e) { return e.name == o.experiment; });
    if (it == preset.experiments.end()) {
      errors.push_back({o.label, "no experiment named '" + o.experiment + "' in preset '" + preset.name + "'"});
      continue;
    }
    override_experiment(*it, values);
  }
}

}  // namespace decode_bench::sweeps
