#pragma once
// The runs of one side of a comparison as the command line names them: one results file, or
// several runs of one build joined by commas ("a1.json,a2.json"; compare::compare_runs).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::cli {

// The files of `list`, in order; throws std::invalid_argument for an empty name ("a.json,,b.json").
std::vector<std::string> run_files(const std::string& list);

// Each file of `list` read and validated (read_results); throws as read_results does.
std::vector<nlohmann::json> read_runs(const std::string& list);

}  // namespace decode_bench::cli
