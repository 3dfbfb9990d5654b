#include "sweeps/driver.hpp"

#include <chrono>
#include <map>
#include <new>
#include <ostream>
#include <set>

#include "harness/cuda_check.hpp"
#include "harness/gpu_state.hpp"
#include "harness/results_schema.hpp"
#include "harness/timing_result.hpp"
#include "pools/capacity.hpp"
#include "pools/pool_error.hpp"
#include "sweeps/partial_file.hpp"
#include "sweeps/phase_summary.hpp"
#include "sweeps/results_table.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

json reasoned(std::string_view status, const std::string& reason) {
  return {{"status", status}, {"reason", reason}};
}

// Points a runner returns must satisfy the results schema, or the final write would fail at the end.
std::optional<std::string> schema_problem(const json& point) {
  json probe = make_results_document(make_meta({}, ""), host_device_info());
  probe["points"].push_back(point);
  try {
    validate_results(probe);
  } catch (const SchemaError& e) {
    return e.path().substr(e.path().find('.') == std::string::npos ? 0 : e.path().find('.') + 1) + ": " + e.reason();
  }
  return std::nullopt;
}

struct PointResult {
  json record;
  bool stop = false;  // a sticky CUDA error: the context is unusable
};

PointResult run_one(const Point& point, const RunnerRegistry& runners, const DriverHooks& hooks, RunContext& ctx) {
  const std::string kernel = point.parameters.value("kernel", "");
  PointRunner* runner = runners.find(kernel);
  if (!runner) return {reasoned(kStatusSkipped, "no runner registered for kernel '" + kernel + "' in this build")};
  PointResult result;
  try {
    if (auto why = runner->cannot_run(point)) return {reasoned(kStatusSkipped, *why)};
    if (hooks.free_device_bytes) {
      const auto free = hooks.free_device_bytes();
      const std::uint64_t need = runner->device_bytes_needed(point);
      if (free && need > *free)
        return {reasoned(kStatusSkipped, "needs " + format_bytes(need) + " of device memory, " + format_bytes(*free) + " free")};
    }
    result.record = runner->run(point, ctx);
    if (!result.record.is_object() || !result.record.contains("status")) {
      result.record = reasoned(kStatusError, "runner '" + kernel + "' returned no status");
    }
  } catch (const CudaError& e) {
    if (e.code() == cudaErrorMemoryAllocation) {
      result.record = reasoned(kStatusSkipped, std::string("out of device memory: ") + e.what());
    } else {
      result.record = reasoned(kStatusError, e.what());
      result.record["sticky"] = e.sticky();
      result.stop = e.sticky();
    }
  } catch (const PoolError& e) {
    // A pool whose arena the GPU cannot allocate is a point too big for this GPU, like a failed
    // cudaMalloc above: skipped with the reason, and the sweep goes on. Other pool errors are bugs.
    if (e.kind() == PoolErrorKind::OutOfDeviceMemory)
      result.record = reasoned(kStatusSkipped, std::string("out of device memory: ") + e.what());
    else
      result.record = reasoned(kStatusError, e.what());
  } catch (const std::bad_alloc&) {
    result.record = reasoned(kStatusSkipped, "out of host memory");
  } catch (const std::exception& e) {
    result.record = reasoned(kStatusError, e.what());
  }
  return result;
}

// The plan's parameters, plus any the runner derived from them and returned under "parameters"
// (capacity: max_seq_len, which the Figure 5 plot reads as a parameter). A planned value always
// wins, so a point's parameters never disagree with its id.
void stamp(json& record, const Point& point) {
  json parameters = point.parameters;
  if (const auto derived = record.find("parameters"); derived != record.end() && derived->is_object())
    for (const auto& [key, value] : derived->items()) parameters.emplace(key, value);
  record["id"] = point.id;
  record["experiment"] = point.experiment;
  record["index"] = point.index;
  record["parameters"] = std::move(parameters);
}

// The runner's phases plus "other": the point's wall time none of them covers.
json with_other(const PhaseSeconds& phases, double wall) {
  json out = json::object();
  double covered = 0;
  for (const auto& [name, seconds] : phases) {
    out[name] = seconds;
    covered += seconds;
  }
  out[std::string(kPhaseOther)] = std::max(0.0, wall - covered);
  return out;
}

