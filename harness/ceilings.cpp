#include "harness/ceilings.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "harness/ceiling_kernels.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/l2_flush.hpp"
#include "harness/nvtx.hpp"
#include "harness/progress.hpp"
#include "harness/read_floor.hpp"
#include "harness/timing.hpp"
#include "harness/timing_result.hpp"

namespace decode_bench {
namespace {

bool is_bandwidth(std::string_view ceiling) { return ceiling_unit(ceiling) == "GB/s"; }

nlohmann::json config_json(const std::vector<std::pair<std::string, long long>>& config) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : config) j[key] = value;
  return j;
}

std::string variant_name(const CeilingVariant& v) {
  std::string name = "ceilings/" + v.ceiling + "/" + v.kernel;
  for (const auto& [key, value] : v.config) name += "/" + key + ":" + std::to_string(value);
  return name;
}

// Device memory for the variants: [read buffer | copy destination], plus the sink.
class Workspace {
 public:
  Workspace(std::size_t half_bytes, std::size_t l2_bytes) {
    DB_CUDA_CHECK(cudaMalloc(&memory_, 2 * half_bytes));
    DB_CUDA_CHECK(cudaMalloc(&sink_, sizeof(unsigned)));
    DB_CUDA_CHECK(cudaMemset(memory_, 0, 2 * half_bytes));
    DB_CUDA_CHECK(cudaDeviceSynchronize());
    view.buffer = memory_;
    view.copy_destination = static_cast<char*>(memory_) + half_bytes;
    view.buffer_bytes = half_bytes;
    view.l2_working_set_bytes = l2_bytes / 4 / 65536 * 65536;  // well inside L2
    view.sink = sink_;
  }
  ~Workspace() {
    cudaFree(memory_);
    cudaFree(sink_);
  }
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  CeilingWorkspace view;

 private:
  void* memory_ = nullptr;
  unsigned* sink_ = nullptr;
};

// The read floor (harness/read_floor.hpp): every dram_read variant over the first B bytes of the
// buffer for each B of `sizes` (at most its length), cold, as the sweep times a point; per size the
// variant of the lowest median.
nlohmann::json time_read_floor(const CeilingWorkspace& whole, std::span<const std::uint64_t> sizes, int sm_count,
                               bool quick, const TimingOptions& timing, const std::optional<NameFilter>& filter,
                               L2Flusher& flusher, cudaStream_t stream) {
  nlohmann::json samples = nlohmann::json::array();
  for (const std::uint64_t bytes : sizes) {
    CeilingWorkspace view = whole;
    view.buffer_bytes = bytes;
    std::optional<CeilingVariant> best;
    double best_us = 0;
    for (CeilingVariant& v : make_ceiling_variants(view, sm_count, quick)) {
      if (v.ceiling != "dram_read") continue;
      const std::string name = "ceilings/dram_read/floor/" + variant_name(v).substr(std::string("ceilings/dram_read/").size());
      if (filter && !filter->selects(name)) continue;
      const TimingResult r = time_launches(name, v.launch, timing, flusher, stream);
      if (r.sticky_error) throw std::runtime_error("sticky CUDA error, the context is unusable: " + name + ": " + r.error);
      if (!r.ok()) continue;
      if (!best || r.stats.median < best_us) {
        best_us = r.stats.median;
        best = std::move(v);
      }
    }
    if (best)
      samples.push_back({{"bytes", bytes}, {"median_us", best_us}, {"kernel", best->kernel}, {"config", config_json(best->config)}});
  }
  return {{"mode", "cold"},
          {"statistic", "median_us"},
          {"options", to_json(timing)},
          {"samples", std::move(samples)}};
}

}  // namespace

TimingOptions ceiling_timing_options(bool quick, std::span<const GivenFlag> flags) {
  TimingOptions timing;
  timing.mode = TimingMode::hot;  // ceilings are steady-state rates; every variant runs >= ~100 us
  timing.repetitions = quick ? 3 : 5;
  timing.min_rep_time_ms = quick ? 2 : 5;
  timing.graph_threshold_us = 0;  // events: the variants are long, and the graph adds nothing
  return apply_timing_flags(timing, flags);
}

TimingOptions read_floor_timing_options(std::span<const GivenFlag> flags) {
  TimingOptions timing;  // the sweep's defaults: cold, events around one launch, median
  timing.mode = TimingMode::cold;
  return apply_timing_flags(timing, flags);
}

