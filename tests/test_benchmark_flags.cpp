// Google Benchmark's flags on the decode-bench command line: a whitelist; the twins of first-class
// flags go to the subcommand's parser, anything unsupported is refused by name.
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/benchmark_flags.hpp"
#include "tests/benchmark_flags_test_support.hpp"

namespace decode_bench {
namespace {

std::vector<std::string> split(std::vector<const char*> argv) { return testing::split_benchmark_flags(std::move(argv)); }
std::string refusal(std::vector<const char*> argv) { return testing::benchmark_flags_refusal(std::move(argv)); }

TEST(BenchmarkFlags, TwinsAreMovedAfterTheOtherArguments) {
  const auto rest = split({"decode-bench", "--benchmark_repetitions=7", "sweep", "--device", "1",
                           "--benchmark_filter=layout=paged", "--benchmark_min_time=0.5s", "--dry-run"});
  EXPECT_EQ(rest, (std::vector<std::string>{"decode-bench", "sweep", "--device", "1", "--dry-run",
                                            "--benchmark_repetitions=7", "--benchmark_filter=layout=paged",
                                            "--benchmark_min_time=0.5s"}));
  EXPECT_EQ(benchmark_flag_names_given(),
            (std::vector<std::string>{"--benchmark_repetitions", "--benchmark_filter", "--benchmark_min_time"}));
}

TEST(BenchmarkFlags, NoBenchmarkArgumentsChangeNothing) {
  const auto rest = split({"decode-bench", "list", "--help"});
  EXPECT_EQ(rest, (std::vector<std::string>{"decode-bench", "list", "--help"}));
  EXPECT_TRUE(benchmark_flag_names_given().empty());
}

TEST(BenchmarkFlags, UnsupportedFlagsAreRefusedByNameWithTheSupportedList) {
  for (const char* flag : {"--benchmark_color=false", "--benchmark_perf_counters=CYCLES", "--benchmark_list_tests",
                           "--benchmark_enable_random_interleaving=true", "--benchmark_no_such_flag=3"}) {
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    EXPECT_EQ(refusal({"decode-bench", "sweep", flag}),
              name + " is not supported (supported: --benchmark_filter, --benchmark_repetitions, "
                     "--benchmark_min_time, --benchmark_out, --benchmark_out_format, --benchmark_format)")
        << flag;
  }
}

TEST(BenchmarkFlags, ATwinWithoutAValueIsRefused) {
  EXPECT_EQ(refusal({"decode-bench", "sweep", "--benchmark_filter"}),
            "--benchmark_filter needs a value: --benchmark_filter=VALUE");
  EXPECT_EQ(refusal({"decode-bench", "sweep", "--benchmark_repetitions", "3"}),
            "--benchmark_repetitions needs a value: --benchmark_repetitions=VALUE");
}

TEST(BenchmarkFlags, TheWhitelistHoldsTheTwinsFirst) {
  for (std::size_t k = 0; k < kBenchmarkTwinFlags.size(); ++k)
    EXPECT_EQ(kSupportedBenchmarkFlags[k], kBenchmarkTwinFlags[k]);
}

}  // namespace
}  // namespace decode_bench
