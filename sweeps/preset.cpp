#include "sweeps/preset.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "sweeps/axes.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxValuesPerSpec = 100000;  // a typo like step 1 over 2^30 stops here

std::string join_keys(std::initializer_list<std::string_view> keys) {
  std::string s;
  for (auto k : keys) s += (s.empty() ? "" : ", ") + std::string(k);
  return s;
}

void check_known_keys(const json& obj, const std::string& path, std::initializer_list<std::string_view> known,
                      std::vector<ConfigError>& errors) {
  for (const auto& [key, _] : obj.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end())
      errors.push_back({path.empty() ? key : path + "." + key,
                        "unknown key '" + key + "' (expected one of: " + join_keys(known) + ")"});
  }
}

std::optional<std::string> string_field(const json& obj, const std::string& key, const std::string& path,
                                        bool required, std::vector<ConfigError>& errors) {
  const std::string p = path.empty() ? key : path + "." + key;
  if (!obj.contains(key)) {
    if (required) errors.push_back({p, "missing required field"});
    return std::nullopt;
  }
  if (!obj.at(key).is_string()) {
    errors.push_back({p, "must be a string, got " + obj.at(key).dump()});
    return std::nullopt;
  }
  return obj.at(key).get<std::string>();
}

bool valid_experiment_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

void list_range(const json& args, const std::string& path, std::vector<json>& out, std::vector<ConfigError>& errors) {
  if (!args.is_array() || args.size() < 2 || args.size() > 3 ||
      !std::all_of(args.begin(), args.end(), [](const json& v) { return v.is_number(); })) {
    errors.push_back({path, "must be [start, stop] or [start, stop, step] of numbers, got " + args.dump()});
    return;
  }
  const bool integral = std::all_of(args.begin(), args.end(), [](const json& v) { return v.is_number_integer(); });
  const double start = args[0].get<double>(), stop = args[1].get<double>();
  const double step = args.size() == 3 ? args[2].get<double>() : 1.0;
  if (step == 0 || (stop - start) / step < 0) {
    errors.push_back({path, "step " + (args.size() == 3 ? args[2].dump() : std::string("1")) + " never goes from " + args[0].dump() + " to " +
                                args[1].dump()});
    return;
  }
  const double count = std::floor((stop - start) / step + 1e-9) + 1;
  if (count > kMaxValuesPerSpec) {
    errors.push_back({path, "lists " + json(count).dump() + " values (more than " +
                                std::to_string(kMaxValuesPerSpec) + ")"});
    return;
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(count); ++i) {
    if (integral)
      out.push_back(args[0].get<std::int64_t>() + static_cast<std::int64_t>(i) * static_cast<std::int64_t>(step));
    else
      out.push_back(start + static_cast<double>(i) * step);
  }
}

void list_pow2(const json& args, const std::string& path, std::vector<json>& out, std::vector<ConfigError>& errors) {
  if (!args.is_array() || args.size() < 2 || args.size() > 3 ||
      !std::all_of(args.begin(), args.end(), [](const json& v) { return v.is_number_integer(); })) {
    errors.push_back({path, "must be [lo, hi] or [lo, hi, step] of integer exponents, got " + args.dump()});
    return;
  }
  const std::int64_t lo = args[0], hi = args[1];
  const std::int64_t step = args.size() == 3 ? args[2].get<std::int64_t>() : 1;
  if (lo < 0 || hi > 62 || lo > hi || step < 1) {
    errors.push_back({path, "needs 0 <= lo <= hi <= 62 and step >= 1, got " + args.dump()});
    return;
  }
  for (std::int64_t e = lo; e <= hi; e += step) out.push_back(std::int64_t{1} << e);
}

