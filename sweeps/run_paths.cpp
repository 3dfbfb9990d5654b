#include "sweeps/run_paths.hpp"

#include "sweeps/config_error.hpp"

namespace decode_bench::sweeps {

void apply_run_paths(const RunPathOptions& options, RunContext& ctx, std::vector<std::string>& overrides) {
  if (options.verify != "gpu" && options.verify != "cpu")
    throw ConfigErrors("--verify", "must be gpu or cpu (got '" + options.verify + "')");
  if (options.fill != "device" && options.fill != "host")
    throw ConfigErrors("--fill", "must be device or host (got '" + options.fill + "')");
  ctx.verify_on_host = options.verify == "cpu";
  ctx.fill_on_host = options.fill == "host";
  if (options.no_counters) overrides.push_back("counters=false");
}

}  // namespace decode_bench::sweeps
