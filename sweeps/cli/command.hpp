#pragma once
// Each subcommand lives in its own file and registers itself on the top-level CLI11 app.
// Exit codes: 0 success, 1 the run itself failed (a failed verification, an I/O error),
// 2 usage error or no usable GPU, 3 not implemented in this build.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace decode_bench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitUsage = 2;

struct CommandContext {
  std::vector<std::string> argv;  // the whole command line, recorded in every results file
  int exit_code = kExitOk;
};

void add_sweep_command(CLI::App& app, CommandContext& ctx);
void add_list_command(CLI::App& app, CommandContext& ctx);
void add_ceilings_command(CLI::App& app, CommandContext& ctx);
void add_capacity_command(CLI::App& app, CommandContext& ctx);
void add_compare_command(CLI::App& app, CommandContext& ctx);
void add_plot_command(CLI::App& app, CommandContext& ctx);
void add_merge_command(CLI::App& app, CommandContext& ctx);
void add_show_command(CLI::App& app, CommandContext& ctx);
void add_profile_selftest_command(CLI::App& app, CommandContext& ctx);  // hidden

// For GPU subcommands: prints the reason and returns false when device `index` is unusable.
bool require_gpu(int index, CommandContext& ctx);

}  // namespace decode_bench::cli