// A {"range": ...} or {"pow2": ...} object.
void list_generator(const json& spec, const std::string& path, std::vector<json>& out,
                    std::vector<std::string>& value_paths, std::vector<ConfigError>& errors) {
  if (spec.size() != 1) {
    errors.push_back({path, "a value generator has exactly one key, range or pow2; got " + spec.dump()});
    return;
  }
  // The iterator names the object's one member; a structured binding over *spec.items().begin()
  // would bind to a temporary iterator that is gone before the binding is read.
  const json::const_iterator member = spec.begin();
  const std::string& key = member.key();
  const json& args = member.value();
  const std::size_t before = out.size();
  if (key == "range") {
    list_range(args, path + ".range", out, errors);
  } else if (key == "pow2") {
    list_pow2(args, path + ".pow2", out, errors);
  } else {
    errors.push_back({path + "." + key, "unknown value generator '" + key + "' (expected range or pow2)"});
    return;
  }
  for (std::size_t i = before; i < out.size(); ++i) value_paths.push_back(path + "." + key);
}

std::vector<AxisValues> parse_parameters(const json& obj, const std::string& path, bool single_values,
                                         const ValidationContext& ctx, std::vector<ConfigError>& errors) {
  std::vector<AxisValues> result;
  if (!obj.is_object()) {
    errors.push_back({path, "must be an object of AXIS: VALUES, got " + obj.dump()});
    return result;
  }
  for (const auto& [key, spec] : obj.items()) {
    const std::string p = path + "." + key;
    if (!find_axis(key)) {
      errors.push_back({p, "unknown axis '" + key + "' (decode-bench sweep --list-axes lists them)"});
      continue;
    }
    if (single_values && (spec.is_array() || spec.is_object())) {
      errors.push_back({p, "common parameters take a single value; sweep lists under an experiment's axes"});
      continue;
    }
    AxisValues axis{key, {}, {}, p};
    axis.values = list_value_spec(spec, p, axis.value_paths, errors);
    check_axis_values(axis, ctx, errors);
    result.push_back(std::move(axis));
  }
  return result;
}

void parse_zip(const json& zip, Experiment& exp, std::vector<ConfigError>& errors) {
  const std::string path = exp.path + ".zip";
  if (!zip.is_array()) {
    errors.push_back({path, "must be a list of axis-name lists, e.g. [[\"T\", \"batch\"]]"});
    return;
  }
  std::set<std::string> used;
  for (std::size_t g = 0; g < zip.size(); ++g) {
    const std::string gp = path + "[" + std::to_string(g) + "]";
    if (!zip[g].is_array() || zip[g].size() < 2) {
      errors.push_back({gp, "a zip group lists two or more axis names, got " + zip[g].dump()});
      continue;
    }
    std::vector<std::string> group;
    const AxisValues* first = nullptr;
    for (std::size_t i = 0; i < zip[g].size(); ++i) {
      const std::string np = gp + "[" + std::to_string(i) + "]";
      if (!zip[g][i].is_string()) {
        errors.push_back({np, "must be an axis name, got " + zip[g][i].dump()});
        continue;
      }
      const std::string name = zip[g][i];
      const auto it = std::find_if(exp.axes.begin(), exp.axes.end(), [&](const AxisValues& a) { return a.name == name; });
      if (it == exp.axes.end()) {
        errors.push_back({np, "'" + name + "' is not an axis of this experiment"});
        continue;
      }
      if (!used.insert(name).second) {
        errors.push_back({np, "'" + name + "' is already zipped in another group"});
        continue;
      }
      if (first && first->values.size() != it->values.size())
        errors.push_back({gp, "zipped axes need equal lengths: " + first->name + " has " +
                                  std::to_string(first->values.size()) + " values, " + name + " has " +
                                  std::to_string(it->values.size())});
      if (!first) first = &*it;
      group.push_back(name);
    }
    exp.zip.push_back(std::move(group));
  }
}

}  // namespace

std::vector<json> list_value_spec(const json& spec, const std::string& path, std::vector<std::string>& value_paths,
                                  std::vector<ConfigError>& errors) {
  std::vector<json> out;
  if (spec.is_array()) {
    if (spec.empty()) errors.push_back({path, "lists no values"});
    for (std::size_t i = 0; i < spec.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      if (spec[i].is_object()) {
        list_generator(spec[i], p, out, value_paths, errors);
      } else if (spec[i].is_array()) {
        errors.push_back({p, "nested lists are not values"});
      } else {
        out.push_back(spec[i]);
        value_paths.push_back(p);
      }
    }
  } else if (spec.is_object()) {
    list_generator(spec, path, out, value_paths, errors);
  } else {
    out.push_back(spec);
    value_paths.push_back(path);
  }
  return out;
}

