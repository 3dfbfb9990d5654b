#include "sweeps/device_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>

#include "harness/results_schema.hpp"
#include "harness/timing_result.hpp"
#include "sweeps/config_error.hpp"
#include "sweeps/memory_estimate.hpp"
#include "sweeps/partial_file.hpp"
#include "sweeps/results_table.hpp"
#include "sweeps/text_split.hpp"
#include "sweeps/point_kernel.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  char buf[32];
  if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// The "devices" list a previous run recorded (final document or sidecar header), if any.
json recorded_devices(const std::filesystem::path& path) {
  try {
    const bool is_partial = path.string().ends_with(".partial.jsonl");
    if (!is_partial && std::filesystem::exists(path)) {
      const json doc = read_results(path);
      if (doc.contains("devices")) return doc["devices"];
    }
    const std::filesystem::path sidecar = is_partial ? path : partial_path_for(path);
    if (std::filesystem::exists(sidecar)) return read_partial(sidecar).header.value("devices", json::array());
  } catch (const std::exception&) {
    // load_recorded_points already reported an unreadable file; nothing more to add here.
  }
  return json::array();
}

// Everything the workers share; `mutex` guards all but `next` and the read-only members.
struct SharedState {
  SharedState(const Plan& p, const SweepOptions& o) : plan(p), options(o) {}
  const Plan& plan;
  const SweepOptions& options;
  std::vector<std::size_t> queue;  // plan positions, longest estimated first
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  PartialWriter* partial = nullptr;
  std::map<std::size_t, json> recorded;  // plan position -> point
  std::size_t ran = 0;
  double measured_seconds = 0, overhead_seconds = 0;
  double cost_total = 0, cost_done = 0;  // over this invocation's queue, for the ETA
  Clock::time_point t0 = Clock::now();
};

struct WorkerResult {
  json ceilings = json::object();
  std::size_t points = 0;
  std::string stop_reason;  // why this worker stopped before the queue was empty
};

void report(SharedState& s, int device, const Point& point, const json& record) {
  if (!s.options.progress) return;
  const double elapsed = seconds_since(s.t0);
  std::string eta = "?";
  if (s.cost_done > 0) eta = clock_text(elapsed * std::max(0.0, s.cost_total - s.cost_done) / s.cost_done);
  *s.options.progress << "[" << s.recorded.size() << "/" << s.plan.points.size() << "] gpu" << device << " "
                      << point.id << ": " << point_outcome_text(record) << "  elapsed "
                      << clock_text(elapsed) << ", ETA " << eta << "\n"
                      << std::flush;
}

void work(SharedState& s, const DeviceWorker& w, WorkerResult& result) {
  try {
    if (w.bind_thread) w.bind_thread();
    result.ceilings = w.hooks.ceilings ? w.hooks.ceilings() : json::object();
  } catch (const std::exception& e) {
    result.stop_reason = std::string("device setup failed: ") + e.what();
    return;
  }
  RunContext ctx = s.options.context;
  ctx.device = w.device;
  ctx.device_info = w.hooks.device_info ? w.hooks.device_info() : host_device_info();
  ctx.ceilings = result.ceilings;
  ctx.interrupted = s.options.interrupted;
  while (!ctx.interrupt_requested()) {
    const std::size_t slot = s.next.fetch_add(1);
    if (slot >= s.queue.size()) return;
    const std::size_t position = s.queue[slot];
    const Point& point = s.plan.points[position];
    bool stop = false;
    json record = measure_point(point, *w.runners, w.hooks, ctx, &stop);
    record["device"] = w.device;
    try {
      std::lock_guard lock(s.mutex);
      s.partial->append(record);
      s.measured_seconds += ctx.measured_seconds;
      s.overhead_seconds += record["run"].value("overhead_seconds", 0.0);
      s.cost_done += estimated_point_cost(point);
      s.recorded[position] = record;
      ++s.ran;
      ++result.points;
      report(s, w.device, point, record);
    } catch (const std::exception& e) {
      // The sidecar cannot be written: stop every worker (nothing more could be kept).
      result.stop_reason = e.what();
      s.next.store(s.queue.size());
      return;
    }
    if (stop) {
      result.stop_reason = "sticky CUDA error at " + point.id + "; device " + std::to_string(w.device) +
                           " is unusable in this process (the other devices went on)";
      return;
    }
  }
}

}  // namespace

