#pragma once
// The three renderings of a CompareReport: text (a terminal), markdown (a CI job summary, e.g.
// $GITHUB_STEP_SUMMARY) and json (machine-readable; `decode-bench plot --compare` draws from it).
#include <string>

#include <nlohmann/json.hpp>

#include "sweeps/compare/compare_results.hpp"

namespace decode_bench::compare {

enum class Format { text, markdown, json };
Format parse_format(const std::string& text);  // throws std::invalid_argument naming the value

nlohmann::json report_to_json(const CompareReport& report);
std::string format_report(const CompareReport& report, Format format);

}  // namespace decode_bench::compare
