// decode-bench: one executable, one subcommand per job. `decode-bench --help` lists them.
#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "harness/benchmark_flags.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/cli/measure_flags.hpp"

namespace {

bool has_subcommand(CLI::App& app, const std::string& name) {
  for (const CLI::App* sub : app.get_subcommands({})) if (sub->get_name() == name) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace decode_bench::cli;
  CommandContext ctx;
  ctx.argv.assign(argv, argv + argc);

  CLI::App app{"decode-bench: microbenchmarks and rooflines for LLM decode attention and KV-cache pools"};
  app.name("decode-bench");
  app.set_version_flag("--version", std::string(decode_bench::build_info::kToolVersion) + " (" +
                                        decode_bench::build_info::kGitSha + ")");
  app.require_subcommand(1);
  add_sweep_command(app, ctx);
  add_list_command(app, ctx);
  add_ceilings_command(app, ctx);
  add_capacity_command(app, ctx);
  add_compare_command(app, ctx);
  add_plot_command(app, ctx);
  add_merge_command(app, ctx);
  add_show_command(app, ctx);
  add_profile_selftest_command(app, ctx);

  // CLI11 reports an unknown first word as "a subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-' && !has_subcommand(app, argv[1])) {
    std::cerr << "decode-bench: unknown subcommand '" << argv[1]
              << "' (one of: sweep, list, ceilings, capacity, compare, plot, merge, show)\n"
              << "Run with --help for more information.\n";
    return kExitUsage;
  }

  try {
    // Google Benchmark's --benchmark_* flags are sorted out first (harness/benchmark_flags.hpp): a
    // whitelist, the twins of first-class flags left for CLI11, the output flags kept for the sweep.
    std::vector<std::string> args;
    try {
      args = decode_bench::take_benchmark_flags(argc, argv);
    } catch (const std::invalid_argument& e) {
      std::cerr << "decode-bench: " << e.what() << "\n";
      return kExitUsage;
    }
    // Only the subcommands that time something read them: elsewhere a --benchmark_* flag would do nothing.
    if (args.size() > 1 && !args[1].starts_with("-") && !subcommand_times_kernels(args[1]) &&
        !decode_bench::benchmark_flag_names_given().empty()) {
      std::cerr << "decode-bench: " << decode_bench::benchmark_flag_names_given().front() << " is not supported by '"
                << args[1] << "', which times nothing (only sweep and ceilings take --benchmark_* flags)\n";
      return kExitUsage;
    }
    // Only a sweep writes a run's table and output file; elsewhere an output flag would do nothing.
    if (const std::string& flag = decode_bench::benchmark_output_flags().first_given;
        !flag.empty() && (args.size() < 2 || args[1] != "sweep")) {
      std::cerr << "decode-bench: " << flag << " is for sweep only (its end-of-run table and output file)\n";
      return kExitUsage;
    }
    std::vector<const char*> rest;
    for (const auto& a : args) rest.push_back(a.c_str());
    app.parse(static_cast<int>(rest.size()), rest.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // CLI11 has its own exit codes per error class; usage errors here are always 2.
    std::cerr << "decode-bench: " << e.what() << "\nRun with --help for more information.\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "decode-bench: error: " << e.what() << "\n";
    return ctx.exit_code != kExitOk ? ctx.exit_code : kExitRunFailed;
  }
  return ctx.exit_code;
}
