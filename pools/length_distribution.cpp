#include "pools/length_distribution.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace decode_bench {
namespace {

constexpr std::int64_t kZipfMaxSupport = std::int64_t{1} << 24;

[[noreturn]] void bad(std::string_view text, const std::string& why) {
  throw std::invalid_argument("--lengths '" + std::string(text) + "': " + why);
}

template <class Number>
Number parse_number(std::string_view text, std::string_view field, std::string_view whole) {
  Number value{};
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size())
    bad(whole, "'" + std::string(field) + "' is not a number");
  return value;
}

// Smallest N with mean(N) >= target, where mean(N) = sum k^(1-s) / sum k^-s over k = 1..N.
std::int64_t zipf_support_for_mean(double target, double s) {
  double weight = 0, weighted = 0;
  for (std::int64_t k = 1; k <= kZipfMaxSupport; ++k) {
    const double w = std::pow(static_cast<double>(k), -s);
    weight += w;
    weighted += w * static_cast<double>(k);
    if (weighted / weight >= target) return k;
  }
  throw std::invalid_argument("mean " + std::to_string(target) + " is out of reach for s = " + std::to_string(s) +
                              " within lengths up to 2^24 (lower s or the mean)");
}

}  // namespace

LengthDistribution LengthDistribution::uniform(std::int64_t lo, std::int64_t hi) {
  if (lo < 1 || hi < lo)
    throw std::invalid_argument("need 1 <= LO <= HI (got " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
  return {Kind::uniform, lo, hi, 0.5 * static_cast<double>(lo + hi), 0};
}

LengthDistribution LengthDistribution::zipf(double mean, double exponent) {
  if (!(mean >= 1)) throw std::invalid_argument("zipf needs mean=M with M >= 1");
  if (!(exponent > 0)) throw std::invalid_argument("s must be > 0");
  return {Kind::zipf, 1, zipf_support_for_mean(mean, exponent), mean, exponent};
}

LengthDistribution LengthDistribution::parse(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) bad(text, "expected fixed:N, uniform:LO..HI or zipf:mean=M[,s=S]");
  const std::string_view kind = text.substr(0, colon), args = text.substr(colon + 1);
  LengthDistribution d;
  if (kind == "fixed") {
    d = fixed(parse_number<std::int64_t>(args, args, text));
    if (d.lo < 1) bad(text, "the length must be >= 1");
    return d;
  }
  if (kind == "uniform") {
    const auto dots = args.find("..");
    if (dots == std::string_view::npos) bad(text, "expected uniform:LO..HI");
    const auto lo = parse_number<std::int64_t>(args.substr(0, dots), args.substr(0, dots), text);
    const auto hi = parse_number<std::int64_t>(args.substr(dots + 2), args.substr(dots + 2), text);
    try {
      return uniform(lo, hi);
    } catch (const std::invalid_argument& e) {
      bad(text, e.what());
    }
  }
  if (kind == "zipf") {
    double mean = -1, exponent = 1.1;
    std::string_view rest = args;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      const auto eq = item.find('=');
      if (eq == std::string_view::npos) bad(text, "'" + std::string(item) + "' is not key=value");
      const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
      if (key == "mean") mean = parse_number<double>(value, value, text);
      else if (key == "s") exponent = parse_number<double>(value, value, text);
      else bad(text, "unknown key '" + std::string(key) + "' (mean, s)");
    }
    try {
      return zipf(mean, exponent);
    } catch (const std::invalid_argument& e) {
      bad(text, e.what());
    }
  }
  bad(text, "unknown distribution '" + std::string(kind) + "' (fixed, uniform, zipf)");
}

std::string LengthDistribution::describe() const {
  switch (kind) {
    case Kind::fixed: return "fixed:" + std::to_string(lo);
    case Kind::uniform: return "uniform:" + std::to_string(lo) + ".." + std::to_string(hi);
    case Kind::zipf: {
      char buf[96];
      std::snprintf(buf, sizeof buf, "zipf:mean=%g,s=%g (support 1..%lld)", mean, exponent, static_cast<long long>(hi));
      return buf;
    }
  }
  return "?";
}

LengthSampler::LengthSampler(const LengthDistribution& dist, std::uint64_t seed) : dist_(dist), rng_(seed) {
  if (dist_.kind != LengthDistribution::Kind::zipf) return;
  zipf_cdf_.resize(dist_.hi);
  double total = 0;
  for (std::int64_t k = 1; k <= dist_.hi; ++k) zipf_cdf_[k - 1] = total += std::pow(static_cast<double>(k), -dist_.exponent);
  for (double& c : zipf_cdf_) c /= total;
}

std::int64_t LengthSampler::next() {
  switch (dist_.kind) {
    case LengthDistribution::Kind::fixed: return dist_.lo;
    case LengthDistribution::Kind::uniform: return std::uniform_int_distribution<std::int64_t>(dist_.lo, dist_.hi)(rng_);
    case LengthDistribution::Kind::zipf: {
      const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
      const auto it = std::lower_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u);
      return std::min<std::int64_t>(1 + (it - zipf_cdf_.begin()), dist_.hi);
    }
  }
  return dist_.lo;
}

}  // namespace decode_bench
