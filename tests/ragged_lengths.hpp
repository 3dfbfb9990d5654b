#pragma once
// Ragged batch lengths for GPU tests of the load-balanced plans: zipf draws with the extremes a
// work list must handle (an empty sequence, a one-token one, one 100x the median), and the decode
// case description both ragged suites use.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "pools/length_distribution.hpp"
#include "tests/decode_case.hpp"

namespace decode_bench::testing {

// `count` lengths drawn from `dist`, then 0, 1 and 100x the median inserted mid-batch.
inline std::vector<std::int32_t> batch_with_extremes(const LengthDistribution& dist, std::uint64_t seed, int count) {
  LengthSampler sampler(dist, seed);
  std::vector<std::int32_t> lengths;
  for (int b = 0; b < count; ++b) lengths.push_back(static_cast<std::int32_t>(sampler.next()));
  std::vector<std::int32_t> sorted = lengths;
  std::sort(sorted.begin(), sorted.end());
  const std::int32_t median = sorted[sorted.size() / 2];
  lengths.insert(lengths.begin() + count / 2, {0, 1, 100 * median});
  return lengths;
}

// `count` zipf(1.2) lengths with mean `mean`, then the extremes.
inline std::vector<std::int32_t> zipf_batch_with_extremes(double mean, std::uint64_t seed, int count = 64) {
  return batch_with_extremes(LengthDistribution::zipf(mean, 1.2), seed, count);
}

// `count` uniform lengths in [lo, hi], then the same extremes.
inline std::vector<std::int32_t> uniform_batch_with_extremes(std::int64_t lo, std::int64_t hi, std::uint64_t seed,
                                                             int count = 32) {
  return batch_with_extremes(LengthDistribution::uniform(lo, hi), seed, count);
}

// One line naming a ragged case: storage, heads, head dim, the first lengths, the page size.
inline std::string describe_ragged_case(DType dtype, const DecodeCase& c) {
  std::string lens;
  for (std::size_t i = 0; i < c.lengths.size() && i < 8; ++i) lens += std::to_string(c.lengths[i]) + ",";
  if (c.lengths.size() > 8)
    lens += "... (" + std::to_string(c.lengths.size()) + " sequences, longest " +
            std::to_string(*std::max_element(c.lengths.begin(), c.lengths.end())) + ")";
  return std::string(dtype_name(dtype)) + " Hq=" + std::to_string(c.shape.heads_q) + " Hkv=" +
         std::to_string(c.shape.heads_kv) + " D=" + std::to_string(c.shape.head_dim) + " T=" + lens +
         " page=" + std::to_string(c.page_size);
}

}  // namespace decode_bench::testing
