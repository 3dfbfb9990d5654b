// `sweep --dry-run`'s memory listing (sweeps/dry_run.hpp): each point's device bytes as its runner
// counts them, the largest point, and the points over the device memory flagged and counted.
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "pools/capacity.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/dry_run.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// fp32, one head, d = 128: 1 KiB of K+V per token, plus 1 KiB of q and o.
std::uint64_t need_at(std::uint64_t T) { return T * 1024 + 1024; }

const Plan& three_sizes() {
  static const Plan plan =
      testing::plan_of(testing::one_experiment({{"T", {{"pow2", {19, 21}}}}}, {{"dtype", "fp32"}}));
  return plan;
}

TEST(SweepDryRun, ListsEachPointsBytesAndFlagsThoseOverTheMemory) {
  const RunnerRegistry none;  // no runner: the estimate of sweeps/memory_estimate.hpp
  std::ostringstream out;
  const std::size_t cannot_fit = print_dry_run(three_sizes(), Shard{}, none, {1ull << 30, "test"}, out);
  EXPECT_EQ(cannot_fit, 2u);  // 1 GiB + 1 KiB and 2 GiB + 1 KiB
  const std::string id = "e/kernel=flash_decode/layout=contiguous/dtype=fp32/T=";
  EXPECT_EQ(out.str(), "preset t: 3 points; this run: 3 (shard 0/1)\n"
                       "0\t" + id + "524288\t" + format_bytes(need_at(1 << 19)) + "\n"
                       "1\t" + id + "1048576\t" + format_bytes(need_at(1 << 20)) + "\tcannot fit\n"
                       "2\t" + id + "2097152\t" + format_bytes(need_at(1 << 21)) + "\tcannot fit\n"
                       "device memory: 1 GiB (test)\n"
                       "largest point: " + id + "2097152 needs about " + format_bytes(need_at(1 << 21)) + "\n"
                       "2 points cannot fit 1 GiB (marked \"cannot fit\"): a sweep on such a device refuses this "
                       "plan and runs nothing; narrow the axes or leave out experiments with --experiment\n");

  // Exactly the largest need fits: nothing flagged.
  std::ostringstream fits;
  EXPECT_EQ(print_dry_run(three_sizes(), Shard{}, none, {need_at(1 << 21), "test"}, fits), 0u);
  EXPECT_EQ(fits.str().find("cannot fit"), std::string::npos) << fits.str();
  EXPECT_NE(fits.str().find("\nevery point fits "), std::string::npos) << fits.str();
}

// A runner's own count wins over the estimate (the driver compares the same number with free memory).
TEST(SweepDryRun, TakesTheRunnersCount) {
  struct Small : PointRunner {
    std::string name() const override { return "flash_decode"; }
    std::uint64_t device_bytes_needed(const Point& p) const override { return p.parameters["T"].get<std::uint64_t>() / 1024; }
    json run(const Point&, RunContext&) override { return {}; }
  };
  RunnerRegistry registry;
  registry.add(std::make_unique<Small>());
  std::ostringstream out;
  EXPECT_EQ(print_dry_run(three_sizes(), Shard{}, registry, {1ull << 30, "test"}, out), 0u);
  EXPECT_NE(out.str().find("T=2097152\t2 KiB\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("needs about 2 KiB\n"), std::string::npos) << out.str();
}

TEST(SweepDryRun, DeviceMemoryFromTheFlagTheGpuOrAssumed) {
  const DeviceMemory flag = dry_run_device_memory(std::string("141GB"), std::uint64_t{80} << 30, "GPU A");
  EXPECT_EQ(flag.bytes, 141000000000u);
  EXPECT_EQ(flag.source, "--device-memory");
  const DeviceMemory gpu = dry_run_device_memory(std::nullopt, std::uint64_t{85045231616}, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.bytes, 85045231616u);
  EXPECT_EQ(gpu.source, "the total of NVIDIA H100 80GB HBM3");
  const DeviceMemory assumed = dry_run_device_memory(std::nullopt, std::nullopt, "");
  EXPECT_EQ(assumed.bytes, std::uint64_t{80} << 30);
  EXPECT_NE(assumed.source.find("assumed: no GPU found"), std::string::npos) << assumed.source;
  for (const char* bad : {"lots", "0", "", "80 GiB", "-1GiB"}) {
    try {
      dry_run_device_memory(std::string(bad), std::nullopt, "");
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const ConfigErrors& e) {
      ASSERT_EQ(e.errors().size(), 1u);
      EXPECT_EQ(e.errors()[0].path, "--device-memory");
      EXPECT_NE(e.errors()[0].message.find("'" + std::string(bad) + "'"), std::string::npos) << e.errors()[0].message;
    }
  }
}

}  // namespace
}  // namespace decode_bench::sweeps
