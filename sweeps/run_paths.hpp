#pragma once
// The sweep options that choose how a point is prepared and checked, not what is measured:
//   --verify gpu|cpu   float64 reference on the device (default) or on the host
//   --fill device|host K/V/q generated in place on the device (default) or on the host and uploaded
//   --no-counters      same as --set counters=false (no profiled pass)
// gpu/device are the fast paths; cpu/host are the ones the sweeps had before, kept so one binary
// can show both. Neither changes the data (same generator) nor the verification rule.
#include <string>
#include <vector>

#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

struct RunPathOptions {
  std::string verify = "gpu";
  std::string fill = "device";
  bool no_counters = false;
};

// Sets ctx.verify_on_host / ctx.fill_on_host and appends "counters=false" to `overrides` for
// --no-counters. Throws ConfigErrors naming --verify or --fill for any other value.
void apply_run_paths(const RunPathOptions& options, RunContext& ctx, std::vector<std::string>& overrides);

}  // namespace decode_bench::sweeps
