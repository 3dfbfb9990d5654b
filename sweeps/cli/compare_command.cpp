// `decode-bench compare A.json B.json [--threshold 0.05] [--metric achieved.gbps]`: the CI gate.
// Exit 0 no regression, 1 a common point regressed by more than the threshold, 2 malformed input
// (unreadable file, schema error, bad option, or no point to compare).
#include <iostream>

#include "harness/results_schema.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/compare/compare_results.hpp"

namespace decode_bench::cli {

void add_compare_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("compare", "Compare two results files point by point (CI gate)");
  static std::string path_a, path_b;
  static compare::CompareOptions options;
  static bool lower_is_better = false;
  sub->add_option("A", path_a, "Baseline results JSON")->required();
  sub->add_option("B", path_b, "Candidate results JSON")->required();
  sub->add_option("--threshold", options.threshold, "Allowed relative regression")->capture_default_str();
  sub->add_option("--metric", options.metric, "Dotted path of the compared number in each point")
      ->capture_default_str();
  sub->add_flag("--lower-is-better", lower_is_better,
                "Treat the metric as lower-is-better (default: inferred; timing.* and *_us are)");
  sub->callback([&ctx] {
    if (lower_is_better) options.lower_is_better = true;
    compare::CompareReport report;
    try {
      const auto a = read_results(path_a);
      const auto b = read_results(path_b);
      report = compare::compare_results(a, b, options);
    } catch (const std::exception& e) {
      std::cerr << "decode-bench compare: " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    std::cout << compare::format_report(report, options);
    if (report.common.empty()) {
      std::cerr << "decode-bench compare: no point of " << path_a << " and " << path_b << " is ok in both with '"
                << options.metric << "'\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    ctx.exit_code = report.any_regression() ? kExitRunFailed : kExitOk;
  });
}

}  // namespace decode_bench::cli
