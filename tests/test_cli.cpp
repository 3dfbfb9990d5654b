// The decode-bench executable as a user meets it: help everywhere, exit code 2 on bad usage or
// when a GPU subcommand finds no GPU.
#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"
#include <sys/wait.h>

#include "harness/device_query.hpp"
#include "harness/results_schema.hpp"
#include "tests/gpu_test_support.hpp"

namespace {

using ::decode_bench::testing::CliResult;
inline CliResult run_cli(const std::string& args) { return ::decode_bench::testing::run_decode_bench(args); }

const char* kSubcommands[] = {"sweep", "list", "ceilings", "capacity", "compare", "plot", "merge", "show"};

TEST(Cli, TopLevelHelpListsEverySubcommand) {
  const auto r = run_cli("--help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* sub : kSubcommands) EXPECT_NE(r.output.find(sub), std::string::npos) << sub;
}

TEST(Cli, EverySubcommandHasHelp) {
  for (const char* sub : kSubcommands) {
    const auto r = run_cli(std::string(sub) + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub << ": " << r.output;
    EXPECT_NE(r.output.find(sub), std::string::npos) << r.output;
  }
}

TEST(Cli, UnknownSubcommandOrOptionExitsTwo) {
  auto r = run_cli("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("frobnicate"), std::string::npos) << r.output;
  r = run_cli("list --no-such-option");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--no-such-option"), std::string::npos) << r.output;
  r = run_cli("");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(Cli, ListShowsTheDefaultPreset) {
  const auto r = run_cli("list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("quick"), std::string::npos) << r.output;
}

TEST(Cli, GpuSubcommandWithoutGpuExitsTwoWithReason) {
  if (!decode_bench::device_unavailable_reason(0)) GTEST_SKIP() << "a CUDA device is present; this tests its absence";
  for (const char* sub : {"ceilings", "sweep"}) {
    const auto r = run_cli(sub);
    EXPECT_EQ(r.exit_code, 2) << sub << ": " << r.output;
    EXPECT_NE(r.output.find("no CUDA device found"), std::string::npos) << r.output;
  }
}

TEST(Cli, DeviceIndexOutOfRangeExitsTwo) {
  const auto r = run_cli("ceilings --device 999");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST(Cli, UnknownGoogleBenchmarkFlagExitsTwoNamingIt) {
  const auto r = run_cli("ceilings --benchmark_no_such_flag=1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("decode-bench: --benchmark_no_such_flag is not supported (supported: "), std::string::npos)
      << r.output;
}

TEST(CliGpu, CeilingsQuickWritesAValidResultsDocument) {
  DB_REQUIRE_GPU();
  const std::string path = ::testing::TempDir() + "decode_bench_ceilings.json";
  const auto r = run_cli("ceilings --quick --output " + path);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"dram_read", "dram_copy", "l2_read", "l1_shared", "fp32_fma", "fp16_fma", "fp16_tensor"})
    EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
  const auto doc = decode_bench::read_results(path);
  EXPECT_EQ(doc["meta"]["preset"], "ceilings");
  EXPECT_TRUE(doc["points"].empty());
  EXPECT_GT(doc["ceilings"]["dram_read"]["value"].get<double>(), 0);
  EXPECT_GT(doc["device"]["theoretical_dram_gbps"].get<double>(), 0);
  EXPECT_GT(doc["device"]["sm_clock_measured_khz"].get<double>(), 0);
}

}  // namespace
