// `decode-bench compare A.json B.json [--threshold 0.05] [--metric achieved.gbps] [--normalize ceilings]
//   [--format text|markdown|json|csv] [--markdown-out F] [--json-out F]`: the CI gate.
// A and B may each be several runs of one build joined by commas (a1.json,a2.json): the interval
//   then covers the offsets between runs (compare::compare_runs).
// `decode-bench compare FILE --backends A,B [...]`: backend B against backend A within one file,
//   points paired by shape (sweeps/compare/compare_backends.hpp), with the same report.
// Exit 0 no regression, 1 a common point regressed (significantly and beyond the threshold; with
// --fail-on-noisy also a point too noisy to judge),
// 2 malformed input (unreadable file, schema error, bad option, or no point to compare).
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include "harness/results_schema.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/cli/run_files.hpp"
#include "sweeps/compare/compare_backends.hpp"
#include "sweeps/compare/compare_format.hpp"
#include "sweeps/compare/compare_results.hpp"

namespace decode_bench::cli {
namespace {

bool write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

void add_compare_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand(
      "compare", "Compare two results files point by point (CI gate), or two backends of one file (--backends)");
  static std::string path_a, path_b, format = "text", normalize = "none", markdown_out, json_out, backends;
  static compare::CompareOptions options;
  static bool lower_is_better = false, fail_on_noisy = false;
  sub->add_option("A", path_a,
                  "Baseline results JSON, or several runs of one build joined by commas (with --backends: one file)")
      ->required();
  sub->add_option("B", path_b, "Candidate results JSON, or several runs joined by commas (not with --backends)");
  auto* backends_option = sub->add_option("--backends", backends,
                  "BASELINE,CANDIDATE: compare two backends of the one file A, points paired by shape (the id "
                  "without its backend=NAME component, as show --by-backend)");
  sub->add_option("--threshold", options.threshold, "Allowed relative regression")->capture_default_str();
  sub->add_option("--metric", options.metric, "Dotted path of the compared number in each point")
      ->capture_default_str();
  sub->add_flag("--lower-is-better", lower_is_better,
                "Treat the metric as lower-is-better (default: inferred; timing.* and *_us are)");
  sub->add_option("--normalize", normalize,
                  "none | ceilings: compare each point's fraction of its own run's measured ceiling "
                  "(DRAM read or the dtype's FMA roof, by the model's intensity against the ridge)")
      ->capture_default_str();
  sub->add_option("--format", format, "text | markdown | json | csv (standard output; csv: a row per point)")->capture_default_str();
  sub->add_option("--markdown-out", markdown_out, "Also write the markdown summary to this file");
  sub->add_option("--json-out", json_out, "Also write the JSON report to this file (plot --compare reads it)");
  sub->add_flag("--fail-on-noisy", fail_on_noisy,
                "Exit 1 also when a point is too noisy to judge (default: listed, not failed)");
  sub->add_option("--confidence", options.confidence, "Bootstrap interval confidence")->capture_default_str();
  sub->add_option("--resamples", options.resamples, "Bootstrap resamples per point")->capture_default_str();
  sub->add_option("--seed", options.seed, "Bootstrap seed (fixed: the verdict is reproducible)")->capture_default_str();
  sub->callback([&ctx, backends_option] {
    if (lower_is_better) options.lower_is_better = true;
    compare::CompareReport report;
    compare::Format out_format{};
    try {
      out_format = compare::parse_format(format);
      if (normalize == "ceilings")
        options.normalize = compare::Normalize::ceilings;
      else if (normalize != "none")
        throw std::invalid_argument("--normalize '" + normalize + "': one of none, ceilings");
      if (backends_option->count() > 0) {
        if (!path_b.empty())
          throw std::invalid_argument("--backends compares two backends inside one file; a second file ('" + path_b +
                                      "') cannot be given with it");
        const auto [backend_a, backend_b] = compare::parse_backend_pair(backends);
        if (run_files(path_a).size() != 1)
          throw std::invalid_argument("--backends compares two backends inside one file; '" + path_a +
                                      "' names several");
        report = compare::compare_backends(read_results(path_a), backend_a, backend_b, options);
      } else {
        if (path_b.empty())
          throw std::invalid_argument("two results files A B are needed (or one file with --backends A,B)");
        const auto a = read_runs(path_a);
        const auto b = read_runs(path_b);
        report = compare::compare_runs(a, b, options);
      }
    } catch (const std::exception& e) {
      std::cerr << "decode-bench compare: " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    std::cout << compare::format_report(report, out_format);
    if ((!markdown_out.empty() && !write_text(markdown_out, compare::format_report(report, compare::Format::markdown))) ||
        (!json_out.empty() && !write_text(json_out, compare::format_report(report, compare::Format::json)))) {
      std::cerr << "decode-bench compare: cannot write " << (markdown_out.empty() ? json_out : markdown_out) << "\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    if (report.common.empty()) {
      if (report.backend_a.empty())
        std::cerr << "decode-bench compare: no point of " << path_a << " and " << path_b << " is ok in both with '"
                  << report.metric << "'\n";
      else
        std::cerr << "decode-bench compare: no shape of " << path_a << " is ok in both backends " << report.backend_a
                  << " and " << report.backend_b << " with '" << report.metric << "'\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    const bool fail = report.any_regression() || (fail_on_noisy && report.overall.noisy > 0);
    if (fail_on_noisy && report.overall.noisy > 0)
      std::cerr << "decode-bench compare: " << report.overall.noisy << " point(s) too noisy to judge (--fail-on-noisy)\n";
    ctx.exit_code = fail ? kExitRunFailed : kExitOk;
  });
}

}  // namespace decode_bench::cli
