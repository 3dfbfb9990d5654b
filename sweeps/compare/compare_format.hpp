#pragma once
// The renderings of a CompareReport: text (a terminal), markdown (a CI job summary, e.g.
// $GITHUB_STEP_SUMMARY), json (machine-readable; `decode-bench plot --compare` draws from it) and
// csv (one row per point for a spreadsheet: the compared points, then the ids not compared with
// only_in_a / only_in_b / not_comparable as their verdict; the summaries are in the others).
#include <string>

#include <nlohmann/json.hpp>

#include "sweeps/compare/compare_results.hpp"

namespace decode_bench::compare {

enum class Format { text, markdown, json, csv };
Format parse_format(const std::string& text);  // throws std::invalid_argument naming the value

nlohmann::json report_to_json(const CompareReport& report);
std::string format_report(const CompareReport& report, Format format);

}  // namespace decode_bench::compare
