// `decode-bench merge`: join shard result files into one document.
#include <iostream>

#include "harness/results_schema.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/merge.hpp"

namespace decode_bench::cli {

void add_merge_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("merge", "Join shard result files into one");
  static std::vector<std::string> inputs;
  static std::string output;
  static bool allow_mixed = false;
  static std::string on_duplicate;
  sub->add_option("files", inputs, "Shard results files (from sweep --shard i/n)")->required();
  sub->add_option("-o,--output", output, "Merged results file")->required();
  sub->add_flag("--allow-mixed-devices", allow_mixed, "Merge files measured on different devices");
  auto* duplicate_opt = sub->add_option("--on-duplicate", on_duplicate,
                  "A point id in several files is an error; 'first' keeps the earliest file's point, 'last' the "
                  "latest one's (recorded in meta.merge)");
  sub->callback([&ctx, duplicate_opt] {
    std::vector<sweeps::NamedDocument> docs;
    auto policy = sweeps::OnDuplicate::refuse;
    if (duplicate_opt->count() > 0) {
      const auto parsed = sweeps::parse_on_duplicate(on_duplicate);
      if (!parsed) {
        std::cerr << "decode-bench: merge: --on-duplicate '" << on_duplicate << "': expected first or last\n";
        ctx.exit_code = kExitUsage;
        return;
      }
      policy = *parsed;
    }
    try {
      for (const auto& f : inputs) docs.push_back({f, read_results(f)});
      const auto merged = sweeps::merge_documents(docs, allow_mixed, ctx.argv, policy);
      write_results(output, merged);
      std::cerr << "decode-bench: merged " << docs.size() << " files, " << merged["points"].size() << " points -> "
                << output;
      if (const std::size_t dropped = merged["meta"]["merge"]["dropped_points"]; dropped > 0)
        std::cerr << " (" << dropped << " duplicate point" << (dropped == 1 ? "" : "s") << " dropped, --on-duplicate "
                  << on_duplicate << ")";
      std::cerr << "\n";
      ctx.exit_code = kExitOk;
    } catch (const std::invalid_argument& e) {
      std::cerr << "decode-bench: merge: " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
    } catch (const std::exception& e) {  // unreadable or invalid input file
      std::cerr << "decode-bench: merge: " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
    }
  });
}

}  // namespace decode_bench::cli
