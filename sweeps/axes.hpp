#pragma once
// The axis table: every parameter a sweep point can carry, as data in one place. Validation,
// expansion, point ids, `decode-bench sweep --list-axes` and docs/sweeps.md all derive from it,
// so adding an axis is one line in sweeps/axes.cpp.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

enum class AxisType {
  integer,         // JSON integer, within [min, max]
  number,          // JSON number (stored as a double), within [min, max]
  string,          // one of `allowed`
  boolean,         // true / false
  integer_or_auto  // an integer within [min, max], or the string "auto"
};

std::string_view axis_type_name(AxisType t);

struct AxisDef {
  std::string_view name;
  AxisType type;
  std::vector<std::string_view> allowed;  // strings only
  double min = 0;                         // numeric types
  double max = 0;
  nlohmann::json default_value;
  std::string_view description;
  // Always written into the point id, even at the default (the axes a reader scans ids by).
  bool always_in_id = false;
  // Whether the axis means anything for a point with these (otherwise complete) parameters. An
  // irrelevant axis is dropped from the point (page_size of a contiguous point), so sweeping it
  // there does not multiply identical points.
  bool (*relevant)(const nlohmann::json& params) = nullptr;
  // The axis decides only what is recorded beside the timed launch, never what is timed
  // (counters: a separate profiled pass after timing). `decode-bench compare` matches points by
  // their id less such axes (timed_launch_id), so a run with --no-counters compares with one
  // without it.
  bool beside_timing = false;
};

// In expansion order: the first axis varies slowest; ids list keys in this order.
std::span<const AxisDef> axis_table();
const AxisDef* find_axis(std::string_view name);

// `id` without its components of axes that are beside_timing ("exp/T=4096/counters=false" ->
// "exp/T=4096"): two points with the same timed launch have the same one.
std::string timed_launch_id(std::string_view id);

// Empty when `value` is a legal value of `axis`, otherwise the reason ("must be an integer >= 1").
// Integers given to number axes are accepted; see normalize_axis_value.
std::string axis_value_error(const AxisDef& axis, const nlohmann::json& value);
// Number axes hold doubles (so 4 and 4.0 give the same id); everything else is unchanged.
nlohmann::json normalize_axis_value(const AxisDef& axis, const nlohmann::json& value);

// The text form of a value in ids and tables: strings bare, numbers as JSON writes them.
std::string axis_value_text(const nlohmann::json& value);

// "integer in [1, 1048576]" / "one of: fp32, fp16, bf16" for help and docs.
std::string axis_domain_text(const AxisDef& axis);

}  // namespace decode_bench::sweeps
