#pragma once
// `decode-bench sweep --dry-run`: the plan's points, each with the device bytes it needs (the
// runner's device_bytes_needed, sweeps/memory_estimate.hpp without a runner), the largest point,
// and every point that cannot fit a device's memory: the GPU's total, a size given with
// --device-memory, or kAssumedDeviceMemory without a GPU. A sweep refuses a plan with such a
// point before running anything (sweeps/expand.cpp checks the same estimate against the GPU's
// memory), so the dry run reports it as the failure it would be, after listing everything.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "sweeps/plan.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

inline constexpr std::uint64_t kAssumedDeviceMemory = std::uint64_t{80} << 30;  // an 80 GB-class GPU

struct DeviceMemory {
  std::uint64_t bytes = kAssumedDeviceMemory;
  std::string source;  // how the size was chosen, printed after it
};

// --device-memory's text when given (throws ConfigErrors at "--device-memory" when it is not a
// size like 80GiB), else the GPU's total memory (`gpu_name` says which GPU), else the assumed size.
DeviceMemory dry_run_device_memory(const std::optional<std::string>& flag, std::optional<std::uint64_t> gpu_bytes,
                                   const std::string& gpu_name);

// Prints the listing ("INDEX\tID\tBYTES", "\tcannot fit" appended where it does not) and the
// summary to `out`; returns the number of points that cannot fit.
std::size_t print_dry_run(const Plan& plan, const Shard& shard, const RunnerRegistry& runners,
                          const DeviceMemory& memory, std::ostream& out);

}  // namespace decode_bench::sweeps
