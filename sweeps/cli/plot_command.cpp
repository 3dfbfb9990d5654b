// `decode-bench plot RESULTS.json [MORE.json ...] [--out DIR]`: runs plots/plot_results.py (matplotlib) on a
// results file. The script directory is compiled in (the source tree) and can be moved with
// DECODE_BENCH_PLOTS; the interpreter is the first of $DECODE_BENCH_PYTHON, /usr/bin/python3,
// python3 on PATH that imports matplotlib (a pyenv python3 first on PATH often lacks it).
// Exit codes follow the script's: 0 figures written, 2 malformed results file or no matplotlib.
// `decode-bench plot A.json B.json --compare [--normalize ceilings] [--threshold T]` compares the two
// first (the same code as `decode-bench compare`), writes OUT/compare.json and OUT/compare.md, and
// draws the per-point ratio with intervals by experiment and a roofline of both runs. A and B may
// each be several runs of one build joined by commas, as for compare; the rooflines then draw the
// first run of each side. Its exit code is the figures', not the verdict's (that is `compare`'s job).
#include <cstdlib>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "harness/json_file.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/cli/run_files.hpp"
#include "sweeps/compare/compare_format.hpp"
#include "sweeps/compare/compare_results.hpp"

namespace decode_bench::cli {
namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int run_shell(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

std::optional<std::string> python_with_matplotlib() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("DECODE_BENCH_PYTHON"); env && *env) candidates.emplace_back(env);
  candidates.emplace_back("/usr/bin/python3");
  candidates.emplace_back("python3");
  for (const auto& python : candidates)
    if (run_shell(shell_quote(python) + " -c 'import matplotlib' >/dev/null 2>&1") == 0) return python;
  return std::nullopt;
}

std::filesystem::path plots_dir() {
  if (const char* env = std::getenv("DECODE_BENCH_PLOTS"); env && *env) return env;
  return DECODE_BENCH_PLOTS_DIR;
}

}  // namespace

void add_plot_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("plot", "Make roofline and paper figures from a results file");
  static std::vector<std::string> results;
  static std::string out_dir;
  sub->add_option("RESULTS", results, "Results JSON file(s) written by sweep or capacity; points are combined")
      ->required()
      ->expected(1, -1);
  sub->add_option("--out", out_dir, "Figure directory (default: RESULTS without .json, plus -figures)");
  static bool compare_mode = false;
  static std::string normalize = "none";
  static double threshold = compare::CompareOptions{}.threshold;
  sub->add_flag("--compare", compare_mode, "Two files A B: per-point ratio B / A with intervals, and both rooflines");
  sub->add_option("--normalize", normalize, "With --compare: none | ceilings (as decode-bench compare)")
      ->capture_default_str();
  sub->add_option("--threshold", threshold, "With --compare: allowed relative regression")->capture_default_str();
  sub->callback([&ctx] {
    const std::filesystem::path script = plots_dir() / "plot_results.py";
    if (!std::filesystem::exists(script)) {
      std::cerr << "decode-bench plot: " << script.string() << " not found (set DECODE_BENCH_PLOTS to the plots/ directory)\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    const auto python = python_with_matplotlib();
    if (!python) {
      std::cerr << "decode-bench plot: no python3 with matplotlib found (tried $DECODE_BENCH_PYTHON, /usr/bin/python3, "
                   "python3); install python3-matplotlib or set DECODE_BENCH_PYTHON\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    std::string out = out_dir;
    if (out.empty()) {
      std::filesystem::path p(results.front());
      out = (p.parent_path() / (p.stem().string() + "-figures")).string();
    }
    std::string command = shell_quote(*python) + " " + shell_quote(script.string());
    if (!compare_mode)
      for (const auto& r : results) command += " " + shell_quote(r);
    if (compare_mode) {
      try {
        if (results.size() != 2) throw std::invalid_argument("--compare needs exactly two results files, A and B");
        compare::CompareOptions options;
        options.threshold = threshold;
        if (normalize == "ceilings")
          options.normalize = compare::Normalize::ceilings;
        else if (normalize != "none")
          throw std::invalid_argument("--normalize '" + normalize + "': one of none, ceilings");
        const auto report = compare::compare_runs(read_runs(results[0]), read_runs(results[1]), options);
        for (const auto& side : results) command += " " + shell_quote(run_files(side).front());
        std::filesystem::create_directories(out);
        write_json_atomic(std::filesystem::path(out) / "compare.json", compare::report_to_json(report));
        std::ofstream(std::filesystem::path(out) / "compare.md") << compare::format_report(report, compare::Format::markdown);
      } catch (const std::exception& e) {
        std::cerr << "decode-bench plot --compare: " << e.what() << "\n";
        ctx.exit_code = kExitUsage;
        return;
      }
      command += " --compare-report " + shell_quote((std::filesystem::path(out) / "compare.json").string());
    }
    const int rc = run_shell(command + " --out " + shell_quote(out));
    ctx.exit_code = rc < 0 ? kExitRunFailed : rc;
  });
}

}  // namespace decode_bench::cli
