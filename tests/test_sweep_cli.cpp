// `decode-bench sweep --dry-run / --list-axes`, `list` and `merge` as a user runs them: no GPU needed.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/cli_runner.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include "harness/device_query.hpp"
#include "harness/results_schema.hpp"
#include "sweep_test_support.hpp"
#include "tests/gpu_test_support.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/driver.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

using ::decode_bench::testing::CliResult;
inline CliResult run_cli(const std::string& args) { return ::decode_bench::testing::run_decode_bench(args); }

std::size_t count_lines_with(const std::string& text, const std::string& needle) {
  std::size_t n = 0, pos = 0;
  while ((pos = text.find(needle, pos)) != std::string::npos) ++n, ++pos;
  return n;
}

class SweepCli : public ::testing::Test {
 protected:
  fs::path dir = fs::temp_directory_path() /
                 ("decode_bench_cli_" + std::to_string(::getpid()) + "_" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { fs::create_directories(dir); }
  void TearDown() override { fs::remove_all(dir); }
};

TEST_F(SweepCli, DryRunListsThePointsWithoutAGpu) {
  const auto r = run_cli("sweep --dry-run --preset ci-smoke");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("preset ci-smoke: 6 points"), std::string::npos) << r.output;
  EXPECT_EQ(count_lines_with(r.output, "\tkernels/"), 2u) << r.output;
  const auto s = run_cli("sweep --dry-run --preset ci-smoke --shard 1/2 --set T=100,200 --experiment kernels");
  EXPECT_EQ(s.exit_code, 0) << s.output;
  // kernels: 2 kernels x 2 T = 4 points; shard 1/2 takes the 2nd and 4th.
  EXPECT_EQ(count_lines_with(s.output, "\tkernels/"), 2u) << s.output;
  EXPECT_NE(s.output.find("kernel=baseline/layout=contiguous/dtype=fp16/heads_q=8/heads_kv=8/T=200"), std::string::npos)
      << s.output;
}

TEST_F(SweepCli, InvalidConfigurationExitsTwoListingEveryProblem) {
  const fs::path bad = dir / "bad.json";
  std::ofstream(bad) << R"({"schema_version": 1, "name": "bad", "experiments": [
      {"name": "x", "axes": {"page_size": 0, "T": [0, 16], "heads_q": 6, "heads_kv": 4}}]})";
  const auto r = run_cli("sweep --dry-run --preset " + bad.string() + " --set dtype=fp8 --shard 0/1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("nothing was run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("experiments[0].axes.page_size: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("experiments[0].axes.T[0]: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--set dtype[0]: "), std::string::npos) << r.output;
  const auto s = run_cli("sweep --dry-run --preset nosuch");
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_NE(s.output.find("quick"), std::string::npos) << s.output;  // names the embedded presets
  EXPECT_EQ(run_cli("sweep --dry-run --shard 2/2").exit_code, 2);
  EXPECT_EQ(run_cli("sweep --dry-run --timing lukewarm").exit_code, 2);
}

TEST_F(SweepCli, BadDeviceListsExitTwoNamingDevices) {
  // A device twice is refused whatever the machine has (parsing comes before any GPU is touched).
  const auto r = run_cli("sweep --preset ci-smoke --devices 0,0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--devices: device 0 is listed twice"), std::string::npos) << r.output;
  const auto s = run_cli("sweep --preset ci-smoke --devices 0,zero");
  EXPECT_EQ(s.exit_code, 2) << s.output;
  EXPECT_NE(s.output.find("'zero' is not a device index"), std::string::npos) << s.output;
  EXPECT_EQ(run_cli("sweep --preset ci-smoke --devices 0 --device 0").exit_code, 2);  // one or the other
}

TEST_F(SweepCli, ListAxesShowsTheWholeTable) {
  const auto r = run_cli("sweep --list-axes");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const AxisDef& a : axis_table()) EXPECT_NE(r.output.find("  " + std::string(a.name) + " "), std::string::npos) << a.name;
}

