#include "harness/read_floor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace decode_bench {

std::vector<std::uint64_t> read_floor_sizes(std::uint64_t max_bytes) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20, kMost = std::uint64_t{1} << 30;
  std::vector<std::uint64_t> sizes;
  const std::uint64_t top = std::min(max_bytes, kMost);
  for (std::uint64_t b = kMiB; b <= top; b *= 2) sizes.push_back(b);
  if (!sizes.empty() && sizes.back() != top) sizes.push_back(top);
  return sizes;
}

std::optional<double> read_floor_us(std::span<const ReadFloorSample> samples, double bytes) {
  if (!(bytes > 0)) return std::nullopt;
  std::vector<ReadFloorSample> s(samples.begin(), samples.end());
  std::sort(s.begin(), s.end(), [](const auto& a, const auto& b) { return a.bytes < b.bytes; });
  s.erase(std::unique(s.begin(), s.end(), [](const auto& a, const auto& b) { return a.bytes == b.bytes; }), s.end());
  if (s.size() < 2) return std::nullopt;
  // The segment whose span holds `bytes`, or the end segment nearest to it.
  std::size_t hi = 1;
  while (hi + 1 < s.size() && s[hi].bytes < bytes) ++hi;
  const ReadFloorSample& a = s[hi - 1];
  const ReadFloorSample& b = s[hi];
  const double t = a.median_us + (b.median_us - a.median_us) * (bytes - a.bytes) / (b.bytes - a.bytes);
  return std::max(t, 0.0);
}

std::vector<ReadFloorSample> read_floor_samples(const nlohmann::json& ceilings) {
  std::vector<ReadFloorSample> out;
  if (!ceilings.is_object() || !ceilings.contains("dram_read") || !ceilings["dram_read"].is_object() ||
      !ceilings["dram_read"].contains("floor"))
    return out;
  const nlohmann::json& floor = ceilings["dram_read"]["floor"];
  const std::string path = "ceilings.dram_read.floor";
  if (!floor.is_object() || !floor.contains("samples") || !floor["samples"].is_array())
    throw std::invalid_argument(path + ": expected an object with a 'samples' array");
  for (std::size_t i = 0; i < floor["samples"].size(); ++i) {
    const nlohmann::json& e = floor["samples"][i];
    const std::string at = path + ".samples[" + std::to_string(i) + "]";
    for (const char* key : {"bytes", "median_us"})
      if (!e.is_object() || !e.contains(key) || !e[key].is_number() || !(e[key].get<double>() > 0) ||
          !std::isfinite(e[key].get<double>()))
        throw std::invalid_argument(at + "." + key + ": expected a positive number");
    out.push_back({e["bytes"].get<double>(), e["median_us"].get<double>()});
  }
  return out;
}

nlohmann::json achieved_rates(double bytes, double flops, double median_us, const nlohmann::json& ceilings,
                              TimingMode mode) {
  const double gbps = bytes / (median_us * 1e3);
  nlohmann::json achieved = {{"gbps", gbps}, {"tflops", flops / (median_us * 1e6)}};
  if (ceilings.contains("dram_read")) achieved["fraction_of_dram_read"] = gbps / ceilings["dram_read"].value("value", 1.0);
  if (mode == TimingMode::cold) {
    const auto samples = read_floor_samples(ceilings);
    if (const auto floor = read_floor_us(samples, bytes); floor && *floor > 0) {
      achieved["read_floor_us"] = *floor;
      achieved["fraction_of_read_floor"] = *floor / median_us;
    }
  }
  return achieved;
}

}  // namespace decode_bench
