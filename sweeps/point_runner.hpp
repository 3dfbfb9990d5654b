#pragma once
// The plug-in interface between the sweep driver and whatever measures a point. One runner per
// value of the `kernel` axis; the driver owns ordering, skipping, error capture, streaming to disk,
// resume, shards and the final document, so a runner only builds, verifies and times one point.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "harness/timing_options.hpp"
#include "kernels/tuning_policy.hpp"
#include "sweeps/phase_timer.hpp"
#include "sweeps/point.hpp"

namespace decode_bench::sweeps {

struct RunContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  nlohmann::json ceilings = nlohmann::json::object();        // the document's ceilings block
  nlohmann::json device_info = nlohmann::json::object();     // the document's device block
  // Set by SIGINT; a long runner may poll it and return early (the driver stops after the point).
  const std::atomic<bool>* interrupted = nullptr;
  // Seconds spent inside measured kernels for this point; the runner adds to it, the driver
  // resets it per point and records wall time minus this as the point's overhead.
  double measured_seconds = 0.0;
  // Seconds of this point's wall time by phase (sweeps/phase_timer.hpp); reset per point by the
  // driver, which records them with "other" as run.phases.
  PhaseSeconds phases;
  // The old paths, kept selectable (--verify cpu, --fill host): the float64 reference on the
  // host over host copies of K/V, and K/V generated on the host and uploaded through admit.
  bool verify_on_host = false;
  bool fill_on_host = false;
  // How points are timed (sweep's --repetitions, --min-time, ...; harness/timing_flags.hpp); a
  // runner copies it and sets the mode from the point's `timing` axis.
  TimingOptions timing;
  // The planners' knobs, parsed once from the environment when the sweep starts (a bad value is
  // refused there, exit 2); the pipeline hands them to each point's backend with the measured
  // DRAM read ceiling added (AttentionProblem::tuning).
  TuningPolicy tuning{};

  bool interrupt_requested() const { return interrupted && interrupted->load(); }
};

struct PointRunner {
  virtual ~PointRunner();
  // The `kernel` axis value this runner handles.
  virtual std::string name() const = 0;
  // A reason when this valid point is outside what the kernel supports (recorded as "skipped").
  virtual std::optional<std::string> cannot_run(const Point& point) const;
  // Device bytes the point will allocate; compared with free memory before running.
  // Default: sweeps/memory_estimate.hpp.
  virtual std::uint64_t device_bytes_needed(const Point& point) const;
  // False when the runner has an exact host-only path (capacity's host simulation), so a sweep of
  // only such points runs on a machine without a GPU.
  virtual bool needs_gpu() const { return true; }
  // Builds the KV state, verifies, times. Returns the point's JSON: status plus verification /
  // timing / model / counters / reason (or a capacity object) as docs/results.md requires for that
  // status. The driver fills id, experiment, index and parameters; a runner may return
  // "parameters" holding values it derived (added to the planned ones, never replacing them).
  // Throw CudaError for CUDA failures (a sticky one stops the sweep after saving), std::bad_alloc
  // for host memory exhaustion.
  virtual nlohmann::json run(const Point& point, RunContext& ctx) = 0;
};

// Runners by kernel name. The CLI fills the global one (sweeps/builtin_runners.hpp); tests make
// their own.
class RunnerRegistry {
 public:
  static RunnerRegistry& global();
  // Throws std::invalid_argument when the name is already taken.
  void add(std::unique_ptr<PointRunner> runner);
  PointRunner* find(std::string_view kernel) const;
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<PointRunner>> runners_;
};

}  // namespace decode_bench::sweeps
