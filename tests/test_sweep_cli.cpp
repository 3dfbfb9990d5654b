// `decode-bench sweep --dry-run / --list-axes`, `list` and `merge` as a user runs them: no GPU needed.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// The README's example plans points of up to 1 TiB: each is listed with its bytes, those over the
// memory flagged and counted, the largest named, and the run exits 2 (a sweep would refuse it).
TEST_F(SweepCli, DryRunFlagsThePointsThatCannotFitTheDeviceMemory) {
  const std::string example = "sweep --dry-run --preset paper --set T=pow2:12..21";
  const auto r = run_cli(example + " --device-memory 80GiB");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const std::string largest = "fragmentation/kernel=flash_decode/layout=contiguous/dtype=fp32/batch=64/T=2097152/fragmentation=8";
  EXPECT_NE(r.output.find("\t" + largest + "\t1.00 TiB\tcannot fit\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ndevice memory: 80 GiB (--device-memory)\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nlargest point: " + largest + " needs about 1.00 TiB\n"), std::string::npos) << r.output;
  const std::size_t flagged = count_lines_with(r.output, "\tcannot fit\n");
  EXPECT_GT(flagged, 0u);
  EXPECT_NE(r.output.find("\n" + std::to_string(flagged) + " points cannot fit 80 GiB"), std::string::npos) << r.output;
  // Every point fits 2 TiB; the GPU-less default is 80 GiB, said to be assumed.
  const auto big = run_cli(example + " --device-memory 2TiB");
  EXPECT_EQ(big.exit_code, 0) << big.output;
  EXPECT_EQ(big.output.find("cannot fit"), std::string::npos) << big.output;
  EXPECT_NE(big.output.find("\nevery point fits 2 TiB\n"), std::string::npos) << big.output;
  if (device_unavailable_reason(0)) {
    const auto assumed = run_cli(example);
    EXPECT_EQ(assumed.exit_code, 2) << assumed.output;
    EXPECT_NE(assumed.output.find("device memory: 80 GiB (assumed: no GPU found; --device-memory SIZE sets it)"),
              std::string::npos)
        << assumed.output;
    EXPECT_EQ(count_lines_with(assumed.output, "\tcannot fit\n"), flagged);
  }
  const auto bad = run_cli("sweep --dry-run --preset ci-smoke --device-memory lots");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--device-memory: 'lots' is not a size"), std::string::npos) << bad.output;
  const auto not_dry = run_cli("sweep --preset ci-smoke --device-memory 80GiB");
  EXPECT_EQ(not_dry.exit_code, 2) << not_dry.output;
  EXPECT_NE(not_dry.output.find("--device-memory requires --dry-run"), std::string::npos) << not_dry.output;
}

// One override that breaks heads_q % heads_kv: one line per distinct problem, for the selected
// experiments only (the default preset has such points in 15 experiments).
TEST_F(SweepCli, OneBadOverrideGivesOneMessage) {
  const auto r = run_cli("sweep --dry-run --set heads_kv=5 --experiment dtypes");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("(1 problem; nothing was run)"), std::string::npos) << r.output;
  EXPECT_EQ(count_lines_with(r.output, "--set heads_kv[0]: "), 1u) << r.output;
  EXPECT_NE(r.output.find("heads_q 32 is not a multiple of heads_kv 5 (3 points of experiment dtypes; the first: dtypes/"),
            std::string::npos)
      << r.output;
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

// The point ids a --dry-run lists, in order.
std::vector<std::string> dry_run_ids(const std::string& output) {
  std::vector<std::string> ids;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (const auto tab = line.find('\t'); tab != std::string::npos) ids.push_back(line.substr(tab + 1));
  return ids;
}

