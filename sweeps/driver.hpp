#pragma once
// The sweep driver: runs a plan's points through registered runners and records every outcome.
//   for each point (plan order, minus those already recorded when resuming):
//     no runner / cannot_run / needs more device memory than is free -> "skipped" with the reason
//     runner.run inside try/catch: CUDA out-of-memory or std::bad_alloc -> "skipped";
//       another CudaError -> "error" (a sticky one stops the sweep after saving everything);
//       any other exception -> "error"
//     append the point to <output>.partial.jsonl (flushed), so nothing finished is ever lost
//   write the final document atomically (harness write_results), then remove the sidecar.
// Nothing here touches a GPU unless a runner does: the driver is tested host-side.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweeps/plan.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

// Where the document's machine-dependent blocks come from (sweeps/builtin_runners.cpp has the GPU versions).
struct DriverHooks {
  std::function<nlohmann::json()> device_info;                      // results "device" block
  std::function<nlohmann::json()> ceilings;                         // results "ceilings" block
  std::function<std::optional<std::uint64_t>()> free_device_bytes;  // nullopt: no check
  std::function<nlohmann::json()> gpu_state;                        // meta.gpu_state start/end; unset: none
};

// A device block that satisfies the results schema and says it is not a GPU; empty ceilings; no
// memory check. For tests and --dry-run.
nlohmann::json host_device_info();
DriverHooks host_default_hooks();

struct SweepOptions {
  std::filesystem::path output;                // final document; the sidecar is output + ".partial.jsonl"
  std::optional<std::filesystem::path> resume; // a results file or sidecar whose points are kept
  bool allow_mixed_devices = false;            // resume from a file recorded on another device
  std::vector<std::string> argv;               // recorded in meta
  std::string preset_label;                    // meta.preset
  Shard shard;
  RunContext context;                          // device, stream, timing options (ceilings/device filled here)
  const std::atomic<bool>* interrupted = nullptr;
  std::ostream* progress = nullptr;            // one line per point when set
};

struct SweepOutcome {
  nlohmann::json document;       // as written to options.output
  std::size_t ran = 0;           // points run (or skipped) in this invocation
  std::size_t resumed = 0;       // points carried over from --resume
  std::size_t failed = 0;        // verification_failed + error, over the whole document
  bool complete = false;         // every planned point is in the document
  std::string stop_reason;       // why the sweep ended early (interrupt, sticky CUDA error)
};

// One point start to finish, as run_sweep runs each: runner dispatch with every failure captured
// (see the top of this file), stamped with id/experiment/index/parameters, schema-checked, and its
// "run" timing block added. *stop is set when a sticky CUDA error made ctx's device unusable.
// Shared with the multi-device scheduler (sweeps/device_pool.hpp).
nlohmann::json measure_point(const Point& point, const RunnerRegistry& runners, const DriverHooks& hooks,
                             RunContext& ctx, bool* stop);

// One device of this run, for the --resume model check: how the message names it ("this run is
// on", "device 1 of this run is") and its model name (device block "name").
struct ResumeDevice {
  std::string label;
  std::string name;
};

// What a --resume file brings into this run.
struct ResumedPoints {
  // Its finished points that the plan has, keyed by plan position (not run again).
  std::map<std::size_t, nlohmann::json> planned;
  // Its points that this run's selection (--experiment, --filter, --shard, overrides) leaves out,
  // in file order: written back unchanged, so resuming into the same file with a narrower
  // selection never drops what the file held.
  std::vector<nlohmann::json> outside_plan;
};

// Throws ConfigErrors on --resume for a file that cannot be read, or that was recorded on another
// GPU model than any of `devices` (unless options.allow_mixed_devices). Shared with the
// multi-device scheduler.
ResumedPoints resumed_points(const Plan& plan, const SweepOptions& options, const std::vector<ResumeDevice>& devices);

// Appends the resumed points this run's selection left out to the final document, after the
// plan's, counting them in the status counts but never in this run's failures or completeness, and
// says so on options.progress. Returns how many. Shared with the multi-device scheduler.
std::size_t keep_outside_plan(std::vector<nlohmann::json> outside_plan, nlohmann::json& doc,
                              std::map<std::string, std::size_t>& counts, const SweepOptions& options);

// Throws ConfigErrors for an unusable --resume (missing file, other device); std::runtime_error
// for I/O failures (the sidecar keeps what was done).
SweepOutcome run_sweep(const Plan& plan, const RunnerRegistry& runners, const DriverHooks& hooks,
                       const SweepOptions& options);

}  // namespace decode_bench::sweeps
