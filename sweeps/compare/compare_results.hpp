#pragma once
// Point-by-point comparison of two results documents (baseline A, candidate B): the logic behind
// `decode-bench compare`, kept free of I/O so it is tested on in-memory documents.
//
// Per common point: ratio = metric(B) / metric(A), and, when both points carry their timing
// samples (timing.samples_us) and the metric is derived from the median time, a percentile-
// bootstrap interval of that ratio (harness/statistics.hpp). The verdict:
//   regression / improvement  the interval lies wholly on one side of 1 (significant) AND the
//                             ratio is beyond the threshold in that direction
//   noisy                     not significant, but the interval reaches beyond the threshold in
//                             the bad direction: the samples cannot tell "no change" from a
//                             regression larger than the threshold (rerun with more repetitions)
//   unchanged                 everything else (including significant changes below the threshold)
// Without samples on both sides the threshold alone decides (interval = nullopt).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/statistics.hpp"

namespace decode_bench::compare {

enum class Normalize { none, ceilings };
// CompareReport::metric under Normalize::ceilings.
inline constexpr const char* kFractionOfCeiling = "fraction_of_ceiling";

struct CompareOptions {
  std::string metric = "achieved.gbps";  // dotted path inside each point (ignored with Normalize::ceilings)
  double threshold = 0.05;               // allowed relative change in the bad direction
  // nullopt: decided from the metric (timing.*, *_us, *_ns, *_ms: lower is better).
  std::optional<bool> lower_is_better;
  Normalize normalize = Normalize::none;
  double confidence = 0.95;              // of the bootstrap interval
  int resamples = 2000;
  std::uint64_t seed = kDefaultBootstrapSeed;
};

enum class Verdict { unchanged, improvement, regression, noisy };
const char* to_string(Verdict v);

struct PointComparison {
  std::string id;
  std::string experiment;
  double a = 0, b = 0;  // the metric on each side
  double ratio = 0;     // b / a
  std::optional<double> lo, hi;  // bootstrap interval of the ratio (both sides had samples)
  int samples_a = 0, samples_b = 0;
  std::string bound;    // with Normalize::ceilings: the ceiling each side's point is a fraction of
  std::optional<double> bound_ratio;  // that ceiling's B / A (the devices' ratio beside the point's)
  Verdict verdict = Verdict::unchanged;
  bool regressed = false;  // verdict == regression
};

// Ceiling ratio B / A of the two runs, printed above the points (and beside normalised ratios).
struct CeilingRatio {
  std::string name, unit;
  double a = 0, b = 0, ratio = 0;
};

struct GroupSummary {
  std::string experiment;  // "" for the overall summary
  std::size_t count = 0, regressions = 0, improvements = 0, noisy = 0;
  double geomean_ratio = 0;
  std::string worst_id;     // the point furthest in the bad direction
  double worst_ratio = 0;
};

struct CompareReport {
  std::vector<PointComparison> common;      // points ok in both with the metric, in A's order
  std::vector<std::string> only_in_a, only_in_b, not_comparable;  // ids
  // Points are matched by their timed launch (sweeps::timed_launch_id): the pairs whose ids
  // differ in an axis beside the timing (one side run with --no-counters).
  std::size_t matched_beside_timing = 0;
  std::size_t runs_a = 1, runs_b = 1;  // results files a side (compare_runs)
  std::string metric;       // what was compared (the option, or kFractionOfCeiling)
  bool lower_is_better = false;
  double threshold = 0;
  std::string device_a, device_b, preset_a, preset_b;
  // compare_backends (one file, two backends): the backend of each side; empty for two files.
  std::string backend_a, backend_b;
  std::vector<CeilingRatio> ceilings;       // every ceiling both documents measured, dram_read first
  // "NAME: A=... B=..." for every meta.environment variable (DECODE_BENCH_*) set differently.
  std::vector<std::string> environment_differences;
  std::vector<GroupSummary> experiments;    // per experiment, in first-seen order
  GroupSummary overall;
  bool any_regression() const;
};

bool metric_lower_is_better(const std::string& metric);

// Throws std::invalid_argument for a bad threshold, metric path, confidence or resample count,
// for Normalize::ceilings when a document lacks the dram_read ceiling, and for a document with
// two points of one timed launch. Both documents must
// already be schema-valid (validate_results).
CompareReport compare_results(const nlohmann::json& a, const nlohmann::json& b, const CompareOptions& options);

// Several runs a side (the same build run in separate processes: each allocates its buffers
// afresh, and the placement can move a point by more than its own samples' spread). Points are
// matched in every run of both sides (missing or not ok in any: not comparable); a side's value is
// the median of its runs' values; the interval resamples runs, then each run's samples
// (bootstrap_median_ratio_of_runs), so it covers the offsets between runs. The report's device,
// ceilings and environment are the first file's of each side. Throws as compare_results, and
// for a side whose runs differ in device, commit (meta.git.sha) or environment.
CompareReport compare_runs(std::span<const nlohmann::json> a, std::span<const nlohmann::json> b,
                           const CompareOptions& options);

}  // namespace decode_bench::compare