TEST_F(SweepCli, FilterSelectsPointsByIdWhilePlanning) {
  const auto all = run_cli("sweep --dry-run");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  const std::vector<std::string> ids = dry_run_ids(all.output);
  ASSERT_EQ(ids.size(), 69u);  // the quick preset
  std::vector<std::string> paged, contiguous;
  for (const auto& id : ids) (id.find("layout=paged") != std::string::npos ? paged : contiguous).push_back(id);
  ASSERT_EQ(paged.size(), 31u);
  ASSERT_EQ(contiguous.size(), 38u);

  const auto r = run_cli("sweep --dry-run --filter layout=paged");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("preset quick: 69 points; --filter 'layout=paged': 31; this run: 31 (shard 0/1)"),
            std::string::npos) << r.output;
  EXPECT_EQ(dry_run_ids(r.output), paged);
  // A leading '-' negates.
  const auto n = run_cli("sweep --dry-run --filter -layout=paged");
  EXPECT_EQ(n.exit_code, 0) << n.output;
  EXPECT_EQ(dry_run_ids(n.output), contiguous);
  // Google Benchmark's spelling is the same filter, wherever it is written.
  const auto b = run_cli("--benchmark_filter=layout=paged sweep --dry-run");
  EXPECT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(b.output.find("--benchmark_filter 'layout=paged': 31"), std::string::npos) << b.output;
  EXPECT_EQ(dry_run_ids(b.output), paged);
  // The shard divides the selected points: every other one of the 31.
  const auto s = run_cli("sweep --dry-run --filter 'layout=paged' --shard 1/2");
  EXPECT_EQ(s.exit_code, 0) << s.output;
  std::vector<std::string> odd;
  for (std::size_t k = 1; k < paged.size(); k += 2) odd.push_back(paged[k]);
  EXPECT_EQ(dry_run_ids(s.output), odd);
  // Anchors and alternation (POSIX extended): the two reference points and the two end-to-end ones.
  const auto e = run_cli("sweep --dry-run --filter '^(reference|end_to_end)/'");
  EXPECT_EQ(e.exit_code, 0) << e.output;
  const auto picked = dry_run_ids(e.output);
  ASSERT_EQ(picked.size(), 4u) << e.output;
  for (const auto& id : picked) EXPECT_TRUE(id.starts_with("reference/") || id.starts_with("end_to_end/")) << id;
}

TEST_F(SweepCli, ABadOrEmptyFilterExitsTwoNamingTheFlag) {
  const auto r = run_cli("sweep --dry-run --filter '('");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--filter: '(' is not a valid POSIX extended regular expression"), std::string::npos)
      << r.output;
  const auto b = run_cli("sweep --dry-run --benchmark_filter='('");
  EXPECT_EQ(b.exit_code, 2) << b.output;
  EXPECT_NE(b.output.find("--benchmark_filter: '(' is not a valid"), std::string::npos) << b.output;
  const auto none = run_cli("sweep --dry-run --filter no_such_point");
  EXPECT_EQ(none.exit_code, 2) << none.output;
  EXPECT_NE(none.output.find("--filter: 'no_such_point' selects none of the 69 points"), std::string::npos)
      << none.output;
  const auto both = run_cli("sweep --dry-run --filter paged --benchmark_filter=paged");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--filter and --benchmark_filter set the same thing"), std::string::npos) << both.output;
  EXPECT_NE(run_cli("sweep --help").output.find("POSIX extended"), std::string::npos);
}

TEST_F(SweepCli, UnsupportedBenchmarkFlagsExitTwoNamingTheFlag) {
  for (const char* flag : {"--benchmark_color=false", "--benchmark_perf_counters=CYCLES", "--benchmark_list_tests=true"}) {
    const auto r = run_cli(std::string("sweep --dry-run ") + flag);
    EXPECT_EQ(r.exit_code, 2) << flag << ": " << r.output;
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    EXPECT_NE(r.output.find("decode-bench: " + name + " is not supported (supported: --benchmark_filter, "),
              std::string::npos)
        << r.output;
  }
}

TEST_F(SweepCli, BenchmarkFlagsOnASubcommandThatTimesNothingAreRefused) {
  for (const char* sub : {"list", "compare a.json b.json", "merge a.json -o b.json", "plot a.json", "capacity"}) {
    const auto r = run_cli(std::string(sub) + " --benchmark_repetitions=3");
    EXPECT_EQ(r.exit_code, 2) << sub << ": " << r.output;
    const std::string name = std::string(sub).substr(0, std::string(sub).find(' '));
    EXPECT_NE(r.output.find("--benchmark_repetitions is not supported by '" + name + "', which times nothing"),
              std::string::npos)
        << r.output;
  }
  EXPECT_NE(run_cli("list --benchmark_filter=x").output.find("--benchmark_filter is not supported by 'list'"),
            std::string::npos);
}