std::vector<int> parse_device_list(const std::string& text, int device_count) {
  const std::string visible = std::to_string(device_count) + " CUDA device" + (device_count == 1 ? "" : "s") + " visible";
  std::vector<int> out;
  if (text == "all") {
    for (int d = 0; d < device_count; ++d) out.push_back(d);
    if (out.empty()) throw ConfigErrors("--devices", "'all' found no CUDA device (" + visible + ")");
    return out;
  }
  for (const std::string_view part : split_at(text, ',')) {
    const std::string item(part);
    int d = -1;
    std::size_t used = 0;
    try {
      d = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || d < 0)
      throw ConfigErrors("--devices", "'" + item + "' is not a device index (expected 'all' or e.g. 0,1)");
    if (std::find(out.begin(), out.end(), d) != out.end())
      throw ConfigErrors("--devices", "device " + item + " is listed twice");
    out.push_back(d);
  }
  // Existence last, so a malformed list gets the same answer on every machine.
  for (int d : out)
    if (d >= device_count)
      throw ConfigErrors("--devices", "device " + std::to_string(d) + " does not exist (" + visible + ")");
  return out;
}

double estimated_point_cost(const Point& point) {
  constexpr double kFixedBytes = 64.0 * 1024 * 1024;  // setup, verification, launch overhead
  json parameters = point.parameters;
  const bool on_host = kernel_is(parameters, KernelKind::cpu_reference);
  if (on_host) parameters["kernel"] = std::string(kernel_name(KernelKind::baseline));
  double bytes = 0;
  try {
    bytes = static_cast<double>(estimate_device_bytes(parameters));
  } catch (const std::exception&) {
    bytes = 0;  // a point the estimate cannot read still runs; it just sorts last
  }
  return kFixedBytes + (on_host ? 100.0 : 1.0) * bytes;
}

