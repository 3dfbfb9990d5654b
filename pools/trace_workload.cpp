#include "pools/trace_workload.hpp"

#include <cmath>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>

#include "pools/length_distribution.hpp"

namespace decode_bench {
namespace {

// Lengths are int64 token counts; a draw far beyond any pool is a spec error, not a length.
constexpr double kMaxLength = 1e12;

class LengthDraw {
 public:
  LengthDraw(const TraceLengths& l, std::uint64_t seed) : l_(l), rng_(seed) {
    if (l.kind == TraceLengths::Kind::zipf) zipf_.emplace(LengthDistribution::zipf(l.mean, l.alpha), seed);
  }
  std::int64_t next() {
    switch (l_.kind) {
      case TraceLengths::Kind::fixed: return static_cast<std::int64_t>(std::llround(l_.mean));
      case TraceLengths::Kind::uniform: return std::uniform_int_distribution<std::int64_t>(l_.lo, l_.hi)(rng_);
      case TraceLengths::Kind::zipf: return zipf_->next();
      case TraceLengths::Kind::lognormal: {
        const double mu = std::log(l_.mean) - 0.5 * l_.sigma * l_.sigma;
        const double x = std::exp(std::normal_distribution<double>(mu, l_.sigma)(rng_));
        return std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(std::min(x, kMaxLength))));
      }
    }
    return 1;
  }

 private:
  TraceLengths l_;
  std::mt19937_64 rng_;
  std::optional<LengthSampler> zipf_;
};

}  // namespace

std::string TraceLengths::invalid_reason(const std::string& what) const {
  const auto bad = [&](const std::string& field, double v, const std::string& rule) {
    std::ostringstream s;
    s << what << " " << field << " " << v << ": " << rule;
    return s.str();
  };
  switch (kind) {
    case Kind::fixed:
      if (!(mean >= 1 && mean <= kMaxLength)) return bad("mean", mean, "must be in [1, 1e12]");
      return {};
    case Kind::uniform:
      if (lo < 1) return bad("lo", static_cast<double>(lo), "must be >= 1");
      if (hi < lo) return bad("hi", static_cast<double>(hi), "must be >= lo " + std::to_string(lo));
      return {};
    case Kind::zipf:
      try {
        (void)LengthDistribution::zipf(mean, alpha);
      } catch (const std::invalid_argument& e) {
        return what + " zipf: " + e.what();
      }
      return {};
    case Kind::lognormal:
      if (!(mean >= 1 && mean <= kMaxLength)) return bad("mean", mean, "must be in [1, 1e12]");
      if (!(sigma > 0 && sigma <= 4)) return bad("sigma", sigma, "must be in (0, 4]");
      return {};
  }
  return what + ": unknown length distribution";
}

std::string TraceLengths::describe() const {
  std::ostringstream s;
  switch (kind) {
    case Kind::fixed: s << "fixed:" << mean; break;
    case Kind::uniform: s << "uniform:" << lo << ".." << hi; break;
    case Kind::zipf: s << "zipf:mean=" << mean << ",alpha=" << alpha; break;
    case Kind::lognormal: s << "lognormal:mean=" << mean << ",sigma=" << sigma; break;
  }
  return s.str();
}

std::string TraceSpec::invalid_reason() const {
  if (requests < 0) return "requests must be >= 0 (got " + std::to_string(requests) + ")";
  if (arrival == TraceArrival::poisson && !(rate > 0 && std::isfinite(rate))) {
    std::ostringstream s;
    s << "rate " << rate << ": Poisson arrivals need a finite rate > 0 (requests per step)";
    return s.str();
  }
  if (system_prompt_len < 0 || system_prompt_len > (1 << 24))
    return "system_prompt_len must be in [0, 16777216] (got " + std::to_string(system_prompt_len) + ")";
  if (system_prompts < 1) return "system_prompts must be >= 1 (got " + std::to_string(system_prompts) + ")";
  if (static_cast<std::int64_t>(system_prompts) * system_prompt_len > 0x7fffffffLL)
    return "system_prompts x system_prompt_len = " + std::to_string(system_prompts * system_prompt_len) +
           " tokens exceeds 2^31 - 1 (every system prompt token needs its own id)";
  if (auto r = prompt.invalid_reason("prompt"); !r.empty()) return r;
  return output.invalid_reason("output");
}

std::vector<TraceRequest> make_trace(const TraceSpec& spec) {
  if (auto r = spec.invalid_reason(); !r.empty()) throw std::invalid_argument("trace: " + r);
  // Separate streams, so changing one distribution leaves the others' draws as they were.
  std::mt19937_64 arrivals(spec.seed * 3 + 1);
  LengthDraw prompt(spec.prompt, spec.seed * 3 + 2), output(spec.output, spec.seed * 3 + 3);
  std::mt19937_64 system(spec.seed * 3 + 4);  // a separate stream: traces without one draw as before
  std::uniform_int_distribution<int> which(0, spec.system_prompts - 1);
  std::exponential_distribution<double> gap(spec.arrival == TraceArrival::poisson ? spec.rate : 1.0);
  std::vector<TraceRequest> out;
  out.reserve(static_cast<std::size_t>(spec.requests));
  double t = 0;
  for (int i = 0; i < spec.requests; ++i) {
    TraceRequest r;
    r.id = i;
    if (spec.arrival == TraceArrival::poisson) {
      t += gap(arrivals);
      r.arrival_step = static_cast<std::int64_t>(std::floor(t));
    }
    r.prompt_len = prompt.next();
    r.output_len = output.next();
    if (spec.system_prompt_len > 0) {
      r.system_prompt = which(system);
      r.system_prompt_len = spec.system_prompt_len;
      r.prompt_len += spec.system_prompt_len;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace decode_bench
