// Subcommands whose implementation arrives with later issues. Each already parses its own
// options and checks for a GPU where it needs one, so scripts can be written against it now.
#include <iostream>
#include <string>

#include "sweeps/cli/command.hpp"

namespace decode_bench::cli {
namespace {

void not_implemented(const std::string& what, CommandContext& ctx) {
  std::cerr << "decode-bench: '" << what << "' is not implemented in this build yet\n";
  ctx.exit_code = kExitNotImplemented;
}

}  // namespace

void add_ceilings_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("ceilings", "Measure this GPU's bandwidth and compute ceilings");
  static int device = 0;
  sub->add_option("--device", device, "CUDA device index")->capture_default_str();
  sub->callback([&ctx] {
    if (!require_gpu(device, ctx)) return;
    not_implemented("ceilings", ctx);
  });
}

void add_capacity_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("capacity", "How many sequences each KV pool holds in a memory budget");
  sub->callback([&ctx] { not_implemented("capacity", ctx); });
}

void add_compare_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("compare", "Compare two results files point by point (CI gate)");
  sub->callback([&ctx] { not_implemented("compare", ctx); });
}

void add_plot_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("plot", "Make roofline and paper figures from a results file");
  sub->callback([&ctx] { not_implemented("plot", ctx); });
}

}  // namespace decode_bench::cli
