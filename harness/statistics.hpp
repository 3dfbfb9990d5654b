#pragma once
// Summary statistics of repeated timings. One sample is one repetition's mean time per launch
// (Google Benchmark's unit of repetition), so a CV over samples measures run-to-run noise.
#include <cstdint>
#include <span>
#include <vector>

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

double median_of(std::span<const double> samples);  // throws std::invalid_argument when empty

// Percentile-bootstrap interval of median(b) / median(a): each of `resamples` rounds draws |a|
// samples from a and |b| from b with replacement and takes the ratio of the two medians; the
// interval is the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of those ratios.
// Deterministic for a given seed (its own generator, not <random>'s distributions, whose output
// differs between standard libraries), so a CI verdict is reproducible from the files alone.
struct RatioInterval {
  double ratio = 0;  // median(b) / median(a) of the samples as given
  double lo = 0, hi = 0;
  double confidence = 0;
  int resamples = 0;
};
inline constexpr std::uint64_t kDefaultBootstrapSeed = 20261123;
// Throws std::invalid_argument for an empty side, a non-positive median of a, confidence outside
// (0, 1) or fewer than 100 resamples.
RatioInterval bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, double confidence = 0.95,
                                     int resamples = 2000, std::uint64_t seed = kDefaultBootstrapSeed);

// The same over several runs a side (runs[i]: run i's samples; runs of one build in separate
// processes): each resample draws as many runs as the side has, with replacement, then each drawn
// run's samples with replacement, and takes the median of all it drew; `ratio` is the median of
// b's samples pooled over its runs over a's. So the offsets between runs (another placement of
// the buffers), which no run's own samples show, widen the interval. A side of one run draws no
// run, so one run a side is bootstrap_median_ratio, draw for draw. Throws as above, and for a run
// with no samples.
RatioInterval bootstrap_median_ratio_of_runs(std::span<const std::vector<double>> a,
                                             std::span<const std::vector<double>> b, double confidence = 0.95,
                                             int resamples = 2000, std::uint64_t seed = kDefaultBootstrapSeed);

}  // namespace decode_bench