std::string_view ceiling_unit(std::string_view ceiling) {
  if (ceiling == "dram_read" || ceiling == "dram_copy" || ceiling == "l2_read" || ceiling == "l1_shared")
    return "GB/s";
  if (ceiling == "fp32_fma" || ceiling == "fp16_fma" || ceiling == "fp16_tensor" || ceiling == "fp16_tensor_wgmma" ||
      ceiling == "bf16_tensor_wgmma" || ceiling == "fp8_e4m3_tensor_wgmma")
    return "TFLOP/s";
  throw std::invalid_argument("unknown ceiling '" + std::string(ceiling) + "'");
}

double ceiling_rate(std::string_view ceiling, double work, double time_us) {
  if (!(time_us > 0)) throw std::invalid_argument("ceiling_rate: time must be > 0");
  return is_bandwidth(ceiling) ? work / time_us / 1e3 : work / time_us / 1e6;
}

nlohmann::json best_ceilings(const std::vector<CeilingMeasurement>& measurements) {
  nlohmann::json out = nlohmann::json::object();
  for (std::string_view name : kCeilingNames) {
    const CeilingMeasurement* best = nullptr;
    double best_value = 0;
    nlohmann::json variants = nlohmann::json::array();
    for (const auto& m : measurements) {
      if (m.ceiling != name) continue;
      nlohmann::json entry = {{"kernel", m.kernel}, {"config", config_json(m.config)}};
      if (!m.error.empty()) {
        entry["error"] = m.error;
      } else {
        const double value = ceiling_rate(name, m.work_per_launch, m.min_us);
        entry["value"] = value;
        if (!best || value > best_value) {
          best = &m;
          best_value = value;
        }
      }
      variants.push_back(std::move(entry));
    }
    if (!best) continue;
    out[std::string(name)] = {{"value", best_value},
                              {"unit", std::string(ceiling_unit(name))},
                              {"kernel", best->kernel},
                              {"config", config_json(best->config)},
                              {"value_at_median", ceiling_rate(name, best->work_per_launch, best->median_us)},
                              {"min_us", best->min_us},
                              {"median_us", best->median_us},
                              {"cv", best->cv},
                              {"work_per_launch", best->work_per_launch},
                              {"variants", std::move(variants)}};
  }
  return out;
}

nlohmann::json measure_ceilings(int device, const CeilingOptions& options) {
  const TimingOptions timing = ceiling_timing_options(options.quick, options.timing_flags);
  const TimingOptions floor_timing = read_floor_timing_options(options.timing_flags);
  const DeviceInfo info = query_device_info(device);  // throws with the reason when unusable
  DB_CUDA_CHECK(cudaSetDevice(device));
  NvtxRange range("ceilings");

  // DRAM buffer: 2 GiB (quick: 1 GiB) read, the same again as copy destination; at most 1/8 of
  // the device memory per half.
  const std::size_t wanted = options.quick ? (std::size_t(1) << 30) : (std::size_t(2) << 30);
  const std::size_t half = std::min<std::size_t>(wanted, info.memory_bytes / 8) / 65536 * 65536;
  Workspace workspace(half, static_cast<std::size_t>(info.l2_bytes));
  L2Flusher flusher(device);  // time_launches takes one; hot mode never flushes
  cudaStream_t created = nullptr;
  DB_CUDA_CHECK(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));
  // Destroyed on every way out, the sticky-error throw below included.
  const std::unique_ptr<CUstream_st, decltype(&cudaStreamDestroy)> owned_stream(created, &cudaStreamDestroy);
  cudaStream_t stream = owned_stream.get();

  const auto variants = make_ceiling_variants(workspace.view, info.sm_count, options.quick);
  if (options.filter && std::none_of(variants.begin(), variants.end(), [&](const CeilingVariant& v) {
        return options.filter->selects(variant_name(v));
      }))
    throw std::invalid_argument("'" + options.filter->pattern() + "' selects none of the " +
                                std::to_string(variants.size()) + " variants (named ceilings/<ceiling>/<kernel>/...)");
  std::optional<ProgressReporter> progress;
  if (options.progress) progress.emplace(variants.size(), *options.progress);
  std::vector<CeilingMeasurement> measurements;
  std::string sticky;
  for (const auto& v : variants) {
    const std::string name = variant_name(v);
    if (progress) progress->start(name);
    if (options.filter && !options.filter->selects(name)) {
      if (progress) progress->finish(name, "skipped", "--filter");
      continue;
    }
    if (!v.refused.empty()) {  // listed with its reason, never launched
      if (progress) progress->finish(name, "skipped", v.refused);
      measurements.push_back({v.ceiling, v.kernel, v.config, 0, 0, 0, 0, "refused: " + v.refused});
      continue;
    }
    const TimingResult r = time_launches(name, v.launch, timing, flusher, stream);
    CeilingMeasurement m;
    m.ceiling = v.ceiling;
    m.kernel = v.kernel;
    m.config = v.config;
    m.work_per_launch = v.work_per_launch;
    if (r.ok()) {
      m.min_us = r.stats.min;
      m.median_us = r.stats.median;
      m.cv = r.stats.cv;
    } else {
      m.error = r.error;
    }
    if (progress) {
      const std::string detail = r.ok() ? std::to_string(ceiling_rate(v.ceiling, m.work_per_launch, m.min_us)) +
                                              " " + std::string(ceiling_unit(v.ceiling))
                                        : r.error;
      progress->finish(name, r.ok() ? "ok" : "error", detail);
    }
    measurements.push_back(std::move(m));
    if (r.sticky_error) {
      sticky = name + ": " + r.error;
      break;
    }
  }
  if (!sticky.empty()) {
    if (progress) progress->done();
    throw std::runtime_error("sticky CUDA error, the context is unusable: " + sticky);
  }
  nlohmann::json out = best_ceilings(measurements);
  if (options.read_floor && out.contains("dram_read"))
    out["dram_read"]["floor"] = time_read_floor(workspace.view, read_floor_sizes(workspace.view.buffer_bytes),
                                                info.sm_count, options.quick, floor_timing, options.filter, flusher,
                                                stream);
  if (progress) progress->done();
  return out;
}

