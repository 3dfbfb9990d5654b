#include "sweeps/dry_run.hpp"

#include "pools/capacity.hpp"
#include "sweeps/config_error.hpp"
#include "sweeps/memory_estimate.hpp"

namespace decode_bench::sweeps {

DeviceMemory dry_run_device_memory(const std::optional<std::string>& flag, std::optional<std::uint64_t> gpu_bytes,
                                   const std::string& gpu_name) {
  if (flag) {
    const auto bytes = parse_byte_size(*flag);
    if (!bytes || *bytes == 0)
      throw ConfigErrors("--device-memory", "'" + *flag + "' is not a size like 80GiB, 141GB or 85899345920");
    return {*bytes, "--device-memory"};
  }
  if (gpu_bytes) return {*gpu_bytes, "the total of " + (gpu_name.empty() ? std::string("this GPU") : gpu_name)};
  return {kAssumedDeviceMemory, "assumed: no GPU found; --device-memory SIZE sets it"};
}

std::size_t print_dry_run(const Plan& plan, const Shard& shard, const RunnerRegistry& runners,
                          const DeviceMemory& memory, std::ostream& out) {
  out << "preset " << plan.preset.name << ": " << plan.total_points << " points; ";
  if (!plan.filter.empty()) out << plan.filter_flag << " '" << plan.filter << "': " << plan.selected_points << "; ";
  out << "this run: " << plan.points.size() << " (shard " << shard.text() << ")\n";
  const Point* largest = nullptr;
  std::uint64_t largest_bytes = 0;
  std::size_t cannot_fit = 0;
  for (const Point& p : plan.points) {
    const PointRunner* runner = runners.find(p.parameters.value("kernel", ""));
    const std::uint64_t need = runner ? runner->device_bytes_needed(p) : estimate_device_bytes(p.parameters);
    out << p.index << "\t" << p.id << "\t" << format_bytes(need);
    if (need > memory.bytes) {
      out << "\tcannot fit";
      ++cannot_fit;
    }
    out << "\n";
    if (!largest || need > largest_bytes) largest = &p, largest_bytes = need;
  }
  out << "device memory: " << format_bytes(memory.bytes) << " (" << memory.source << ")\n";
  if (largest) out << "largest point: " << largest->id << " needs about " << format_bytes(largest_bytes) << "\n";
  if (cannot_fit > 0)
    out << cannot_fit << " point" << (cannot_fit == 1 ? "" : "s") << " cannot fit " << format_bytes(memory.bytes)
        << " (marked \"cannot fit\"): a sweep on such a device refuses this plan and runs nothing; narrow the axes "
           "or leave out experiments with --experiment\n";
  else
    out << "every point fits " << format_bytes(memory.bytes) << "\n";
  return cannot_fit;
}

}  // namespace decode_bench::sweeps
