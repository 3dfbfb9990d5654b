#include "sweeps/expand.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "pools/capacity.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/memory_estimate.hpp"
#include "sweeps/mla_axes.hpp"
#include "sweeps/point_problems.hpp"
#include "sweeps/point_kernel.hpp"
#include "sweeps/window_release.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxPointsPerExperiment = 1000000;

std::size_t table_position(const std::string& name) {
  const auto table = axis_table();
  for (std::size_t i = 0; i < table.size(); ++i)
    if (table[i].name == name) return i;
  return table.size();
}

// One dimension of the product: a lone axis or a zip group (equal lengths, checked at parse).
struct Dimension {
  std::vector<const AxisValues*> axes;
  std::size_t size() const { return axes.empty() ? 0 : axes.front()->values.size(); }
  std::size_t order() const {
    std::size_t o = SIZE_MAX;
    for (const auto* a : axes) o = std::min(o, table_position(a->name));
    return o;
  }
};

std::vector<Dimension> dimensions_of(const Experiment& exp) {
  std::vector<Dimension> dims;
  std::set<std::string> zipped;
  for (const auto& group : exp.zip) {
    Dimension d;
    for (const auto& name : group) {
      for (const auto& a : exp.axes)
        if (a.name == name) d.axes.push_back(&a);
      zipped.insert(name);
    }
    if (!d.axes.empty()) dims.push_back(d);
  }
  for (const auto& a : exp.axes)
    if (!zipped.count(a.name)) dims.push_back(Dimension{{&a}});
  std::stable_sort(dims.begin(), dims.end(), [](const Dimension& x, const Dimension& y) { return x.order() < y.order(); });
  return dims;
}

// Checks that involve several axes; reports at the path of the value that makes it impossible. The
// message names no point (PointProblems adds which ones), so one bad value is one problem.
void cross_check(const Point& point, const std::map<std::string, std::string>& source, const ValidationContext& ctx,
                 PointProblems& problems) {
  const json& p = point.parameters;
  const auto src = [&](const char* name) {
    const auto it = source.find(name);
    return it == source.end() ? std::string("(default ") + name + ")" : it->second;
  };
  const auto problem = [&](const std::string& path, const std::string& message, const std::string& detail = "") {
    problems.add(path, message, point.experiment, point.id, detail);
  };
  const int hq = p.value("heads_q", 1), hkv = p.value("heads_kv", 1);
  if (hq % hkv != 0)
    problem(src("heads_kv"), "heads_q " + std::to_string(hq) + " is not a multiple of heads_kv " + std::to_string(hkv));
  std::set<std::string> given;
  for (const auto& [name, path] : source) given.insert(name);
  for (const auto& [axis, message] : mla_point_problems(p, given)) problem(src(axis.c_str()), message);
  const AxisDef* t_axis = find_axis("T");
  if (p.value("prefix_len", 0) > 0 && p.value("T", 0.0) > t_axis->max)
    problem(src("suffix_len"), "prefix_len + group_prefix_len + suffix_len exceeds T's maximum");
  if (p.value("group_prefix_len", 0) > 0 && p.value("groups", 1) > p.value("batch", 1))
    problem(src("groups"), "groups " + std::to_string(p.value("groups", 1)) + " exceeds batch " +
                               std::to_string(p.value("batch", 1)));
  if (kernel_is(p, KernelKind::trace)) {
    const std::int64_t sp_len = p.value("system_prompt_len", std::int64_t{0}), sp_n = p.value("system_prompts", 1);
    if (sp_n > 1 && sp_len == 0)
      problem(src("system_prompts"), "system_prompts " + std::to_string(sp_n) +
                                         " needs system_prompt_len > 0 (there is no system prompt to draw)");
    if (sp_n * sp_len > 0x7fffffffLL)
      problem(src("system_prompt_len"), "system_prompts x system_prompt_len = " + std::to_string(sp_n * sp_len) +
                                            " tokens exceeds 2^31 - 1");
  }
  if (const int q_len = p.value("q_len", 1); q_len > 1) {
    if (kernel_is(p, KernelKind::baseline))
      problem(src("q_len"), "q_len " + std::to_string(q_len) +
                                " with kernel baseline: the 3-kernel baseline computes one query token per sequence");
    if (p.value("length_dist", std::string("fixed")) == "fixed" && p.value("prefix_len", 0) == 0 &&
        p.value("T", 0.0) < q_len)
      problem(src("q_len"), "q_len " + std::to_string(q_len) + " exceeds T " + std::to_string(p.value("T", 0)) +
                                " (the new tokens are the last q_len of the cache)");
  }
  if (ctx.device_memory_bytes) {
    const std::uint64_t need = estimate_device_bytes(p);
    if (need > *ctx.device_memory_bytes)
      problem(src(kernel_is(p, KernelKind::capacity)                        ? "budget_bytes"
                  : need / std::max(1, p.value("layers", 1)) <= *ctx.device_memory_bytes ? "layers"
                                                                                          : "T"),
              "needs more device memory than the device's " + format_bytes(*ctx.device_memory_bytes),
              " needs about " + format_bytes(need));
  }
}

}  // namespace