nlohmann::json measure_read_floor(int device, std::span<const std::uint64_t> sizes) {
  const DeviceInfo info = query_device_info(device);  // throws with the reason when unusable
  DB_CUDA_CHECK(cudaSetDevice(device));
  NvtxRange range("read_floor");
  const std::uint64_t limit = info.memory_bytes / 4;  // the buffer is twice the largest size
  for (const std::uint64_t b : sizes)
    if (b == 0 || b > limit)
      throw std::invalid_argument("measure_read_floor: size " + std::to_string(b) + " bytes is outside (0, " +
                                  std::to_string(limit) + "] (a quarter of the device memory)");
  if (sizes.empty()) throw std::invalid_argument("measure_read_floor: no sizes");
  const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  Workspace workspace((largest + 65535) / 65536 * 65536, static_cast<std::size_t>(info.l2_bytes));
  L2Flusher flusher(device);
  return time_read_floor(workspace.view, sizes, info.sm_count, /*quick=*/false, read_floor_timing_options({}),
                         std::nullopt, flusher, nullptr);
}

}  // namespace decode_bench

namespace decode_bench {

std::string format_ceilings_table(const nlohmann::json& ceilings, const nlohmann::json& device) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %12s %-8s %s\n", "ceiling", "value", "unit", "kernel / config");
  out += line;
  for (std::string_view name : kCeilingNames) {
    if (!ceilings.contains(std::string(name))) {
      std::snprintf(line, sizeof line, "%-12s %12s %-8s %s\n", std::string(name).c_str(), "-", "",
                    "not measured (every variant failed, was refused or was filtered out)");
      out += line;
      continue;
    }
    const auto& c = ceilings.at(std::string(name));
    std::string config;
    const nlohmann::json config_object = c.value("config", nlohmann::json::object());  // outlives the loop
    for (const auto& [key, value] : config_object.items())
      config += (config.empty() ? "" : ",") + key + "=" + value.dump();
    std::string note;
    if (name == "dram_read" && device.contains("theoretical_dram_gbps") &&
        device["theoretical_dram_gbps"].get<double>() > 0) {
      char pct[64];
      std::snprintf(pct, sizeof pct, " (%.1f%% of theoretical %.0f GB/s)",
                    100.0 * c.at("value").get<double>() / device["theoretical_dram_gbps"].get<double>(),
                    device["theoretical_dram_gbps"].get<double>());
      note = pct;
    }
    std::snprintf(line, sizeof line, "%-12s %12.1f %-8s %s [%s]%s\n", std::string(name).c_str(),
                  c.at("value").get<double>(), c.at("unit").get<std::string>().c_str(),
                  c.value("kernel", "?").c_str(), config.c_str(), note.c_str());
    out += line;
    if (name != "dram_read") continue;
    for (const ReadFloorSample& f : read_floor_samples(ceilings)) {
      const double gbps = f.bytes / f.median_us / 1e3;
      std::snprintf(line, sizeof line, "  read floor %9.1f MiB %9.2f us cold median  %7.1f GB/s  %.3f of the ceiling\n",
                    f.bytes / 1048576.0, f.median_us, gbps, gbps / c.at("value").get<double>());
      out += line;
    }
  }
  return out;
}

}  // namespace decode_bench
