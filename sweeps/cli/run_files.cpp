#include "sweeps/cli/run_files.hpp"

#include <algorithm>
#include <stdexcept>

#include "harness/results_schema.hpp"

namespace decode_bench::cli {

std::vector<std::string> run_files(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    out.push_back(list.substr(start, end - start));
    if (out.back().empty()) throw std::invalid_argument("'" + list + "': an empty file name in the comma-separated runs");
    start = end + 1;
  }
  return out;
}

std::vector<nlohmann::json> read_runs(const std::string& list) {
  std::vector<nlohmann::json> out;
  for (const std::string& path : run_files(list)) out.push_back(read_results(path));
  return out;
}

}  // namespace decode_bench::cli
