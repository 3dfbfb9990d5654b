// `decode-bench sweep`: validate a preset (every error at once, exit 2), expand it, and run its
// points through the registered runners, streaming each finished point to disk.
#include <algorithm>
#include <atomic>
#include <csignal>
#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>

#include <cuda_runtime.h>

#include "backends/plugin_backend.hpp"
#include "harness/benchmark_flags.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_query.hpp"
#include "harness/timing_flags.hpp"
#include "kernels/tuning_policy.hpp"
#include "sweeps/axes.hpp"
#include "sweeps/builtin_runners.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/cli/measure_flags.hpp"
#include "sweeps/device_pool.hpp"
#include "sweeps/driver.hpp"
#include "sweeps/dry_run.hpp"
#include "sweeps/plan.hpp"
#include "sweeps/run_paths.hpp"
#include "sweeps/run_report.hpp"

namespace decode_bench::cli {
namespace {

using namespace decode_bench::sweeps;

struct SweepArgs {
  std::string preset = "quick";
  std::vector<std::string> sets;
  std::vector<std::string> experiments;
  std::string output;
  std::string output_dir = "results";
  std::string resume;
  std::string shard = "0/1";
  std::string timing;
  int device = 0;
  std::string devices;  // --devices: one worker thread per listed GPU (sweeps/device_pool.hpp)
  bool dry_run = false;
  std::optional<std::string> device_memory;  // --device-memory: the size a dry run checks points against
  bool list_axes = false;
  bool allow_mixed_devices = false;
  std::vector<std::string> backend_libs;  // --backend-lib: plugin libraries whose backends join the registry
  RunPathOptions paths;
  MeasureFlags measure;  // --filter, --repetitions, --min-time, ... and their --benchmark_* twins
};

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

void print_axes() {
  std::cout << "Axes (decode-bench sweep --set KEY=VALUES; docs/sweeps.md):\n";
  int width = 0;  // the longest name plus two spaces, so a name never runs into its domain
  for (const AxisDef& a : axis_table()) width = std::max(width, static_cast<int>(a.name.size()) + 2);
  for (const AxisDef& a : axis_table()) {
    std::cout << "  " << std::left << std::setw(width) << a.name << axis_domain_text(a) << "; default "
              << axis_value_text(a.default_value) << "\n"
              << "  " << std::setw(width) << "" << a.description << "\n";
  }
}

std::string slug(std::string s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "device" : out;
}

std::string utc_stamp() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

void report_config_errors(const ConfigErrors& e, CommandContext& ctx) {
  std::cerr << "decode-bench: invalid sweep configuration (" << e.errors().size() << " problem"
            << (e.errors().size() == 1 ? "" : "s") << "; nothing was run):\n";
  for (const auto& err : e.errors()) std::cerr << "  " << err.path << ": " << err.message << "\n";
  ctx.exit_code = kExitUsage;
}

std::filesystem::path output_path(const SweepArgs& args, const nlohmann::json& device) {
  if (!args.output.empty()) return args.output;
  if (!args.resume.empty()) {
    std::string r = args.resume;
    const std::string suffix = ".partial.jsonl";
    if (r.ends_with(suffix)) r.resize(r.size() - suffix.size());
    return r;
  }
  return std::filesystem::path(args.output_dir) / (slug(device.value("name", "gpu")) + "-" + utc_stamp() + ".json");
}

int cuda_device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  cudaGetLastError();  // "no device" is not an error to carry into later calls
  return count;
}

// Every point's runner has a host-only path (or nothing would run at all).
bool runs_on_host(const Plan& plan) {
  for (const Point& p : plan.points) {
    const PointRunner* runner = RunnerRegistry::global().find(p.parameters.value("kernel", ""));
    if (runner == nullptr || runner->needs_gpu()) return false;
  }
  return !plan.points.empty();
}

void run(const SweepArgs& args, CommandContext& ctx) {
  // The plugins first: their backends are values of the backend axis that --list-axes, the preset's
  // validation and the runners see (backends/plugin_backend.hpp).
  for (const std::string& lib : args.backend_libs) {
    try {
      load_backend_library(lib);
    } catch (const PluginLoadError& e) {
      std::cerr << "decode-bench: --backend-lib: " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
      return;
    }
  }
  const BenchmarkOutputFlags& report_flags = benchmark_output_flags();
  if ((args.dry_run || args.list_axes) && !report_flags.first_given.empty()) {
    report_config_errors(ConfigErrors(report_flags.first_given, std::string("reports a sweep's results; ") +
                                                                    (args.dry_run ? "--dry-run" : "--list-axes") +
                                                                    " runs nothing"),
                         ctx);
    return;
  }
  if (args.list_axes) {
    print_axes();
    return;
  }
  // The flags first: a bad one is refused before any GPU is touched or point built.
  std::optional<GivenFlag> filter;
  TimingOptions timing;
  try {
    filter = args.measure.filter();
    timing = apply_timing_flags(TimingOptions{}, args.measure.timing());
  } catch (const std::invalid_argument& e) {
    std::cerr << "decode-bench: " << e.what() << "\n";
    ctx.exit_code = kExitUsage;
    return;
  }
  // The planners' knobs, once for the whole run (kernels/tuning_policy.hpp): a bad one is refused
  // like a bad preset value, before anything runs (a dry run too).
  TuningPolicy tuning;
  try {
    tuning = tuning_policy_from_environment();
  } catch (const TuningPolicyError& e) {
    std::vector<ConfigError> errors;
    for (const std::string& problem : e.problems()) errors.push_back({"environment", problem});
    report_config_errors(ConfigErrors(std::move(errors)), ctx);
    return;
  }
  static const bool registered = [] {
    register_builtin_runners(RunnerRegistry::global());
    return true;
  }();
  (void)registered;
  // A dry run on a GPU machine still checks each point's memory need against that GPU; a plan of
  // only host-runnable points (capacity) runs without one.
  std::vector<int> device_list;
  if (!args.devices.empty()) {
    try {
      device_list = parse_device_list(args.devices, cuda_device_count());
    } catch (const ConfigErrors& e) {
      report_config_errors(e, ctx);
      return;
    }
    for (int d : device_list)
      if (device_unavailable_reason(d)) {
        require_gpu(d, ctx);
        return;
      }
  }
  const int first_device = device_list.empty() ? args.device : device_list.front();
  const bool have_gpu = !device_unavailable_reason(first_device);
  const DriverHooks hooks = have_gpu ? gpu_driver_hooks(first_device) : host_default_hooks();
  const nlohmann::json device = hooks.device_info();

  try {
    PlanRequest request;
    request.preset_document = load_preset_document(args.preset);
    request.overrides = args.sets;
    if (!args.timing.empty()) request.overrides.push_back("timing=" + args.timing);
    RunContext run_paths;
    apply_run_paths(args.paths, run_paths, request.overrides);
    request.experiments = args.experiments;
    if (filter) {
      request.filter = filter->value;
      request.filter_flag = filter->flag;
    }
    request.shard = parse_shard(args.shard);
    request.context.registered_kernels = RunnerRegistry::global().names();
    if (const std::uint64_t mem = device.value("memory_bytes", std::uint64_t{0}); mem > 0)
      request.context.device_memory_bytes = mem;
    for (std::size_t k = 1; k < device_list.size(); ++k)  // a point must fit the smallest GPU
      if (const std::uint64_t mem = gpu_driver_hooks(device_list[k]).device_info().value("memory_bytes", std::uint64_t{0});
          mem > 0 && (!request.context.device_memory_bytes || mem < *request.context.device_memory_bytes))
        request.context.device_memory_bytes = mem;
    // A dry run lists and flags the points that cannot fit (sweeps/dry_run.hpp) instead of refusing.
    const std::optional<std::uint64_t> device_memory = request.context.device_memory_bytes;
    if (args.dry_run) request.context.device_memory_bytes.reset();
    const Plan plan = make_plan(request);
    // Only a machine with no GPU at all runs on the host: a bad --device index or a too-old GPU
    // is an error even for a capacity-only plan.
    if (!args.dry_run && !have_gpu && (cuda_device_count() > 0 || !runs_on_host(plan))) {
      require_gpu(args.device, ctx);
      std::cerr << "decode-bench: (without a GPU only capacity points run, e.g. --experiment capacity)\n";
      return;
    }

    if (args.dry_run) {
      const std::string gpu = device_list.size() > 1 ? "the smallest GPU of --devices" : device.value("name", "");
      const DeviceMemory memory = dry_run_device_memory(args.device_memory, device_memory, gpu);
      const std::size_t cannot_fit = print_dry_run(plan, request.shard, RunnerRegistry::global(), memory, std::cout);
      ctx.exit_code = cannot_fit > 0 ? kExitUsage : kExitOk;
      return;
    }

    SweepOptions options;
    options.output = output_path(args, device);
    if (!report_flags.out.empty())
      if (const auto problem = benchmark_out_problem(report_flags.out, options.output))
        throw ConfigErrors("--benchmark_out", *problem);
    if (!args.resume.empty()) options.resume = args.resume;
    options.allow_mixed_devices = args.allow_mixed_devices;
    options.argv = ctx.argv;
    options.preset_label = args.preset;
    options.shard = request.shard;
    options.context.device = args.device;
    options.context.verify_on_host = run_paths.verify_on_host;
    options.context.fill_on_host = run_paths.fill_on_host;
    options.context.timing = timing;
    options.context.tuning = tuning;
    options.interrupted = &g_interrupted;
    options.progress = &std::cerr;
    std::cerr << "decode-bench: " << plan.points.size() << " points -> " << options.output.string()
              << " (streaming to " << options.output.string() << ".partial.jsonl)\n";
    std::signal(SIGINT, on_sigint);
    SweepOutcome outcome;
    if (device_list.empty()) {
      outcome = run_sweep(plan, RunnerRegistry::global(), hooks, options);
    } else {
      // Runners keep per-device state (the L2 flusher's buffer), so every worker gets its own.
      std::vector<std::unique_ptr<RunnerRegistry>> registries;
      std::vector<DeviceWorker> workers;
      for (int d : device_list) {
        registries.push_back(std::make_unique<RunnerRegistry>());
        register_builtin_runners(*registries.back());
        workers.push_back({d, gpu_driver_hooks(d), registries.back().get(), [d] { DB_CUDA_CHECK(cudaSetDevice(d)); }});
      }
      std::cerr << "decode-bench: one worker per device: " << args.devices << " (" << workers.size() << ")\n";
      outcome = run_sweep_on_devices(plan, workers, options);
    }
    std::signal(SIGINT, SIG_DFL);

    bool report_written = true;
    if (!report_flags.out.empty()) {
      const std::string format = report_flags.out_format.empty() ? "json" : report_flags.out_format;
      try {
        write_run_report(report_flags.out, outcome.document, format);
        std::cerr << "decode-bench: the run as " << format << " -> " << report_flags.out << " (--benchmark_out)\n";
      } catch (const std::exception& e) {
        std::cerr << "decode-bench: --benchmark_out: " << e.what() << " (the results file is written)\n";
        report_written = false;
      }
    }
    // The table, then the results file's name as the last line of standard output (scripts read
    // it there), flushed before the summary on stderr so a log of both keeps this order.
    std::cout << run_report(outcome.document, report_flags.format.empty() ? "console" : report_flags.format)
              << options.output.string() << "\n"
              << std::flush;
    std::cerr << "decode-bench: " << outcome.ran << " points run, " << outcome.resumed << " resumed, "
              << outcome.failed << " failed";
    if (!outcome.complete) std::cerr << "; stopped early: " << outcome.stop_reason << " (continue with --resume "
                                     << options.output.string() << ")";
    std::cerr << "\n";
    ctx.exit_code = outcome.complete && outcome.failed == 0 && report_written ? kExitOk : kExitRunFailed;
  } catch (const ConfigErrors& e) {
    report_config_errors(e, ctx);
  }
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("sweep", "Run a sweep preset on a GPU and write results JSON (default preset: quick)");
  static SweepArgs args;
  sub->add_option("--preset", args.preset, "Embedded preset name (decode-bench list) or a path ending in .json")
      ->capture_default_str();
  sub->add_option("--set", args.sets,
                  "Override an axis: KEY=VALUES or EXPERIMENT.KEY=VALUES; VALUES like 4096,8192 | 16..256:16 | "
                  "pow2:12..21 | '[1,2]' (repeatable; --list-axes shows the keys)");
  sub->add_option("--experiment", args.experiments, "Run only this experiment (repeatable)");
  sub->add_option("--output", args.output, "Results file (default: OUTPUT_DIR/<gpu>-<UTC time>.json)");
  sub->add_option("--output-dir", args.output_dir, "Directory for the default results file name")->capture_default_str();
  sub->add_option("--resume", args.resume,
                  "Keep the points already in this results file or .partial.jsonl and run the rest "
                  "(writes back to it unless --output is given)");
  sub->add_option("--shard", args.shard, "Run every n-th point starting at i (0 <= i < n); merge with decode-bench merge")
      ->capture_default_str();
  auto* device_opt = sub->add_option("--device", args.device, "CUDA device index")->capture_default_str();
  sub->add_option("--devices", args.devices,
                  "Run on several GPUs at once: 'all' or a list like 0,1 (one worker per GPU, points handed out "
                  "longest first, one results file recording each point's device)")
      ->excludes(device_opt);
  sub->add_option("--timing", args.timing, "Same as --set timing=cold|hot|cold_write")
      ->check(CLI::IsMember({"cold", "hot", "cold_write"}));
  sub->add_option("--verify", args.paths.verify,
                  "Float64 reference of decode points on the gpu (default) or the cpu (the slower old path)")
      ->capture_default_str();
  sub->add_option("--fill", args.paths.fill,
                  "Generate K/V/q in place on the device (default) or on the host and upload them (the old path)")
      ->capture_default_str();
  sub->add_flag("--no-counters", args.paths.no_counters, "Same as --set counters=false: no profiled counter pass");
  auto* dry_run = sub->add_flag("--dry-run", args.dry_run,
                                "Validate and list the points with the device memory each needs; no GPU needed");
  sub->add_option_function<std::string>(
         "--device-memory", [](const std::string& size) { args.device_memory = size; },
         "Device memory a dry run checks the points against, e.g. 80GiB (default: the GPU's, or 80 GiB without a GPU)")
      ->needs(dry_run);
  sub->add_flag("--list-axes", args.list_axes, "List every axis with its values and default");
  sub->add_option("--backend-lib", args.backend_libs,
                  "Load the backends of a plugin library built against include/decode_bench/backend.h; they "
                  "join the backend axis (repeatable; docs/backends.md)");
  sub->add_flag("--allow-mixed-devices", args.allow_mixed_devices, "Resume from a file recorded on another device");
  args.measure.add_to(sub,
                      "Run only the points whose id matches this POSIX extended regular expression (searched "
                      "anywhere in the id; a leading '-' negates), selected while planning: --dry-run, --shard and "
                      "the point counts see only them; docs/sweeps.md");
  sub->callback([&ctx] { run(args, ctx); });
}

}  // namespace decode_bench::cli
