#pragma once
// Actual-length distributions for capacity runs, parsed from the command line:
//   fixed:512            every sequence has 512 tokens
//   uniform:64..2048     uniform integers in [64, 2048]
//   zipf:mean=512[,s=1.1]  P(len = k) ~ k^-s on 1..N, N the smallest support whose mean reaches
//                        `mean` (many short sequences, a heavy tail of long ones)
// Lengths are always >= 1; capacity clamps them to max_seq_len.
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace decode_bench {

struct LengthDistribution {
  enum class Kind { fixed, uniform, zipf };
  Kind kind = Kind::fixed;
  std::int64_t lo = 512, hi = 512;  // fixed: lo == hi; uniform: [lo, hi]; zipf: [1, hi = N]
  double mean = 512;                // zipf: requested mean
  double exponent = 1.1;            // zipf: s

  // Throws std::invalid_argument naming the text and the reason.
  static LengthDistribution parse(std::string_view text);
  static LengthDistribution fixed(std::int64_t len) { return {Kind::fixed, len, len, double(len), 0}; }
  // The same forms built from numbers (sweep points); throw std::invalid_argument with the reason.
  static LengthDistribution uniform(std::int64_t lo, std::int64_t hi);
  static LengthDistribution zipf(double mean, double exponent);
  std::string describe() const;
};

class LengthSampler {
 public:
  LengthSampler(const LengthDistribution& dist, std::uint64_t seed);
  std::int64_t next();

 private:
  LengthDistribution dist_;
  std::mt19937_64 rng_;
  std::vector<double> zipf_cdf_;  // (N), cdf[k - 1] = P(len <= k)
};

}  // namespace decode_bench