TEST_F(SweepCli, BadTimingFlagsExitTwoNamingFlagAndValue) {
  const struct {
    const char* args;
    const char* says;
  } cases[] = {
      {"--repetitions 0", "decode-bench: --repetitions 0: must be an integer >= 1"},
      {"--repetitions many", "decode-bench: --repetitions many: not an integer"},
      {"--benchmark_repetitions=0", "decode-bench: --benchmark_repetitions=0: must be"},
      {"--min-time -1", "decode-bench: --min-time -1: must be >= 0"},
      {"--benchmark_min_time=10x", "decode-bench: --benchmark_min_time=10x: an iteration count is not supported"},
      {"--warmup 0", "decode-bench: --warmup 0: must be an integer >= 1"},
      {"--max-cv 0", "decode-bench: --max-cv 0: must be > 0"},
      {"--max-repetitions 2", "decode-bench: --max-repetitions 2: must be >= the repetitions per point (5)"},
      {"--point-time-limit 0", "decode-bench: --point-time-limit 0: must be > 0 seconds"},
      {"--repetitions 3 --benchmark_repetitions=3", "--repetitions and --benchmark_repetitions set the same thing"},
      {"--min-time 1 --benchmark_min_time=1", "--min-time and --benchmark_min_time set the same thing"},
  };
  for (const auto& c : cases) {
    const auto r = run_cli(std::string("sweep --dry-run ") + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << ": " << r.output;
    // ceilings checks them before looking for a GPU.
    const auto g = run_cli(std::string("ceilings ") + c.args);
    EXPECT_EQ(g.exit_code, 2) << c.args << ": " << g.output;
    EXPECT_NE(g.output.find(c.says), std::string::npos) << c.args << ": " << g.output;
  }
  const auto f = run_cli("ceilings --filter '('");
  EXPECT_EQ(f.exit_code, 2) << f.output;
  EXPECT_NE(f.output.find("--filter '(' is not a valid POSIX extended regular expression"), std::string::npos)
      << f.output;
}

// A run records how it selected and timed its points (capacity points run without a GPU).
TEST_F(SweepCli, TheResultsRecordTheFilterAndTheTimingFlags) {
  const fs::path out = dir / "capacity.json";
  const auto r = run_cli("sweep --experiment capacity --filter layout=paged --repetitions 9 --max-cv 0.02 "
                         "--benchmark_min_time=0.004s --warmup 3 --point-time-limit 30 --output " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json doc = json::parse(std::ifstream(out));
  EXPECT_NO_THROW(validate_results(doc));
  EXPECT_EQ(doc["points"].size(), 2u);
  EXPECT_EQ(doc["meta"]["sweep"]["filter"], "layout=paged");
  EXPECT_EQ(doc["meta"]["sweep"]["total_points"], 69);
  EXPECT_EQ(doc["meta"]["sweep"]["selected_points"], 2);
  const json& t = doc["meta"]["timing"];
  EXPECT_EQ(t["repetitions"], 9);
  EXPECT_EQ(t["max_repetitions"], 90);
  EXPECT_EQ(t["noise_cv"], 0.02);
  EXPECT_EQ(t["min_rep_time_ms"], 4.0);
  EXPECT_EQ(t["warmup"], 3);
  EXPECT_EQ(t["point_time_limit_s"], 30.0);
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

// Both files hold the same points: refused (exit 2, nothing written) naming both files and the ids,
// unless --on-duplicate first|last; any other value is refused naming it.
TEST_F(SweepCli, MergeRefusesDuplicateIdsUnlessOnDuplicateSaysWhichToKeep) {
  json preset = testing::one_experiment({{"T", {1, 2, 3}}});
  RunnerRegistry none;
  SweepOptions o;
  o.output = dir / "a.json";
  run_sweep(testing::plan_of(preset), none, host_default_hooks(), o);
  json b = read_results(dir / "a.json");
  b["points"][1]["reason"] = "from b";  // tells the kept point's file
  write_results(dir / "b.json", b);
  const std::string files = (dir / "a.json").string() + " " + (dir / "b.json").string();
  const auto r = run_cli("merge " + files + " -o " + (dir / "m.json").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("3 point ids are in more than one file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find((dir / "b.json").string() + " repeats 3 points of " + (dir / "a.json").string() + ": " +
                          b["points"][0]["id"].get<std::string>() + ", "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("--on-duplicate first"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "m.json"));

  const auto first = run_cli("merge " + files + " -o " + (dir / "first.json").string() + " --on-duplicate first");
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("3 points -> " + (dir / "first.json").string() +
                              " (3 duplicate points dropped, --on-duplicate first)"),
            std::string::npos)
      << first.output;
  const json f = read_results(dir / "first.json");
  ASSERT_EQ(f["points"].size(), 3u);
  EXPECT_NE(f["points"][1]["reason"], "from b");
  EXPECT_EQ(f["meta"]["merge"]["on_duplicate"], "first");

  const auto last = run_cli("merge " + files + " -o " + (dir / "last.json").string() + " --on-duplicate last");
  EXPECT_EQ(last.exit_code, 0) << last.output;
  const json l = read_results(dir / "last.json");
  ASSERT_EQ(l["points"].size(), 3u);
  EXPECT_EQ(l["points"][1]["reason"], "from b");
  EXPECT_EQ(l["meta"]["merge"]["on_duplicate"], "last");
  EXPECT_EQ(l["meta"]["merge"]["dropped_points"], 3);

  for (const auto& [arg, shown] : {std::pair<const char*, const char*>{"better", "better"}, {"''", ""}}) {
    const auto m = run_cli("merge " + files + " -o " + (dir / "bad.json").string() + " --on-duplicate " + arg);
    EXPECT_EQ(m.exit_code, 2) << m.output;
    EXPECT_NE(m.output.find("--on-duplicate '" + std::string(shown) + "': expected first or last"), std::string::npos)
        << m.output;
    EXPECT_FALSE(fs::exists(dir / "bad.json"));
  }
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