TEST_F(SweepCli, ListShowsPointCounts) {
  const auto r = run_cli("list");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ci-smoke (6 points)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  - kernels (2)"), std::string::npos) << r.output;
  for (const char* p : {"quick", "paper", "h100"}) EXPECT_NE(r.output.find(std::string(p) + " ("), std::string::npos) << p;
}

TEST_F(SweepCli, MergeJoinsShardsAndRefusesMixedDevices) {
  json preset = testing::one_experiment({{"T", {1, 2, 3}}});
  RunnerRegistry none;  // every point is skipped (no runner), which is enough for merging
  for (std::size_t i = 0; i < 2; ++i) {
    SweepOptions o;
    o.output = dir / std::string("s").append(std::to_string(i)).append(".json");
    o.shard = {i, 2};
    run_sweep(testing::plan_of(preset, {}, {}, o.shard), none, host_default_hooks(), o);
  }
  const auto r = run_cli("merge " + (dir / "s0.json").string() + " " + (dir / "s1.json").string() + " -o " +
                         (dir / "m.json").string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const json merged = read_results(dir / "m.json");
  ASSERT_EQ(merged["points"].size(), 3u);
  EXPECT_EQ(merged["points"][1]["parameters"]["T"], 2);

  json other = read_results(dir / "s1.json");
  other["device"]["name"] = "Other GPU";
  write_results(dir / "s1.json", other);
  const auto m = run_cli("merge " + (dir / "s0.json").string() + " " + (dir / "s1.json").string() + " -o " +
                         (dir / "m2.json").string());
  EXPECT_EQ(m.exit_code, 2) << m.output;
  EXPECT_NE(m.output.find("--allow-mixed-devices"), std::string::npos) << m.output;
  EXPECT_FALSE(fs::exists(dir / "m2.json"));
  EXPECT_EQ(run_cli("merge " + (dir / "s0.json").string() + " " + (dir / "s1.json").string() + " -o " +
                    (dir / "m2.json").string() + " --allow-mixed-devices")
                .exit_code,
            0);
}

// Capacity needs no GPU: a sweep of only capacity points runs on the host simulation (on a GPU
// machine, on real device arenas checked against it) and writes a valid results file.
TEST_F(SweepCli, CapacityOnlySweepRunsWithoutAGpu) {
  const fs::path out = dir / "capacity.json";
  const auto r = run_cli("sweep --preset paper --experiment capacity --output " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = json::parse(std::ifstream(out));
  EXPECT_NO_THROW(validate_results(doc));
  ASSERT_EQ(doc["points"].size(), 8u);
  for (const json& p : doc["points"]) {
    EXPECT_EQ(p["status"], "ok") << p.dump();
    EXPECT_EQ(p["capacity"]["sequences"], p["parameters"]["layout"] == "paged" ? 8192 : 8192 / p["parameters"]["fragmentation"].get<int>());
  }
}

TEST_F(SweepCli, ASweepOfGpuKernelsWithoutAGpuNamesTheReasonAndTheWayOut) {
  if (!device_unavailable_reason(0)) GTEST_SKIP() << "a CUDA device is present; this tests its absence";
  const auto r = run_cli("sweep --preset paper --output " + (dir / "x.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no CUDA device found"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--experiment capacity"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "x.json"));
}

// The host fallback is for machines without any GPU: on a GPU machine a bad --device index is
// an error even for a plan that could run on the host.
// A GPU test (its suite named *Gpu*: the gpu tier of docs/testing.md) on the same fixture.
class SweepCliGpu : public SweepCli {};

TEST_F(SweepCliGpu, CapacityOnlySweepWithABadDeviceIndexOnAGpuMachineExitsTwo) {
  DB_REQUIRE_GPU();
  const auto r =
      run_cli("sweep --preset paper --experiment capacity --device 999 --output " + (dir / "x.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(fs::exists(dir / "x.json"));
}

}  // namespace
}  // namespace decode_bench::sweeps
