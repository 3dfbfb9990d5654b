// `decode-bench list`: the embedded presets with their descriptions and experiments.
#include <iostream>

#include <nlohmann/json.hpp>

#include "sweeps/cli/command.hpp"
#include "sweeps/embedded_presets.hpp"

namespace decode_bench::cli {

void add_list_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("list", "List the presets embedded in this binary");
  sub->callback([&ctx] {
    for (const auto& preset : embedded_presets()) {
      const auto doc = nlohmann::json::parse(preset.json);
      std::cout << preset.name << ": " << doc.value("description", "") << "\n";
      for (const auto& exp : doc.value("experiments", nlohmann::json::array())) {
        std::cout << "  - " << exp.value("name", "?") << ": " << exp.value("description", "") << "\n";
      }
    }
    ctx.exit_code = kExitOk;
  });
}

}  // namespace decode_bench::cli
