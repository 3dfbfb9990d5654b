#pragma once
// The read floor: how long the ceiling's DRAM-read kernels take to read exactly B bytes once,
// timed the way the sweep times a point (cold: L2 flushed before every launch, CUDA events around
// the launch, median of the repetitions). The dram_read ceiling is a 2 GiB hot read that amortises
// the launch, the first load's latency and the last wave's drain; a decode point of 32 MiB pays
// all three. The floor at a point's bytes is what any kernel that must read those bytes can hope
// for under the same timing, so `achieved.fraction_of_read_floor` (floor / median) separates what
// a kernel loses from what its size costs. Measured once per run at a few sizes
// (ceilings.dram_read.floor) and interpolated per point. Host-only: the arithmetic is tested in CI.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/timing_options.hpp"

namespace decode_bench {

struct ReadFloorSample {
  double bytes = 0;      // read once
  double median_us = 0;  // the best variant's cold median
};

// The sizes the floor is measured at: powers of two from 1 MiB up to max_bytes (at most 1 GiB),
// plus max_bytes itself when it is not one. Empty when max_bytes < 1 MiB.
std::vector<std::uint64_t> read_floor_sizes(std::uint64_t max_bytes);

// The floor at `bytes`: linear in bytes between the two samples around it (above a few MiB the
// floor is a launch-and-latency constant plus bytes over the DRAM rate, so a line is close), and
// along the nearest end segment outside the samples, never below zero. nullopt with fewer than two
// samples of distinct sizes or bytes <= 0. Samples may come in any order.
std::optional<double> read_floor_us(std::span<const ReadFloorSample> samples, double bytes);

// ceilings.dram_read.floor: {mode: "cold", statistic: "median_us", samples: [{bytes, median_us,
// kernel, config}]}. Reads the samples back; throws std::invalid_argument naming the path of a
// malformed entry. An absent floor is an empty vector.
std::vector<ReadFloorSample> read_floor_samples(const nlohmann::json& ceilings);

// A point's `achieved` block: gbps, tflops, fraction_of_dram_read (when the ceiling exists), and,
// for cold-timed points when the run measured a floor, read_floor_us and fraction_of_read_floor.
nlohmann::json achieved_rates(double bytes, double flops, double median_us, const nlohmann::json& ceilings,
                              TimingMode mode);

}  // namespace decode_bench