SweepOutcome run_sweep_on_devices(const Plan& plan, const std::vector<DeviceWorker>& workers,
                                  const SweepOptions& options) {
  if (workers.empty()) throw ConfigErrors("--devices", "no devices to run on");
  std::set<int> seen;
  for (const DeviceWorker& w : workers) {
    if (!seen.insert(w.device).second)
      throw ConfigErrors("--devices", "device " + std::to_string(w.device) + " is listed twice");
    if (w.runners == nullptr) throw std::invalid_argument("device worker " + std::to_string(w.device) + " has no runners");
  }
  SharedState s(plan, options);
  SweepOutcome out;
  std::vector<json> infos;
  for (const DeviceWorker& w : workers) infos.push_back(w.hooks.device_info ? w.hooks.device_info() : host_device_info());

  json carried_devices = json::array();
  std::vector<json> outside_plan;  // resumed points this run's selection leaves out, kept as they are
  if (options.resume) {
    std::vector<ResumeDevice> devices;
    for (std::size_t k = 0; k < workers.size(); ++k)
      devices.push_back({"device " + std::to_string(workers[k].device) + " of this run is", infos[k].value("name", "")});
    ResumedPoints resumed = resumed_points(plan, options, devices);
    s.recorded = std::move(resumed.planned);
    outside_plan = std::move(resumed.outside_plan);
    out.resumed = s.recorded.size();
    carried_devices = recorded_devices(*options.resume);
  }

  for (std::size_t i = 0; i < plan.points.size(); ++i)
    if (!s.recorded.count(i)) s.queue.push_back(i);
  std::vector<double> cost(plan.points.size(), 0.0);
  for (std::size_t i : s.queue) {
    cost[i] = estimated_point_cost(plan.points[i]);
    s.cost_total += cost[i];
  }
  // Longest first: the last points handed out are the short ones, so the workers finish together.
  std::stable_sort(s.queue.begin(), s.queue.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });

  json devices = json::array();
  for (std::size_t k = 0; k < workers.size(); ++k) devices.push_back({{"index", workers[k].device}, {"info", infos[k]}});
  json meta = make_meta(options.argv, options.preset_label);
  meta["timing"] = to_json(options.context.timing);  // each point's timing.options also has it, with its mode
  const json header = {{"decode_bench_partial", 1}, {"meta", meta}, {"device", infos.front()}, {"devices", devices}};
  std::vector<json> carried = outside_plan;
  for (const auto& [_, p] : s.recorded) carried.push_back(p);
  PartialWriter partial(partial_path_for(options.output), header, carried);
  s.partial = &partial;

  std::vector<WorkerResult> results(workers.size());
  {
    std::vector<std::thread> threads;
    for (std::size_t k = 0; k < workers.size(); ++k)
      threads.emplace_back([&, k] { work(s, workers[k], results[k]); });
    for (auto& t : threads) t.join();
  }

  // A resumed point measured on a device this run does not use keeps that device's old entry.
  std::set<int> listed(seen);
  for (const auto& [_, p] : s.recorded) {
    if (!p.contains("device") || !p["device"].is_number_integer() || listed.count(p["device"].get<int>())) continue;
    for (const json& d : carried_devices)
      if (d.value("index", -1) == p["device"].get<int>()) {
        json entry = d;
        entry["carried"] = true;
        entry["points"] = 0;
        devices.push_back(entry);
        listed.insert(p["device"].get<int>());
      }
  }
  for (std::size_t k = 0; k < workers.size(); ++k) {
    devices[k]["ceilings"] = results[k].ceilings;
    if (!results[k].stop_reason.empty()) devices[k]["stop_reason"] = results[k].stop_reason;
  }
  std::map<int, std::size_t> per_device;
  for (const auto& [_, p] : s.recorded)
    if (p.contains("device") && p["device"].is_number_integer()) ++per_device[p["device"].get<int>()];
  for (json& d : devices) d["points"] = per_device[d.value("index", -1)];

  json doc = make_results_document(meta, infos.front());
  doc["ceilings"] = results.front().ceilings;
  doc["devices"] = devices;
  std::map<std::string, std::size_t> counts;
  for (auto& [_, p] : s.recorded) {
    ++counts[p.value("status", "?")];
    doc["points"].push_back(std::move(p));
  }
  out.ran = s.ran;
  out.failed = counts[std::string(kStatusVerificationFailed)] + counts[std::string(kStatusError)];
  out.complete = doc["points"].size() == plan.points.size();
  const std::size_t kept_outside_plan = keep_outside_plan(std::move(outside_plan), doc, counts, options);
  if (!out.complete) {
    if (options.interrupted && options.interrupted->load()) {
      out.stop_reason = "interrupted";
    } else {
      for (std::size_t k = 0; k < workers.size(); ++k)
        if (!results[k].stop_reason.empty())
          out.stop_reason += (out.stop_reason.empty() ? "" : "; ") + std::string("device ") +
                             std::to_string(workers[k].device) + ": " + results[k].stop_reason;
    }
  }
  std::vector<std::string> experiments;
  for (const auto& e : plan.preset.experiments) experiments.push_back(e.name);
  std::vector<int> indices;
  for (const DeviceWorker& w : workers) indices.push_back(w.device);
  doc["meta"]["sweep"] = {{"preset_name", plan.preset.name},
                          {"experiments", experiments},
                          {"total_points", plan.total_points},
                          {"selected_points", plan.selected_points},
                          {"planned_points", plan.points.size()},
                          {"shard", options.shard.text()},
                          {"devices", indices},
                          {"resumed_points", out.resumed},
                          {"kept_outside_plan", kept_outside_plan},
                          {"ran_points", out.ran},
                          {"status_counts", counts},
                          {"complete", out.complete},
                          {"stop_reason", out.stop_reason},
                          {"wall_seconds", seconds_since(s.t0)},
                          {"measured_seconds", s.measured_seconds},
                          {"overhead_seconds", s.overhead_seconds}};
  if (!plan.filter.empty()) doc["meta"]["sweep"]["filter"] = plan.filter;
  write_results(options.output, doc);
  partial.close_and_remove();
  out.document = std::move(doc);
  return out;
}

}  // namespace decode_bench::sweeps