void check_axis_values(AxisValues& axis, const ValidationContext& ctx, std::vector<ConfigError>& errors) {
  const AxisDef* def = find_axis(axis.name);
  if (!def) {
    errors.push_back({axis.path, "unknown axis '" + axis.name + "'"});
    return;
  }
  for (std::size_t i = 0; i < axis.values.size(); ++i) {
    json& v = axis.values[i];
    std::string err = axis_value_error(*def, v);
    // Kernels and backends registered beyond the tables (a test's fakes) are valid too.
    const auto registered = [&](const std::vector<std::string>& names) {
      return v.is_string() && std::find(names.begin(), names.end(), v.get<std::string>()) != names.end();
    };
    if (!err.empty() && ((def->name == "kernel" && registered(ctx.registered_kernels)) ||
                         (def->name == "backend" && registered(ctx.registered_backends))))
      err.clear();
    if (!err.empty()) errors.push_back({axis.value_paths[i], err});
    v = normalize_axis_value(*def, v);
  }
}

Preset parse_preset(const json& doc, const ValidationContext& ctx, std::vector<ConfigError>& errors) {
  Preset preset;
  if (!doc.is_object()) {
    errors.push_back({"$", "a preset must be a JSON object"});
    return preset;
  }
  check_known_keys(doc, "", {"schema_version", "name", "description", "common", "experiments"}, errors);
  if (!doc.contains("schema_version")) {
    errors.push_back({"schema_version", "missing required field (this reader understands " +
                                            std::to_string(kPresetSchemaVersion) + ")"});
  } else if (doc["schema_version"] != kPresetSchemaVersion) {
    errors.push_back({"schema_version", "must be " + std::to_string(kPresetSchemaVersion) + ", got " +
                                            doc["schema_version"].dump()});
  }
  preset.name = string_field(doc, "name", "", true, errors).value_or("");
  preset.description = string_field(doc, "description", "", false, errors).value_or("");
  if (doc.contains("common")) preset.common = parse_parameters(doc["common"], "common", true, ctx, errors);

  if (!doc.contains("experiments")) {
    errors.push_back({"experiments", "missing required field"});
    return preset;
  }
  const json& exps = doc["experiments"];
  if (!exps.is_array() || exps.empty()) {
    errors.push_back({"experiments", "must be a non-empty list of experiments"});
    return preset;
  }
  std::set<std::string> names;
  for (std::size_t e = 0; e < exps.size(); ++e) {
    Experiment exp;
    exp.path = "experiments[" + std::to_string(e) + "]";
    const json& x = exps[e];
    if (!x.is_object()) {
      errors.push_back({exp.path, "must be an object"});
      continue;
    }
    check_known_keys(x, exp.path, {"name", "description", "common", "axes", "zip"}, errors);
    exp.name = string_field(x, "name", exp.path, true, errors).value_or("");
    if (x.contains("name") && x["name"].is_string()) {
      if (!valid_experiment_name(exp.name))
        errors.push_back({exp.path + ".name", "'" + exp.name + "' must be letters, digits, '_' or '-' only"});
      else if (!names.insert(exp.name).second)
        errors.push_back({exp.path + ".name", "duplicate experiment name '" + exp.name + "'"});
    }
    exp.description = string_field(x, "description", exp.path, false, errors).value_or("");
    if (x.contains("common")) exp.common = parse_parameters(x["common"], exp.path + ".common", true, ctx, errors);
    if (x.contains("axes")) exp.axes = parse_parameters(x["axes"], exp.path + ".axes", false, ctx, errors);
    for (const auto& c : exp.common)
      for (const auto& a : exp.axes)
        if (c.name == a.name)
          errors.push_back({a.path, "'" + a.name + "' is given both in this experiment's common and axes"});
    if (x.contains("zip")) parse_zip(x["zip"], exp, errors);
    preset.experiments.push_back(std::move(exp));
  }
  return preset;
}

}  // namespace decode_bench::sweeps
