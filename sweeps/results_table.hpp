#pragma once
// A results file read back as people read benchmark output: one line per finished point while a
// sweep runs, and tables grouped by experiment (text or markdown) at the end of a sweep and from
// `decode-bench show`. Pure functions over the results JSON (docs/results.md); the CSV export is
// sweeps/results_csv.hpp.
//
// Table columns, one row per timed or verified point (ok, verification_failed), "-" where the
// point has no such value:
//   point        the id without its "<experiment>/" prefix
//   median (us)  timing.median_us
//   GB/s         achieved.gbps
//   of ceiling   achieved.fraction_of_dram_read (the run's measured DRAM read ceiling)
//   of floor     achieved.fraction_of_read_floor (cold points of a run that measured the floor)
//   verified     verification.passed: yes / no; "-" for a point without verification (capacity)
//   max error    verification.max_abs_error
//   sequences    capacity.sequences, only in an experiment with capacity points
// Skipped and error points follow their experiment's table, each with its reason; an experiment
// with more than kListedUnmeasured of them gets one line per status instead (the first point and
// its reason, and how many).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::sweeps {

enum class TableFormat { text, markdown, csv, json };

// "text" | "markdown" | "csv" | "json"; nullopt for anything else.
std::optional<TableFormat> parse_table_format(std::string_view name);

// Which points of a file to show. An empty list or filter selects every point.
struct PointSelection {
  std::vector<std::string> experiments;  // --experiment, repeatable
  std::string filter;                    // --filter: a regular-expression (ECMAScript) search in the id
};

// The points of `points` (a JSON array) that `selection` keeps, in file order. Throws
// std::invalid_argument naming --filter for a filter that is not a regular expression, and
// naming --experiment for an experiment no point of `points` belongs to.
std::vector<nlohmann::json> select_points(const nlohmann::json& points, const PointSelection& selection);

// What became of one point, for a sweep's progress line: "ok: 52.95 us, 2534.7 GB/s, 0.809 of
// the DRAM read ceiling", "ok: 4096 sequences (device)" for a capacity point, "skipped (REASON)",
// "error (REASON)", "verification failed (max error 1.2e-03, tolerance 1e-03)".
std::string point_outcome_text(const nlohmann::json& point);

inline constexpr std::size_t kListedUnmeasured = 8;

// The points as tables grouped by experiment (experiments in order of first appearance).
// `format` is text or markdown (anything else is std::invalid_argument).
std::string results_table(const std::vector<nlohmann::json>& points, TableFormat format);

// `points` of the results document `document` in `format`: text and markdown tables, csv
// (results_csv.hpp, which reads device names from `document`), json (the points, an array).
std::string format_results(const nlohmann::json& document, const std::vector<nlohmann::json>& points,
                           TableFormat format);

}  // namespace decode_bench::sweeps
