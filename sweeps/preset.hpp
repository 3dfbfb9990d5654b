#pragma once
// A preset parsed and type-checked against the axis table, before expansion into points.
//
// JSON form (docs/sweeps.md):
//   { "schema_version": 1, "name": "...", "description": "...",
//     "common": { AXIS: value, ... },
//     "experiments": [ { "name": "...", "description": "...", "common": {...},
//                        "axes": { AXIS: VALUES, ... }, "zip": [["T", "batch"], ...] } ] }
// VALUES: a single value, a list, {"range": [start, stop, step]} (stop inclusive) or
// {"pow2": [lo, hi]} / {"pow2": [lo, hi, step]} (2^lo .. 2^hi, exponents inclusive).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweeps/config_error.hpp"

namespace decode_bench::sweeps {

inline constexpr int kPresetSchemaVersion = 1;

// One axis (or common parameter) with its values listed out.
struct AxisValues {
  std::string name;
  std::vector<nlohmann::json> values;      // normalized (number axes hold doubles)
  std::vector<std::string> value_paths;    // where each value came from, for error messages
  std::string path;                        // the whole spec ("experiments[0].axes.T", "--set T")
};

struct Experiment {
  std::string name;
  std::string description;
  std::string path;                        // "experiments[2]"
  std::vector<AxisValues> common;          // single values
  std::vector<AxisValues> axes;
  std::vector<std::vector<std::string>> zip;  // groups of axis names that advance together
};

struct Preset {
  std::string name;
  std::string description;
  std::vector<AxisValues> common;  // single values, for every experiment
  std::vector<Experiment> experiments;
};

// What validation knows beyond the preset itself.
struct ValidationContext {
  std::vector<std::string> registered_kernels;     // accepted besides the axis table's list
  std::vector<std::string> registered_backends;    // the same for the backend axis (tests' fakes)
  std::optional<std::uint64_t> device_memory_bytes;  // no memory check when unknown
};

// Parses and type-checks `doc`; appends every problem to `errors` (the result is then partial).
Preset parse_preset(const nlohmann::json& doc, const ValidationContext& ctx, std::vector<ConfigError>& errors);

// Lists the values of one VALUES spec (see above) without type checks; problems go to `errors`.
std::vector<nlohmann::json> list_value_spec(const nlohmann::json& spec, const std::string& path,
                                            std::vector<std::string>& value_paths,
                                            std::vector<ConfigError>& errors);

// Checks and normalizes the values of axis `name` (already listed); appends errors.
void check_axis_values(AxisValues& axis, const ValidationContext& ctx, std::vector<ConfigError>& errors);

}  // namespace decode_bench::sweeps
