#pragma once
// Summary statistics of repeated timings. One sample is one repetition's mean time per launch
// (Google Benchmark's unit of repetition), so a CV over samples measures run-to-run noise.
#include <span>

#include <nlohmann/json.hpp>

namespace decode_bench {

inline constexpr double kDefaultNoiseCv = 0.03;  // 3%: above this a point is flagged noisy

struct SampleStats {
  int count = 0;
  double median = 0, mean = 0, min = 0, max = 0;
  double stddev = 0;  // sample standard deviation (n - 1 in the denominator), 0 for one sample
  double cv = 0;      // stddev / mean
  bool noisy = false; // cv > the noise threshold given to summarize()
};

// Throws std::invalid_argument for no samples, a non-finite or negative sample, or a negative
// noise threshold: a timing that cannot be right must not become a number in the results.
SampleStats summarize(std::span<const double> samples, double noise_cv = kDefaultNoiseCv);

}  // namespace decode_bench
