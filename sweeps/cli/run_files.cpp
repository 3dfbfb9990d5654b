#include "sweeps/cli/run_files.hpp"

#include <stdexcept>
#include <string_view>

#include "harness/results_schema.hpp"
#include "sweeps/text_split.hpp"

namespace decode_bench::cli {

std::vector<std::string> run_files(const std::string& list) {
  std::vector<std::string> out;
  for (const std::string_view name : sweeps::split_at(list, ',')) {
    if (name.empty()) throw std::invalid_argument("'" + list + "': an empty file name in the comma-separated runs");
    out.emplace_back(name);
  }
  return out;
}

std::vector<nlohmann::json> read_runs(const std::string& list) {
  std::vector<nlohmann::json> out;
  for (const std::string& path : run_files(list)) out.push_back(read_results(path));
  return out;
}

}  // namespace decode_bench::cli
