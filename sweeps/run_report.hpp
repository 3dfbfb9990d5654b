#pragma once
// What `decode-bench sweep` prints and writes about the whole run once it is over, in Google
// Benchmark's output formats (harness/benchmark_flags.hpp: --benchmark_format,
// --benchmark_out, --benchmark_out_format):
//   console  the tables by experiment (sweeps/results_table.hpp, text); when the run measured more
//            than one backend, then the backends side by side (sweeps/backend_table.hpp, as
//            `decode-bench show FILE --by-backend` prints them)
//   csv      one row per point (sweeps/results_csv.hpp)
//   json     the results document itself
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace decode_bench::sweeps {

// The line before the side-by-side table of a console report.
inline constexpr std::string_view kBackendsSideBySideHeading = "backends side by side (decode-bench show FILE --by-backend):";

// The results document `doc` in `format` (console | csv | json; std::invalid_argument otherwise).
std::string run_report(const nlohmann::json& doc, std::string_view format);

// Why --benchmark_out=`out` cannot be written at the end of a sweep whose results file is
// `results`: a directory, the results file or its sidecar, a folder that cannot be made, a file that
// cannot be opened. Checked before the sweep runs, so a long run never ends in an unwritable
// name. Creates the parent folders (as the results file's writer does); leaves no new file.
std::optional<std::string> benchmark_out_problem(const std::filesystem::path& out,
                                                 const std::filesystem::path& results);

// Writes run_report(doc, format) to `out` atomically (a temporary file, then a rename); throws
// std::runtime_error naming the file when it cannot.
void write_run_report(const std::filesystem::path& out, const nlohmann::json& doc, std::string_view format);

}  // namespace decode_bench::sweeps
