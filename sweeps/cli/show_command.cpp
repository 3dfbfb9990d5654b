// `decode-bench show FILE [--experiment E]... [--filter REGEX] [--format text|markdown|csv|json]
// [--by-backend]`: a results file as tables grouped by experiment, or the whole run as CSV
// (sweeps/results_table.hpp, sweeps/results_csv.hpp); with --by-backend, one row per shape with
// each backend's median side by side (sweeps/backend_table.hpp). FILE may also be a running or
// stopped sweep's .partial.jsonl, or a results path whose document was never written but whose
// sidecar exists; a document with a sidecar beside it (a resumed run in progress) shows both, as
// --resume reads them.
// Exit 0 printed, 2 an unreadable file or a bad option.
#include <filesystem>
#include <iostream>

#include "harness/results_schema.hpp"
#include "sweeps/backend_table.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/partial_file.hpp"
#include "sweeps/results_table.hpp"

namespace decode_bench::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct ShowArgs {
  std::string file;
  std::vector<std::string> experiments;
  std::string filter;
  std::string format = "text";
  bool by_backend = false;
};

// The document to show: `path`'s own document (or its sidecar's header) with the points
// load_recorded_points gathers from both. Throws std::runtime_error naming the file and what is
// wrong (the results reader and the sidecar reader name it too).
json document_for_show(const fs::path& path) {
  const bool is_partial = path.string().ends_with(".partial.jsonl");
  const fs::path sidecar = is_partial ? path : sweeps::partial_path_for(path);
  if (!fs::exists(path) && !fs::exists(sidecar)) throw std::runtime_error(path.string() + ": no such file");
  if (fs::is_directory(path)) throw std::runtime_error(path.string() + ": a directory, not a results file");
  json doc = json::object();
  if (!is_partial && fs::exists(path)) {
    doc = read_results(path);
  } else {
    const sweeps::PartialContents contents = sweeps::read_partial(sidecar);
    if (contents.header.is_null() && contents.points.empty())
      throw std::runtime_error(sidecar.string() +
                               " holds no sweep header and no point (not a .partial.jsonl of a sweep)");
    if (contents.unreadable_lines > 0)
      std::cerr << "decode-bench show: " << sidecar.string() << ": " << contents.unreadable_lines
                << " unreadable line(s) left out (a line cut short when the sweep stopped)\n";
    for (const char* key : {"meta", "device", "devices"})
      if (contents.header.is_object() && contents.header.contains(key)) doc[key] = contents.header[key];
  }
  doc["points"] = sweeps::load_recorded_points(path);
  return doc;
}

void run(const ShowArgs& args, CommandContext& ctx) {
  const auto format = sweeps::parse_table_format(args.format);  // CLI11 checked the name
  json doc;
  try {
    doc = document_for_show(args.file);
  } catch (const std::exception& e) {
    std::cerr << "decode-bench show: " << e.what() << "\n";
    ctx.exit_code = kExitUsage;
    return;
  }
  std::vector<json> points;
  try {
    points = sweeps::select_points(doc["points"], {args.experiments, args.filter});
  } catch (const std::invalid_argument& e) {
    std::cerr << "decode-bench show: " << e.what() << "\n";
    ctx.exit_code = kExitUsage;
    return;
  }
  if (points.empty())
    std::cerr << "decode-bench show: no point of " << args.file << " is selected (" << doc["points"].size()
              << " in the file)\n";
  std::cout << (args.by_backend ? sweeps::format_backend_table(points, *format)
                                : sweeps::format_results(doc, points, *format))
            << std::flush;
  ctx.exit_code = kExitOk;
}

}  // namespace

void add_show_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("show", "Print a results file as tables by experiment, or export it as CSV");
  static ShowArgs args;
  sub->add_option("FILE", args.file, "Results JSON, or a sweep's .partial.jsonl")->required();
  sub->add_option("--experiment", args.experiments, "Only this experiment (repeatable)");
  sub->add_option("--filter", args.filter, "Only points whose id matches this regular expression (a search)");
  sub->add_option("--format", args.format,
                  "text (aligned tables) | markdown (the same tables) | csv (one row per point) | json (the points)")
      ->check(CLI::IsMember({"text", "markdown", "csv", "json"}))
      ->capture_default_str();
  sub->add_flag("--by-backend", args.by_backend,
                "One row per shape, each backend's median side by side with its time over the fastest's");
  sub->callback([&ctx] { run(args, ctx); });
}

}  // namespace decode_bench::cli
