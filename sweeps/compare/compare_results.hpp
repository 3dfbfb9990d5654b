#pragma once
// Point-by-point comparison of two results documents (baseline A, candidate B): the logic behind
// `decode-bench compare`, kept free of I/O so it is tested on in-memory documents.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace decode_bench::compare {

struct CompareOptions {
  std::string metric = "achieved.gbps";  // dotted path inside each point
  double threshold = 0.05;               // allowed relative change in the bad direction
  // nullopt: decided from the metric (timing.*, *_us, *_ns, *_ms: lower is better).
  std::optional<bool> lower_is_better;
};

struct PointComparison {
  std::string id;
  double a = 0, b = 0;
  double ratio = 0;     // b / a
  bool regressed = false;
};

struct CompareReport {
  std::vector<PointComparison> common;      // points ok in both with the metric, in A's order
  std::vector<std::string> only_in_a, only_in_b, not_comparable;  // ids
  bool lower_is_better = false;
  bool any_regression() const;
};

bool metric_lower_is_better(const std::string& metric);

// Throws std::invalid_argument for a bad threshold or metric path. Both documents must already
// be schema-valid (validate_results).
CompareReport compare_results(const nlohmann::json& a, const nlohmann::json& b, const CompareOptions& options);

// The table printed by the command: id, A, B, B/A, and a REGRESSION marker.
std::string format_report(const CompareReport& report, const CompareOptions& options);

}  // namespace decode_bench::compare
