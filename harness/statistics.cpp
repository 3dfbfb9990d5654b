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

}  // namespace decode_bench
