#pragma once
// Ragged batch lengths for GPU tests of the load-balanced plans: zipf draws with the extremes a
// work list must handle (an empty sequence, a one-token one, one 100x the median).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "pools/length_distribution.hpp"

namespace decode_bench::testing {

// `count` zipf(1.2) lengths with mean `mean`, then 0, 1 and 100x the median inserted mid-batch.
inline std::vector<std::int32_t> zipf_batch_with_extremes(double mean, std::uint64_t seed, int count = 64) {
  LengthSampler sampler(LengthDistribution::zipf(mean, 1.2), seed);
  std::vector<std::int32_t> lengths;
  for (int b = 0; b < count; ++b) lengths.push_back(static_cast<std::int32_t>(sampler.next()));
  std::vector<std::int32_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  const std::int32_t median = sorted[sorted.size() / 2];
  lengths.insert(lengths.begin() + count / 2, {0, 1, 100 * median});
  return lengths;
}

// `count` uniform lengths in [lo, hi], then the same extremes.
inline std::vector<std::int32_t> uniform_batch_with_extremes(std::int64_t lo, std::int64_t hi, std::uint64_t seed,
                                                             int count = 32) {
  LengthSampler sampler(LengthDistribution::uniform(lo, hi), seed);
  std::vector<std::int32_t> lengths;
  for (int b = 0; b < count; ++b) lengths.push_back(static_cast<std::int32_t>(sampler.next()));
  std::vector<std::int32_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  const std::int32_t median = sorted[sorted.size() / 2];
  lengths.insert(lengths.begin() + count / 2, {0, 1, 100 * median});
  return lengths;
}

}  // namespace decode_bench::testing