// Points that a resumed run keeps. An "error" point is run again: the failure may have been the
// process (a sticky error elsewhere), not the point.
bool finished(const json& record) { return record.value("status", "") != kStatusError; }

}  // namespace

json measure_point(const Point& point, const RunnerRegistry& runners, const DriverHooks& hooks, RunContext& ctx,
                   bool* stop) {
  const auto tp = Clock::now();
  ctx.measured_seconds = 0;
  ctx.phases.clear();
  PointResult r = run_one(point, runners, hooks, ctx);
  stamp(r.record, point);
  if (auto problem = schema_problem(r.record)) {
    r.record = reasoned(kStatusError, "runner returned an invalid point (" + *problem + ")");
    stamp(r.record, point);
  }
  const double wall = seconds_since(tp);
  r.record["run"] = {{"wall_seconds", wall},
                     {"measured_seconds", ctx.measured_seconds},
                     {"overhead_seconds", std::max(0.0, wall - ctx.measured_seconds)},
                     {"phases", with_other(ctx.phases, wall)}};
  if (stop) *stop = r.stop;
  return std::move(r.record);
}

ResumedPoints resumed_points(const Plan& plan, const SweepOptions& options, const std::vector<ResumeDevice>& devices) {
  json old_device;
  std::vector<json> old;
  try {
    old = load_recorded_points(*options.resume, &old_device);
  } catch (const std::exception& e) {
    throw ConfigErrors("--resume", e.what());
  }
  if (!options.allow_mixed_devices && old_device.is_object()) {
    const std::string old_name = old_device.value("name", "");
    for (const ResumeDevice& d : devices)
      if (d.name != old_name)
        throw ConfigErrors("--resume", "was recorded on '" + old_name + "', " + d.label + " '" + d.name +
                                           "' (pass --allow-mixed-devices to combine them)");
  }
  std::map<std::string, std::size_t> planned;  // id -> position in plan.points
  for (std::size_t i = 0; i < plan.points.size(); ++i) planned[plan.points[i].id] = i;
  ResumedPoints resumed;
  for (json& p : old) {
    const auto it = planned.find(p.value("id", ""));
    if (it == planned.end()) resumed.outside_plan.push_back(std::move(p));
    else if (finished(p)) resumed.planned[it->second] = std::move(p);
  }
  return resumed;
}

std::size_t keep_outside_plan(std::vector<json> outside_plan, json& doc, std::map<std::string, std::size_t>& counts,
                              const SweepOptions& options) {
  const std::size_t kept = outside_plan.size();
  for (json& p : outside_plan) {
    ++counts[p.value("status", "?")];
    doc["points"].push_back(std::move(p));
  }
  if (kept > 0 && options.progress)
    *options.progress << "decode-bench: kept " << kept << " points of " << options.resume->string()
                      << " that this run's selection leaves out\n";
  return kept;
}

json host_device_info() {
  return {{"name", "host (no GPU)"}, {"compute_capability", "0.0"}, {"sm_count", 0},   {"l2_bytes", 0},
          {"memory_bytes", 0},       {"sm_clock_khz", 0},          {"memory_clock_khz", 0},
          {"driver_version", 0},     {"runtime_version", 0}};
}

DriverHooks host_default_hooks() {
  return {[] { return host_device_info(); }, [] { return json::object(); }, nullptr, nullptr};
}

