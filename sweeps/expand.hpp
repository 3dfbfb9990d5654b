#pragma once
// Preset -> points. Each experiment's axes combine as a cartesian product (the axis table's order:
// the first axis varies slowest); axes in one zip group advance together as one dimension.
// Parameters = axis defaults <- preset common <- experiment common <- axis values; then
// prefix_len > 0 sets T = prefix_len + suffix_len, irrelevant axes are dropped, and points whose
// ids repeat within an experiment are kept once. Cross-axis checks (heads_q % heads_kv, memory
// need vs the device) are reported with the path of the offending value, once per distinct problem
// with the number of points and the experiments it fails (sweeps/point_problems.hpp).
#include <string>
#include <vector>

#include "sweeps/point.hpp"
#include "sweeps/preset.hpp"

namespace decode_bench::sweeps {

// Cross-axis checks run on the experiments named in `checked` (empty: every one); the others are
// expanded for the ids and indices alone, so a value that only they combine badly (a --set under
// --experiment) is no error.
std::vector<Point> expand_preset(const Preset& preset, const ValidationContext& ctx,
                                 std::vector<ConfigError>& errors, const std::vector<std::string>& checked = {});

// The points of one experiment only, with indices from 0 (used by `list` for counts).
std::vector<Point> expand_experiment(const Preset& preset, const Experiment& exp, const ValidationContext& ctx,
                                     std::vector<ConfigError>& errors);

}  // namespace decode_bench::sweeps
