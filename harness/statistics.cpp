#include "harness/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace decode_bench {

SampleStats summarize(std::span<const double> samples, double noise_cv) {
  if (samples.empty()) throw std::invalid_argument("summarize: no samples");
  if (!(noise_cv >= 0)) throw std::invalid_argument("summarize: noise_cv must be >= 0, got " + std::to_string(noise_cv));
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (!std::isfinite(samples[i]) || samples[i] < 0)
      throw std::invalid_argument("summarize: sample " + std::to_string(i) + " is " + std::to_string(samples[i]) +
                                  "; timings must be finite and >= 0");

  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();

  SampleStats s;
  s.count = static_cast<int>(n);
  s.min = sorted.front();
  s.max = sorted.back();
  s.median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double sum = 0;
  for (double x : sorted) sum += x;
  s.mean = sum / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;  // two-pass: no cancellation for samples far from zero
    for (double x : sorted) squares += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  }
  s.cv = s.mean > 0 ? s.stddev / s.mean : 0;
  s.noisy = s.cv > noise_cv;
  return s;
}

double median_of(std::span<const double> samples) {
  if (samples.empty()) throw std::invalid_argument("median_of: no samples");
  std::vector<double> v(samples.begin(), samples.end());
  const std::size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (n % 2) return v[mid];
  const double upper = v[mid];
  return 0.5 * (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper);
}

namespace {

// splitmix64: a small, well-mixed generator whose sequence is fixed by its definition.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) by rejection (no modulo bias).
  std::size_t below(std::size_t n) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    std::uint64_t x;
    do x = next();
    while (x >= limit);
    return static_cast<std::size_t>(x % n);
  }
};

// Linear interpolation between order statistics (the "type 7" quantile of R and numpy).
double quantile_sorted(const std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto i = static_cast<std::size_t>(pos);
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (pos - static_cast<double>(i)) * (sorted[i + 1] - sorted[i]);
}

// One draw of a side: as many runs as it has, with replacement, and each drawn run's samples with
// replacement; the median of everything drawn. A side of one run draws no run (so one run a side
// is the plain bootstrap over its samples, draw for draw).
double resampled_median_of_runs(std::span<const std::vector<double>> runs, SplitMix64& rng, std::vector<double>& scratch) {
  scratch.clear();
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::vector<double>& run = runs.size() == 1 ? runs.front() : runs[rng.below(runs.size())];
    for (std::size_t j = 0; j < run.size(); ++j) scratch.push_back(run[rng.below(run.size())]);
  }
  return median_of(scratch);
}

std::vector<double> pooled(std::span<const std::vector<double>> runs) {
  std::vector<double> out;
  for (const auto& run : runs) out.insert(out.end(), run.begin(), run.end());
  return out;
}

void check_interval_options(const char* who, double confidence, int resamples) {
  if (!(confidence > 0 && confidence < 1))
    throw std::invalid_argument(std::string(who) + ": confidence must be in (0, 1), got " + std::to_string(confidence));
  if (resamples < 100)
    throw std::invalid_argument(std::string(who) + ": at least 100 resamples, got " + std::to_string(resamples));
}

// The interval of the sorted ratios, or a throw when every resampled median of a was 0.
RatioInterval interval_of(std::vector<double>& ratios, double ratio, double confidence, int resamples, const char* who) {
  if (ratios.empty()) throw std::invalid_argument(std::string(who) + ": every resampled median of a is 0");
  std::sort(ratios.begin(), ratios.end());
  RatioInterval r;
  r.ratio = ratio;
  r.confidence = confidence;
  r.resamples = resamples;
  r.lo = quantile_sorted(ratios, (1 - confidence) / 2);
  r.hi = quantile_sorted(ratios, (1 + confidence) / 2);
  return r;
}

}  // namespace

RatioInterval bootstrap_median_ratio(std::span<const double> a, std::span<const double> b, double confidence,
                                     int resamples, std::uint64_t seed) {
  if (a.empty() || b.empty()) throw std::invalid_argument("bootstrap_median_ratio: a side has no samples");
  const std::vector<std::vector<double>> one_a{{a.begin(), a.end()}}, one_b{{b.begin(), b.end()}};
  return bootstrap_median_ratio_of_runs(one_a, one_b, confidence, resamples, seed);
}

RatioInterval bootstrap_median_ratio_of_runs(std::span<const std::vector<double>> a,
                                             std::span<const std::vector<double>> b, double confidence,
                                             int resamples, std::uint64_t seed) {
  constexpr const char* who = "bootstrap_median_ratio_of_runs";
  if (a.empty() || b.empty()) throw std::invalid_argument(std::string(who) + ": a side has no runs");
  for (const auto* side : {&a, &b})
    for (const auto& run : *side)
      if (run.empty()) throw std::invalid_argument(std::string(who) + ": a run has no samples");
  check_interval_options(who, confidence, resamples);
  const double median_a = median_of(pooled(a));
  if (!(median_a > 0)) throw std::invalid_argument(std::string(who) + ": median of a must be > 0");
  // One generator for both sides, a's draw first in each round; a round whose median of a is 0
  // is left out.
  SplitMix64 rng{seed};
  std::vector<double> ratios, scratch;
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double ma = resampled_median_of_runs(a, rng, scratch);
    const double mb = resampled_median_of_runs(b, rng, scratch);
    if (ma > 0) ratios.push_back(mb / ma);
  }
  return interval_of(ratios, median_of(pooled(b)) / median_a, confidence, resamples, who);
}

}  // namespace decode_bench
