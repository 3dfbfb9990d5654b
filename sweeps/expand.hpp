#pragma once
// Preset -> points. Each experiment's axes combine as a cartesian product (the axis table's order:
// the first axis varies slowest); axes in one zip group advance together as one dimension.
// Parameters = axis defaults <- preset common <- experiment common <- axis values; then
// prefix_len > 0 sets T = prefix_len + suffix_len, irrelevant axes are dropped, and points whose
// ids repeat within an experiment are kept once. Cross-axis checks (heads_q % heads_kv, memory
// need vs the device) are reported with the path of the offending value.
#include <vector>

#include "sweeps/point.hpp"
#include "sweeps/preset.hpp"

namespace decode_bench::sweeps {

std::vector<Point> expand_preset(const Preset& preset, const ValidationContext& ctx,
                                 std::vector<ConfigError>& errors);

// The points of one experiment only, with indices from 0 (used by `list` for counts).
std::vector<Point> expand_experiment(const Preset& preset, const Experiment& exp, const ValidationContext& ctx,
                                     std::vector<ConfigError>& errors);

}  // namespace decode_bench::sweeps
