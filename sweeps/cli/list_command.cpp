// `decode-bench list`: the embedded presets with their descriptions, experiments and point counts.
#include <iostream>

#include <nlohmann/json.hpp>

#include "sweeps/cli/command.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/expand.hpp"

namespace decode_bench::cli {

void add_list_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("list", "List the presets embedded in this binary, with point counts");
  sub->callback([&ctx] {
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
  });
}

}  // namespace decode_bench::cli
