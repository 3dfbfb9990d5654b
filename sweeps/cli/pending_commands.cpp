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

void add_sweep_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("sweep", "Run a sweep preset on a GPU and write results JSON (default preset: quick)");
  static std::string preset = "quick";
  static int device = 0;
  static std::string output_dir = "results";
  sub->add_option("--preset", preset, "Embedded preset name or path to a preset JSON")->capture_default_str();
  sub->add_option("--output-dir", output_dir, "Where results/<gpu>-<timestamp>.json goes")->capture_default_str();
  sub->add_option("--device", device, "CUDA device index")->capture_default_str();
  sub->callback([&ctx] {
    if (!require_gpu(device, ctx)) return;
    not_implemented("sweep", ctx);
  });
}

void add_merge_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("merge", "Join shard result files into one");
  sub->callback([&ctx] { not_implemented("merge", ctx); });
}

}  // namespace decode_bench::cli
