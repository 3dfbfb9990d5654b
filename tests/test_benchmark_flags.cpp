// Google Benchmark's flags pass through the decode-bench command line.
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include "harness/benchmark_flags.hpp"

namespace decode_bench {
namespace {

std::vector<std::string> split(std::vector<const char*> argv) {
  return take_benchmark_flags(static_cast<int>(argv.size()), argv.data());
}

// Restores the process-wide filter so test order does not matter.
class BenchmarkFlags : public ::testing::Test {
 protected:
  void TearDown() override { benchmark::SetBenchmarkFilter("."); }
};

TEST_F(BenchmarkFlags, BenchmarkArgumentsAreTakenOutTheRestStays) {
  const auto rest = split({"decode-bench", "ceilings", "--benchmark_repetitions=7", "--device", "1",
                           "--benchmark_filter=dram", "--help"});
  EXPECT_EQ(rest, (std::vector<std::string>{"decode-bench", "ceilings", "--device", "1", "--help"}));
  EXPECT_TRUE(benchmark_flags_given().repetitions);
  EXPECT_EQ(benchmark::GetBenchmarkFilter(), "dram");
}

TEST_F(BenchmarkFlags, NoBenchmarkArgumentsChangeNothing) {
  const auto rest = split({"decode-bench", "list"});
  EXPECT_EQ(rest, (std::vector<std::string>{"decode-bench", "list"}));
}

TEST_F(BenchmarkFlags, UnknownBenchmarkFlagIsNamed) {
  try {
    split({"decode-bench", "ceilings", "--benchmark_no_such_flag=3"});
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--benchmark_no_such_flag=3"), std::string::npos) << e.what();
  }
}

TEST_F(BenchmarkFlags, FilterIsARegexSearchOnThePointName) {
  benchmark::SetBenchmarkFilter("dram_(read|copy)");
  EXPECT_TRUE(benchmark_filter_selects("ceilings/dram_read/read_kernel"));
  EXPECT_TRUE(benchmark_filter_selects("ceilings/dram_copy/copy_kernel"));
  EXPECT_FALSE(benchmark_filter_selects("ceilings/l2_read/read_kernel"));
  benchmark::SetBenchmarkFilter("-fp16");  // a leading '-' negates
  EXPECT_FALSE(benchmark_filter_selects("ceilings/fp16_fma"));
  EXPECT_TRUE(benchmark_filter_selects("ceilings/fp32_fma"));
  for (const char* all : {"", "all", "."}) {
    benchmark::SetBenchmarkFilter(all);
    EXPECT_TRUE(benchmark_filter_selects("anything/at:all")) << all;
  }
  benchmark::SetBenchmarkFilter("^flash_decode$");  // anchors apply to the plain name
  EXPECT_TRUE(benchmark_filter_selects("flash_decode"));
  EXPECT_FALSE(benchmark_filter_selects("flash_decode/T=1"));
  benchmark::SetBenchmarkFilter("(");
  EXPECT_THROW(benchmark_filter_selects("x"), std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench
