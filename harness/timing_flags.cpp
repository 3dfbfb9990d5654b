#include "harness/timing_flags.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <stdexcept>

namespace decode_bench {
namespace {

// The TimingOptions setting a flag sets; a flag and its Google Benchmark twin share one.
enum Setting { kRepetitions, kMinTime, kWarmup, kMaxCv, kMaxRepetitions, kPointTimeLimit, kSettings };

struct FlagDef {
  TimingFlagSpec spec;
  Setting setting;
};

constexpr std::string_view kBenchmarkMinTime = "--benchmark_min_time";

const std::array<FlagDef, 8>& flag_defs() {
  static const std::array<FlagDef, 8> defs = {{
      {{"--repetitions", "N", "Samples per point or variant (each one a repetition's mean launch time); default 5 "
        "(ceilings --quick: 3)"},
       kRepetitions},
      {{"--min-time", "MS",
        "Kernel time per repetition in ms: launches are added until a repetition holds this much; 0: one "
        "launch per repetition; default 2 (ceilings: 5, --quick 2)"},
       kMinTime},
      {{"--warmup", "N", "Untimed launches before the first sample; default 2"}, kWarmup},
      {{"--max-cv", "X",
        "Noise target, e.g. 0.02: after --repetitions, add samples until their coefficient of variation "
        "(stddev/mean) is <= X or --max-repetitions is reached; each point records whether it met it"},
       kMaxCv},
      {{"--max-repetitions", "N",
        "Cap on samples per point under a noise target (default with --max-cv: 10 x --repetitions)"},
       kMaxRepetitions},
      {{"--point-time-limit", "SECONDS",
        "Take no further sample once a point's (or variant's) timing, warm-up included, has used this much "
        "wall time; a timing always has one sample"},
       kPointTimeLimit},
      {{"--benchmark_repetitions", "N", "Google Benchmark's spelling of --repetitions (=N)"}, kRepetitions},
      {{"--benchmark_min_time", "SECONDS",
        "Google Benchmark's spelling of --min-time, in seconds (=0.5 or =0.5s)"},
       kMinTime},
  }};
  return defs;
}

// How the user wrote it: Google Benchmark's flags take '=', ours a space.
std::string shown(const GivenFlag& g) {
  return g.flag + (g.flag.starts_with("--benchmark_") ? "=" : " ") + g.value;
}

[[noreturn]] void refuse(const GivenFlag& g, const std::string& rule) {
  throw std::invalid_argument(shown(g) + ": " + rule);
}

long long parse_integer(const GivenFlag& g) {
  long long v = 0;
  const char* end = g.value.data() + g.value.size();
  const auto r = std::from_chars(g.value.data(), end, v);
  if (g.value.empty() || r.ec != std::errc() || r.ptr != end) refuse(g, "not an integer");
  return v;
}

double parse_number(const GivenFlag& g) {
  double v = 0;
  const char* end = g.value.data() + g.value.size();
  const auto r = std::from_chars(g.value.data(), end, v);
  if (g.value.empty() || r.ec != std::errc() || r.ptr != end) refuse(g, "not a number");
  if (!std::isfinite(v)) refuse(g, "not a finite number");
  return v;
}

int bounded_int(const GivenFlag& g, long long low, const std::string& rule) {
  const long long v = parse_integer(g);
  if (v < low) refuse(g, rule);
  if (v > INT_MAX) refuse(g, "too large (at most " + std::to_string(INT_MAX) + ")");
  return static_cast<int>(v);
}

}  // namespace

std::span<const TimingFlagSpec> timing_flag_specs() {
  static const auto specs = [] {
    std::array<TimingFlagSpec, 8> out{};
    std::transform(flag_defs().begin(), flag_defs().end(), out.begin(), [](const FlagDef& d) { return d.spec; });
    return out;
  }();
  return specs;
}

double parse_benchmark_min_time_ms(std::string_view text) {
  const GivenFlag g{std::string(kBenchmarkMinTime), std::string(text)};
  if (text.ends_with('x'))
    refuse(g, "an iteration count is not supported here (a repetition runs until it holds --min-time MS of "
              "kernel time); give seconds, e.g. 0.5s");
  GivenFlag seconds = g;
  if (text.ends_with('s')) seconds.value.pop_back();
  double v = 0;
  const char* end = seconds.value.data() + seconds.value.size();
  const auto r = std::from_chars(seconds.value.data(), end, v);
  if (seconds.value.empty() || r.ec != std::errc() || r.ptr != end || !std::isfinite(v))
    refuse(g, "not a number of seconds (e.g. 0.5 or 0.5s)");
  return 1e3 * v;
}

TimingOptions apply_timing_flags(TimingOptions o, std::span<const GivenFlag> given) {
  std::array<const GivenFlag*, kSettings> by_setting{};
  for (const GivenFlag& g : given) {
    const auto def = std::find_if(flag_defs().begin(), flag_defs().end(),
                                  [&](const FlagDef& d) { return d.spec.flag == g.flag; });
    if (def == flag_defs().end()) throw std::invalid_argument("'" + g.flag + "' is not a timing flag");
    if (const GivenFlag* earlier = by_setting[def->setting])
      throw std::invalid_argument(earlier->flag + " and " + g.flag + " set the same thing: give one of them");
    by_setting[def->setting] = &g;
  }
  if (const GivenFlag* g = by_setting[kRepetitions]) o.repetitions = bounded_int(*g, 1, "must be an integer >= 1");
  if (const GivenFlag* g = by_setting[kMinTime]) {
    const double ms = g->flag == kBenchmarkMinTime ? parse_benchmark_min_time_ms(g->value) : parse_number(*g);
    if (ms < 0) refuse(*g, "must be >= 0 (0: one launch per repetition)");
    o.min_rep_time_ms = ms;
  }
  if (const GivenFlag* g = by_setting[kWarmup])
    o.warmup = bounded_int(*g, 1, "must be an integer >= 1 (the last warm-up launch also sizes the timing)");
  if (const GivenFlag* g = by_setting[kMaxCv]) {
    const double x = parse_number(*g);
    if (x <= 0) refuse(*g, "must be > 0 (a coefficient of variation, e.g. 0.02 for 2%)");
    o.noise_cv = x;
  }
  if (const GivenFlag* g = by_setting[kMaxRepetitions]) {
    o.max_repetitions = bounded_int(*g, 1, "must be an integer >= 1");
    if (o.max_repetitions < o.repetitions)
      refuse(*g, "must be >= the repetitions per point (" + std::to_string(o.repetitions) + ")");
  } else if (by_setting[kMaxCv] && o.max_repetitions == 0) {
    const long long cap = static_cast<long long>(kDefaultMaxRepetitionsFactor) * o.repetitions;
    o.max_repetitions = static_cast<int>(std::min<long long>(INT_MAX, cap));
  }
  if (const GivenFlag* g = by_setting[kPointTimeLimit]) {
    const double s = parse_number(*g);
    if (s <= 0) refuse(*g, "must be > 0 seconds");
    o.point_time_limit_s = s;
  }
  validate(o);  // the rules above named the flag; this is the options' own check of the result
  return o;
}

}  // namespace decode_bench