SweepOutcome run_sweep(const Plan& plan, const RunnerRegistry& runners, const DriverHooks& hooks,
                       const SweepOptions& options) {
  const auto t0 = Clock::now();
  SweepOutcome out;
  RunContext ctx = options.context;
  ctx.device_info = hooks.device_info ? hooks.device_info() : host_device_info();
  json gpu_start = hooks.gpu_state ? hooks.gpu_state() : json();  // before the ceilings warm the GPU
  ctx.ceilings = hooks.ceilings ? hooks.ceilings() : json::object();
  ctx.interrupted = options.interrupted;

  // Carried points, keyed by plan position so the document keeps plan order.
  std::map<std::size_t, json> recorded;
  std::vector<json> outside_plan;  // resumed points this run's selection leaves out, kept as they are
  if (options.resume) {
    ResumedPoints resumed = resumed_points(plan, options, {{"this run is on", ctx.device_info.value("name", "")}});
    recorded = std::move(resumed.planned);
    outside_plan = std::move(resumed.outside_plan);
    out.resumed = recorded.size();
  }

  json meta = make_meta(options.argv, options.preset_label);
  meta["timing"] = to_json(options.context.timing);  // each point's timing.options also has it, with its mode
  if (hooks.gpu_state) meta["gpu_state"]["start"] = std::move(gpu_start);
  json header = {{"decode_bench_partial", 1}, {"meta", meta}, {"device", ctx.device_info}};
  std::vector<json> carried = outside_plan;
  for (const auto& [_, p] : recorded) carried.push_back(p);
  PartialWriter partial(partial_path_for(options.output), header, carried);

  double overhead_seconds = 0, measured_seconds = 0;
  PhaseSeconds phase_totals;
  for (std::size_t i = 0; i < plan.points.size(); ++i) {
    if (recorded.count(i)) continue;
    if (ctx.interrupt_requested()) {
      out.stop_reason = "interrupted";
      break;
    }
    const Point& point = plan.points[i];
    PointResult r;
    r.record = measure_point(point, runners, hooks, ctx, &r.stop);
    overhead_seconds += r.record["run"].value("overhead_seconds", 0.0);
    for (const auto& [name, seconds] : r.record["run"]["phases"].items()) phase_totals[name] += seconds.get<double>();
    measured_seconds += ctx.measured_seconds;
    partial.append(r.record);
    if (options.progress)
      *options.progress << "[" << (i + 1) << "/" << plan.points.size() << "] " << point.id << ": "
                        << point_outcome_text(r.record) << "\n"
                        << std::flush;
    recorded[i] = std::move(r.record);
    ++out.ran;
    if (r.stop) {
      out.stop_reason = "sticky CUDA error at " + point.id + "; the CUDA context is unusable: --resume in a new process";
      break;
    }
  }

  if (hooks.gpu_state) meta["gpu_state"]["end"] = hooks.gpu_state();
  // A throttled GPU times everything slower with nothing else amiss: say so where the run is read.
  if (hooks.gpu_state && options.progress)
    for (const char* when : {"start", "end"})
      if (const std::string why = gpu_slowdown_reason(meta["gpu_state"][when]); !why.empty())
        *options.progress << "decode-bench: warning: the GPU reported " << why << " at the " << when
                          << " of the sweep (meta.gpu_state): its timings are not comparable with an unthrottled run\n";
  json doc = make_results_document(meta, ctx.device_info);
  doc["ceilings"] = ctx.ceilings;
  std::map<std::string, std::size_t> counts;
  for (auto& [_, p] : recorded) {
    ++counts[p.value("status", "?")];
    doc["points"].push_back(std::move(p));
  }
  out.failed = counts[std::string(kStatusVerificationFailed)] + counts[std::string(kStatusError)];
  out.complete = recorded.size() == plan.points.size();
  const std::size_t kept_outside_plan = keep_outside_plan(std::move(outside_plan), doc, counts, options);
  std::vector<std::string> experiments;
  for (const auto& e : plan.preset.experiments) experiments.push_back(e.name);
  doc["meta"]["sweep"] = {{"preset_name", plan.preset.name},
                          {"experiments", experiments},
                          {"total_points", plan.total_points},
                          {"selected_points", plan.selected_points},
                          {"planned_points", plan.points.size()},
                          {"shard", options.shard.text()},
                          {"resumed_points", out.resumed},
                          {"kept_outside_plan", kept_outside_plan},
                          {"ran_points", out.ran},
                          {"status_counts", counts},
                          {"complete", out.complete},
                          {"stop_reason", out.stop_reason},
                          {"wall_seconds", seconds_since(t0)},
                          {"measured_seconds", measured_seconds},
                          {"overhead_seconds", overhead_seconds},
                          {"phase_seconds", phase_totals}};
  if (!plan.filter.empty()) doc["meta"]["sweep"]["filter"] = plan.filter;
  if (options.progress) *options.progress << phase_summary(phase_totals, seconds_since(t0), measured_seconds) << std::flush;
  write_results(options.output, doc);
  partial.close_and_remove();
  out.document = std::move(doc);
  return out;
}

}  // namespace decode_bench::sweeps
