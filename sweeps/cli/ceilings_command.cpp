// `decode-bench ceilings`: device info and the measured ceilings, as a table on stdout and, with
// --output, as a results document (docs/results.md) with empty points, preset "ceilings", so
// plots/ and compare read it like any other run.
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "harness/ceiling_kernels.hpp"
#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/results_schema.hpp"
#include "harness/timing_result.hpp"
#include "sweeps/cli/command.hpp"
#include "sweeps/cli/measure_flags.hpp"

namespace decode_bench::cli {

void add_ceilings_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("ceilings", "Measure this GPU's bandwidth and compute ceilings");
  static int device = 0;
  static std::string output;
  static bool quick = false;
  static MeasureFlags measure;  // --filter, --repetitions, --min-time, ... and their --benchmark_* twins
  sub->add_option("--device", device, "CUDA device index")->capture_default_str();
  sub->add_option("--output", output, "Write a results document (empty points) to this file");
  sub->add_flag("--quick", quick, "One or two variants per ceiling and 3 repetitions (about a second)");
  measure.add_to(sub, "Time only the variants whose name (ceilings/<ceiling>/<kernel>/<key>:<value>..., the read "
                      "floor's ceilings/dram_read/floor/...) matches this POSIX extended regular expression (a "
                      "leading '-' negates)");
  sub->callback([&ctx] {
    // The flags first: a bad one is refused before the GPU is touched.
    CeilingOptions options;
    options.quick = quick;
    options.progress = &std::cerr;
    std::optional<GivenFlag> filter;
    TimingOptions timing;
    try {
      options.timing_flags = measure.timing();
      timing = ceiling_timing_options(quick, options.timing_flags);
      (void)read_floor_timing_options(options.timing_flags);
      filter = measure.filter();
    } catch (const std::invalid_argument& e) {  // the message names the flag
      std::cerr << "decode-bench: " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    try {
      if (filter) options.filter.emplace(filter->value);
    } catch (const std::invalid_argument& e) {
      std::cerr << "decode-bench: " << filter->flag << " " << e.what() << "\n";
      ctx.exit_code = kExitUsage;
      return;
    }
    if (!require_gpu(device, ctx)) return;
    const DeviceInfo info = query_device_info(device);
    nlohmann::json device_json = to_json(info);
    DB_CUDA_CHECK(cudaSetDevice(device));
    device_json["sm_clock_measured_khz"] = measure_sm_clock_khz(nullptr);

    nlohmann::json ceilings;
    try {
      ceilings = measure_ceilings(device, options);
    } catch (const std::invalid_argument& e) {  // the flags were checked above: a filter that selects nothing
      std::cerr << "decode-bench: " << (filter ? filter->flag + " " : "") << e.what() << "\n";
      ctx.exit_code = kExitUsage;
      return;
    }

    std::cout << info.name << " (sm_" << info.cc_major << info.cc_minor << ", " << info.sm_count << " SMs, "
              << info.l2_bytes / (1 << 20) << " MiB L2, SM clock " << info.sm_clock_khz / 1000 << " MHz peak / "
              << static_cast<long long>(device_json["sm_clock_measured_khz"].get<double>() / 1000)
              << " MHz measured)\n"
              << format_ceilings_table(ceilings, device_json);
    if (!output.empty()) {
      nlohmann::json meta = make_meta(ctx.argv, "ceilings");
      meta["timing"] = to_json(timing);  // the variants' (the read floor records its own)
      nlohmann::json doc = make_results_document(meta, device_json);
      doc["ceilings"] = ceilings;
      write_results(output, doc);
      std::cout << "wrote " << output << "\n";
    }
    ctx.exit_code = kExitOk;
  });
}

}  // namespace decode_bench::cli