std::string point_id(const std::string& experiment, const json& parameters) {
  std::string id = experiment;
  for (const AxisDef& axis : axis_table()) {
    const std::string name(axis.name);
    if (!parameters.contains(name)) continue;
    const json& v = parameters[name];
    if (!axis.always_in_id && v == normalize_axis_value(axis, axis.default_value)) continue;
    id += "/" + name + "=" + axis_value_text(v);
  }
  return id;
}

namespace {

// The points of `exp` (indices from 0); cross-axis problems go to `problems` unless it is null.
std::vector<Point> expand_points(const Preset& preset, const Experiment& exp, const ValidationContext& ctx,
                                 std::vector<ConfigError>& errors, PointProblems* problems) {
  json base = json::object();
  std::map<std::string, std::string> base_source;
  for (const AxisDef& axis : axis_table()) base[std::string(axis.name)] = normalize_axis_value(axis, axis.default_value);
  for (const auto* layer : {&preset.common, &exp.common})
    for (const AxisValues& a : *layer)
      if (!a.values.empty()) {
        base[a.name] = a.values.front();
        base_source[a.name] = a.value_paths.front();
      }

  const std::vector<Dimension> dims = dimensions_of(exp);
  std::size_t total = 1;
  for (const auto& d : dims) {
    total *= d.size();
    if (total > kMaxPointsPerExperiment) {
      errors.push_back({exp.path + ".axes", "expands to more than " + std::to_string(kMaxPointsPerExperiment) +
                                                " points; narrow an axis"});
      return {};
    }
  }

  std::vector<Point> points;
  std::set<std::string> seen;
  std::vector<std::size_t> digit(dims.size(), 0);
  for (std::size_t n = 0; n < total; ++n) {
    // Mixed-radix counter, last dimension fastest.
    std::size_t rest = n;
    for (std::size_t d = dims.size(); d-- > 0;) {
      digit[d] = rest % dims[d].size();
      rest /= dims[d].size();
    }
    json p = base;
    auto source = base_source;
    for (std::size_t d = 0; d < dims.size(); ++d)
      for (const AxisValues* a : dims[d].axes) {
        p[a->name] = a->values[digit[d]];
        source[a->name] = a->value_paths[digit[d]];
      }
    if (p.value("prefix_len", 0) > 0) {
      p["T"] = p.value("prefix_len", 0) + p.value("group_prefix_len", 0) + p.value("suffix_len", 0);
      if (source.count("suffix_len")) source["T"] = source["suffix_len"];
    }
    json relevant = json::object();
    for (const AxisDef& axis : axis_table()) {
      const std::string name(axis.name);
      if (!axis.relevant || axis.relevant(p)) relevant[name] = p[name];
    }
    Point point{exp.name, std::move(relevant), "", 0};
    point.id = point_id(exp.name, point.parameters);
    // On the parameters before irrelevant axes are dropped, and before a point whose id another
    // already has is skipped: a window_release true asked for where it cannot act is refused, not
    // dropped, whatever the order of the values.
    if (problems)
      if (auto bad = window_release_problem(p, source)) problems->add(bad->first, bad->second, exp.name, point.id);
    if (!seen.insert(point.id).second) continue;

    if (problems) cross_check(point, source, ctx, *problems);
    point.index = points.size();
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace

std::vector<Point> expand_experiment(const Preset& preset, const Experiment& exp, const ValidationContext& ctx,
                                     std::vector<ConfigError>& errors) {
  PointProblems problems;
  std::vector<Point> points = expand_points(preset, exp, ctx, errors, &problems);
  problems.report(errors);
  return points;
}

std::vector<Point> expand_preset(const Preset& preset, const ValidationContext& ctx, std::vector<ConfigError>& errors,
                                 const std::vector<std::string>& checked) {
  std::vector<Point> all;
  PointProblems problems;
  for (const Experiment& exp : preset.experiments) {
    const bool check = checked.empty() || std::find(checked.begin(), checked.end(), exp.name) != checked.end();
    for (Point& p : expand_points(preset, exp, ctx, errors, check ? &problems : nullptr)) {
      p.index = all.size();
      all.push_back(std::move(p));
    }
  }
  problems.report(errors);
  return all;
}

}  // namespace decode_bench::sweeps
