// `decode-bench ceilings`: device info and the measured ceilings, as a table on stdout and, with
// --output, as a results document (docs/results.md) with empty points, preset "ceilings", so
// plots/ and compare read it like any other run.
#include <iostream>
#include <string>

#include "harness/ceiling_kernels.hpp"
#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/cli/command.hpp"

namespace decode_bench::cli {

void add_ceilings_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("ceilings", "Measure this GPU's bandwidth and compute ceilings");
  static int device = 0;
  static std::string output;
  static bool quick = false;
  static int repetitions = 5;
  sub->add_option("--device", device, "CUDA device index")->capture_default_str();
  sub->add_option("--output", output, "Write a results document (empty points) to this file");
  sub->add_flag("--quick", quick, "One or two variants per ceiling and 3 repetitions (about a second)");
  sub->add_option("--repetitions", repetitions, "Repetitions per variant (Google Benchmark's "
                                                "--benchmark_repetitions wins when given)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->callback([&ctx] {
    if (!require_gpu(device, ctx)) return;
    const DeviceInfo info = query_device_info(device);
    nlohmann::json device_json = to_json(info);
    DB_CUDA_CHECK(cudaSetDevice(device));
    device_json["sm_clock_measured_khz"] = measure_sm_clock_khz(nullptr);

    CeilingOptions options;
    options.quick = quick;
    options.repetitions = repetitions;
    options.progress = &std::cerr;
    const nlohmann::json ceilings = measure_ceilings(device, options);

    std::cout << info.name << " (sm_" << info.cc_major << info.cc_minor << ", " << info.sm_count << " SMs, "
              << info.l2_bytes / (1 << 20) << " MiB L2, SM clock " << info.sm_clock_khz / 1000 << " MHz peak / "
              << static_cast<long long>(device_json["sm_clock_measured_khz"].get<double>() / 1000)
              << " MHz measured)\n"
              << format_ceilings_table(ceilings, device_json);
    if (!output.empty()) {
      nlohmann::json doc = make_results_document(make_meta(ctx.argv, "ceilings"), device_json);
      doc["ceilings"] = ceilings;
      write_results(output, doc);
      std::cout << "wrote " << output << "\n";
    }
    ctx.exit_code = kExitOk;
  });
}

}  // namespace decode_bench::cli
