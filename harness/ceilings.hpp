#pragma once
// Measured machine ceilings: the best bandwidth and FLOP rates this GPU reaches with simple
// kernels, the roofline's real roof (datasheet numbers are not reachable). Written into every
// results document's `ceilings` object and printed by `decode-bench ceilings`.
//   dram_read, dram_copy (read + write counted), l2_read, l1_shared   unit "GB/s" (decimal)
//   fp32_fma, fp16_fma (half2), fp16_tensor (mma.sync m16n8k16)        unit "TFLOP/s"
//   fp16_tensor_wgmma, bf16_tensor_wgmma, fp8_e4m3_tensor_wgmma        unit "TFLOP/s"
//     (Hopper's warpgroup MMA, sm_90a only: elsewhere their variants are refused with the reason)
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/name_filter.hpp"
#include "harness/timing_flags.hpp"
#include "harness/timing_options.hpp"

namespace decode_bench {

struct CeilingOptions {
  bool quick = false;          // one or two variants per ceiling, 3 repetitions, 1 GiB DRAM buffer
  // Timing flags (--repetitions, --min-time, ...; harness/timing_flags.hpp) applied over the
  // ceilings' own timing and over the read floor's.
  std::vector<GivenFlag> timing_flags;
  // Variants (and read-floor variants) whose names it does not select are not timed.
  std::optional<NameFilter> filter;
  std::ostream* progress = nullptr;  // a progress line per variant (ProgressReporter) when set
  bool read_floor = true;      // also the cold read floor at sizes 1 MiB .. 1 GiB (harness/read_floor.hpp)
};

// How every ceiling variant is timed: hot, events around one launch (the variants are long),
// 5 repetitions of at least 5 ms (quick: 3 of 2 ms), then `flags` applied. Throws
// std::invalid_argument naming a bad flag (harness/timing_flags.hpp).
TimingOptions ceiling_timing_options(bool quick, std::span<const GivenFlag> flags);
// How the read floor is timed: the sweep's defaults (cold, as a point), then `flags` applied.
TimingOptions read_floor_timing_options(std::span<const GivenFlag> flags);

// One timed variant (or its failure), input to best_ceilings().
struct CeilingMeasurement {
  std::string ceiling;  // e.g. "dram_read"
  std::string kernel;
  std::vector<std::pair<std::string, long long>> config;
  double work_per_launch = 0;  // bytes or FLOPs
  double min_us = 0, median_us = 0, cv = 0;
  std::string error;           // non-empty: the variant failed and is not a candidate
};

inline constexpr std::string_view kCeilingNames[] = {
    "dram_read",   "dram_copy",         "l2_read",           "l1_shared",            "fp32_fma", "fp16_fma",
    "fp16_tensor", "fp16_tensor_wgmma", "bf16_tensor_wgmma", "fp8_e4m3_tensor_wgmma"};

// "GB/s" for the memory ceilings, "TFLOP/s" for the compute ones; throws std::invalid_argument
// for an unknown name.
std::string_view ceiling_unit(std::string_view ceiling);
// work / time in the ceiling's unit: bytes/us/1e3 = GB/s, FLOP/us/1e6 = TFLOP/s.
double ceiling_rate(std::string_view ceiling, double work, double time_us);

// Per ceiling, the variant with the highest rate at its best repetition (min_us; each
// repetition is already a mean over many launches): {value, unit, kernel, config, value_at_median,
// min_us, median_us, cv, work_per_launch, variants: [{kernel, config, value | error}]}.
// Ceilings with no successful variant are left out.
nlohmann::json best_ceilings(const std::vector<CeilingMeasurement>& measurements);

// Allocates the buffers, times every variant the filter selects in hot mode and returns
// best_ceilings(), with the read floor as dram_read.floor when options.read_floor
// (harness/read_floor.hpp). Throws std::invalid_argument for timing flags that are not valid
// (check them first with ceiling_timing_options) or for a filter that selects no variant (a
// message without the flag's name), std::runtime_error for an unusable device, CudaError for a
// sticky CUDA error (the context is gone) or a failed allocation.
nlohmann::json measure_ceilings(int device, const CeilingOptions& options = {});

// The read floor alone at the given sizes (bytes, any order; each in (0, a quarter of the device
// memory], else std::invalid_argument): the `floor` object measure_ceilings records, for sizes of
// one's choosing (build/kernels/tuning/decode-read-floor). Throws as measure_ceilings does.
nlohmann::json measure_read_floor(int device, std::span<const std::uint64_t> sizes);

}  // namespace decode_bench

namespace decode_bench {

// A fixed-width table of a `ceilings` object for the terminal: ceiling, value, unit, the kernel
// and its configuration; dram_read also as a percentage of device.theoretical_dram_gbps when
// `device` has it, and its read floor, a line per size, when measured.
std::string format_ceilings_table(const nlohmann::json& ceilings, const nlohmann::json& device);

}  // namespace decode_bench
