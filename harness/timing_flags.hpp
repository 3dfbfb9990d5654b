#pragma once
// The command-line spellings of TimingOptions, shared by every subcommand that times something
// (sweep, ceilings): parsing, validation with the flag's own name, and the mapping onto the
// options. Google Benchmark's spellings of the same settings (--benchmark_repetitions=N,
// --benchmark_min_time=SECONDS) are twins of the first-class flags: either one, never both.
// Host-only, unit-tested.
#include <span>
#include <string>
#include <string_view>

#include "harness/timing_options.hpp"

namespace decode_bench {

// One flag as the user gave it: its spelling (for messages) and its text.
struct GivenFlag {
  std::string flag;   // "--repetitions", "--benchmark_min_time", ...
  std::string value;  // "7", "0.5s", ...
};

struct TimingFlagSpec {
  std::string_view flag;
  std::string_view value_name;  // for --help: N, MS, X, SECONDS
  std::string_view help;
};
// Every timing flag with its help line, first-class flags first, then the Google Benchmark twins.
std::span<const TimingFlagSpec> timing_flag_specs();

// With --max-cv and no --max-repetitions, the cap on samples is this many times the repetitions.
inline constexpr int kDefaultMaxRepetitionsFactor = 10;

// `base` with the given flags applied:
//   --repetitions N, --benchmark_repetitions=N   repetitions = N (>= 1)
//   --min-time MS, --benchmark_min_time=S[s]      min_rep_time_ms (>= 0; 0: one launch per sample)
//   --warmup N                                    warmup (>= 1)
//   --max-cv X                                    noise_cv = X (> 0) and a cv target: samples are
//                                                 added until cv <= X, at most --max-repetitions
//                                                 (default kDefaultMaxRepetitionsFactor x repetitions)
//   --max-repetitions N                           max_repetitions (>= repetitions); alone it makes
//                                                 the default noise_cv a target
//   --point-time-limit SECONDS                    point_time_limit_s (> 0)
// Throws std::invalid_argument naming the flag and its value for a malformed or out-of-range
// value, an unknown flag, or a flag given together with its twin.
TimingOptions apply_timing_flags(TimingOptions base, std::span<const GivenFlag> given);

// --benchmark_min_time's value in milliseconds: seconds as a plain number or with an "s" suffix
// ("0.5", "0.5s"), as both Google Benchmark 1.7 and 1.8 read it. Its iteration-count form ("10x",
// 1.8 only) is refused: a repetition here is sized by kernel time. Throws std::invalid_argument
// naming the flag.
double parse_benchmark_min_time_ms(std::string_view text);

}  // namespace decode_bench
