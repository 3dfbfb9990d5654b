// The timing flags of sweep and ceilings: each parsed, validated with its own name and value, and
// mapped onto TimingOptions; Google Benchmark's twins map onto the same settings.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/timing_flags.hpp"

namespace decode_bench {
namespace {

TimingOptions apply(const std::vector<GivenFlag>& given, TimingOptions base = {}) {
  return apply_timing_flags(base, given);
}

// The message of the std::invalid_argument that applying `given` throws ("" when none).
std::string refusal(const std::vector<GivenFlag>& given) {
  try {
    apply(given);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(TimingFlags, NoFlagsLeaveTheBaseAsItIs) {
  TimingOptions base;
  base.mode = TimingMode::hot;
  base.repetitions = 3;
  base.min_rep_time_ms = 5;
  const TimingOptions o = apply({}, base);
  EXPECT_EQ(o.mode, TimingMode::hot);
  EXPECT_EQ(o.repetitions, 3);
  EXPECT_EQ(o.min_rep_time_ms, 5);
  EXPECT_EQ(o.max_repetitions, 0);
  EXPECT_EQ(o.point_time_limit_s, 0);
}

TEST(TimingFlags, EachFlagSetsItsField) {
  EXPECT_EQ(apply({{"--repetitions", "7"}}).repetitions, 7);
  EXPECT_EQ(apply({{"--benchmark_repetitions", "7"}}).repetitions, 7);
  EXPECT_EQ(apply({{"--min-time", "0.5"}}).min_rep_time_ms, 0.5);
  EXPECT_EQ(apply({{"--min-time", "0"}}).min_rep_time_ms, 0);  // one launch per repetition
  EXPECT_EQ(apply({{"--benchmark_min_time", "0.25"}}).min_rep_time_ms, 250);
  EXPECT_EQ(apply({{"--benchmark_min_time", "0.25s"}}).min_rep_time_ms, 250);
  EXPECT_EQ(apply({{"--warmup", "4"}}).warmup, 4);
  EXPECT_EQ(apply({{"--point-time-limit", "1.5"}}).point_time_limit_s, 1.5);
  EXPECT_EQ(apply({{"--max-repetitions", "12"}}).max_repetitions, 12);
}

TEST(TimingFlags, MaxCvSetsATargetCappedAtTenTimesTheRepetitions) {
  const TimingOptions o = apply({{"--max-cv", "0.02"}});
  EXPECT_EQ(o.noise_cv, 0.02);
  EXPECT_EQ(o.max_repetitions, kDefaultMaxRepetitionsFactor * 5);
  EXPECT_EQ(apply({{"--max-cv", "0.02"}, {"--repetitions", "3"}}).max_repetitions, 30);  // order does not matter
  const TimingOptions capped = apply({{"--max-cv", "0.02"}, {"--max-repetitions", "8"}});
  EXPECT_EQ(capped.max_repetitions, 8);
  // --max-repetitions alone makes the default noise threshold the target.
  const TimingOptions alone = apply({{"--max-repetitions", "9"}});
  EXPECT_EQ(alone.noise_cv, kDefaultNoiseCv);
  EXPECT_EQ(alone.max_repetitions, 9);
}

TEST(TimingFlags, BadValuesAreRefusedNamingFlagAndValue) {
  const struct {
    GivenFlag flag;
    const char* says;  // the start of the message
  } cases[] = {
      {{"--repetitions", "0"}, "--repetitions 0: must be an integer >= 1"},
      {{"--repetitions", "-3"}, "--repetitions -3: must be"},
      {{"--repetitions", "abc"}, "--repetitions abc: not an integer"},
      {{"--repetitions", "2.5"}, "--repetitions 2.5: not an integer"},
      {{"--repetitions", ""}, "--repetitions : not an integer"},
      {{"--repetitions", "99999999999"}, "--repetitions 99999999999: too large"},
      {{"--benchmark_repetitions", "0"}, "--benchmark_repetitions=0: must be an integer >= 1"},
      {{"--min-time", "-1"}, "--min-time -1: must be >= 0"},
      {{"--min-time", "2ms"}, "--min-time 2ms: not a number"},
      {{"--min-time", "inf"}, "--min-time inf: not a finite number"},
      {{"--benchmark_min_time", "10x"}, "--benchmark_min_time=10x: an iteration count is not supported"},
      {{"--benchmark_min_time", "abc"}, "--benchmark_min_time=abc: not a number of seconds"},
      {{"--benchmark_min_time", "-1s"}, "--benchmark_min_time=-1s: must be >= 0"},
      {{"--warmup", "0"}, "--warmup 0: must be an integer >= 1"},
      {{"--max-cv", "0"}, "--max-cv 0: must be > 0"},
      {{"--max-cv", "-0.1"}, "--max-cv -0.1: must be > 0"},
      {{"--max-cv", "nan"}, "--max-cv nan: not a finite number"},
      {{"--max-repetitions", "3"}, "--max-repetitions 3: must be >= the repetitions per point (5)"},
      {{"--max-repetitions", "0"}, "--max-repetitions 0: must be an integer >= 1"},
      {{"--point-time-limit", "0"}, "--point-time-limit 0: must be > 0 seconds"},
      {{"--point-time-limit", "-2"}, "--point-time-limit -2: must be > 0 seconds"},
  };
  for (const auto& c : cases) {
    const std::string what = refusal({c.flag});
    EXPECT_EQ(what.rfind(c.says, 0), 0u) << c.flag.flag << " " << c.flag.value << " -> '" << what << "'";
  }
}

TEST(TimingFlags, AFlagWithItsTwinIsRefused) {
  EXPECT_EQ(refusal({{"--repetitions", "3"}, {"--benchmark_repetitions", "3"}}),
            "--repetitions and --benchmark_repetitions set the same thing: give one of them");
  EXPECT_EQ(refusal({{"--benchmark_min_time", "1"}, {"--min-time", "2"}}),
            "--benchmark_min_time and --min-time set the same thing: give one of them");
  EXPECT_NE(refusal({{"--nonsense", "1"}}).find("'--nonsense' is not a timing flag"), std::string::npos);
}

TEST(TimingFlags, EverySpecIsAcceptedAndEachTwinHasItsFirstClassFlag) {
  const auto specs = timing_flag_specs();
  ASSERT_EQ(specs.size(), 8u);
  for (const TimingFlagSpec& s : specs) {
    EXPECT_FALSE(s.help.empty()) << s.flag;
    EXPECT_NO_THROW(apply({{std::string(s.flag), "12"}})) << s.flag;
  }
}

TEST(TimingFlags, BenchmarkMinTimeIsSeconds) {
  EXPECT_EQ(parse_benchmark_min_time_ms("2"), 2000);
  EXPECT_EQ(parse_benchmark_min_time_ms("0.002s"), 2);
  EXPECT_THROW(parse_benchmark_min_time_ms("s"), std::invalid_argument);
  EXPECT_THROW(parse_benchmark_min_time_ms("1e999"), std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench
