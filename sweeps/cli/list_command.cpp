// `decode-bench list [presets|knobs] [--format text|markdown]`: the embedded presets with their
// descriptions, experiments and point counts; or the planners' tuning knobs (environment
// variables) with their values, defaults and meanings, from the table the planners parse them
// with (kernels/tuning_policy.hpp). docs/kernels.md holds the markdown of the knobs
// (scripts/knob_docs.py writes and checks it).
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/tuning_policy.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/expand.hpp"

namespace decode_bench::cli {
namespace {

struct ListArgs {
  std::string what = "presets";
  std::string format;  // knobs only: text (default) or markdown
};

void list_presets(CommandContext& ctx) {
  ctx.exit_code = kExitOk;
  for (const auto& embedded : embedded_presets()) {
    std::vector<sweeps::ConfigError> errors;
    const sweeps::ValidationContext vctx;  // counts do not depend on the device
    const auto doc = nlohmann::json::parse(embedded.json, nullptr, false);
    const auto preset = sweeps::parse_preset(doc, vctx, errors);
    std::vector<std::size_t> counts;
    std::size_t total = 0;
    if (errors.empty())
      for (const auto& exp : preset.experiments) {
        counts.push_back(sweeps::expand_experiment(preset, exp, vctx, errors).size());
        total += counts.back();
      }
    std::cout << embedded.name << " (" << total << " points): " << preset.description << "\n";
    for (std::size_t i = 0; i < counts.size(); ++i)
      std::cout << "  - " << preset.experiments[i].name << " (" << counts[i] << "): "
                << preset.experiments[i].description << "\n";
    if (!errors.empty()) {
      std::cout << "  INVALID:\n" << sweeps::format_config_errors(errors) << "\n";
      ctx.exit_code = kExitRunFailed;
    }
  }
}

}  // namespace

void add_list_command(CLI::App& app, CommandContext& ctx) {
  auto args = std::make_shared<ListArgs>();
  auto* sub = app.add_subcommand(
      "list", "List the presets embedded in this binary with point counts, or (list knobs) the planners' tuning knobs");
  sub->add_option("what", args->what, "presets (default) or knobs")->check(CLI::IsMember({"presets", "knobs"}));
  sub->add_option("--format", args->format, "knobs: text (default) or markdown (the table of docs/kernels.md)")
      ->check(CLI::IsMember({"text", "markdown"}));
  sub->callback([args, &ctx] {
    if (args->what == "presets") {
      if (!args->format.empty()) {
        std::cerr << "decode-bench: list presets: --format applies to `list knobs` only\n";
        ctx.exit_code = kExitUsage;
        return;
      }
      list_presets(ctx);
      return;
    }
    std::cout << format_tuning_knobs(args->format == "markdown");
    ctx.exit_code = kExitOk;
  });
}

}  // namespace decode_bench::cli
