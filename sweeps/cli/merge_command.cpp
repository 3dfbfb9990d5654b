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
  sub->add_option("files", inputs, "Shard results files (from sweep --shard i/n)")->required();
  sub->add_option("-o,--output", output, "Merged results file")->required();
  sub->add_flag("--allow-mixed-devices", allow_mixed, "Merge files measured on different devices");
  sub->callback([&ctx] {
    std::vector<sweeps::NamedDocument> docs;
    try {
      for (const auto& f : inputs) docs.push_back({f, read_results(f)});
      const auto merged = sweeps::merge_documents(docs, allow_mixed, ctx.argv);
      write_results(output, merged);
      std::cerr << "decode-bench: merged " << docs.size() << " files, " << merged["points"].size() << " points -> "
                << output << "\n";
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
