#pragma once
// Command-line overrides: `--set KEY=VALUES` replaces axis KEY in every experiment (and in common);
// `--set EXPERIMENT.KEY=VALUES` in that experiment only. An overridden axis leaves any zip group it
// was in and becomes a cartesian axis.
//
// VALUES: comma-separated items, each one of
//   4096 | fp16 | auto | true        a single value, typed by the axis table
//   A..B  or  A..B:STEP              range, stop inclusive   (16..256:16)
//   pow2:A..B  or  pow2:A..B:STEP    2^A .. 2^B              (pow2:12..21)
// or a JSON value spec as in presets: '[1,2,3]', '{"pow2":[12,21]}'.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweeps/preset.hpp"

namespace decode_bench::sweeps {

struct Override {
  std::string experiment;  // empty: every experiment
  std::string axis;
  nlohmann::json spec;     // a VALUES spec as presets write it
  std::string label;       // "--set T" (the path in error messages)
};

// Errors name the option ("--set T: ...") and go to `errors`; nullopt when unusable.
std::optional<Override> parse_override(std::string_view text, std::vector<ConfigError>& errors);

// Applies each override in order, checking its values like preset values.
void apply_overrides(Preset& preset, const std::vector<Override>& overrides, const ValidationContext& ctx,
                     std::vector<ConfigError>& errors);

}  // namespace decode_bench::sweeps
