// `decode-bench profile-selftest` (hidden): runs the counter self-test kernels through the CUPTI
// range profiler and prints measured against closed-form values. With --no-counters it only runs
// the kernels, for a cross-check under Nsight Compute:
//   ncu --clock-control none --metrics <list printed here> decode-bench profile-selftest --no-counters
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <variant>

#include "harness/counters/counter_selftest.hpp"
#include "harness/counters/metric_table.hpp"
#include "harness/counters/range_profiler.hpp"
#include "harness/cuda_check.hpp"
#include "sweeps/cli/command.hpp"

namespace decode_bench::cli {
namespace {

struct SelftestOptions {
  int device = 0;
  double gib = 1.0;
  std::string extra_metrics;
  bool no_counters = false;
  bool whole_launch = false;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

int run_selftest(const SelftestOptions& opt) {
  using namespace decode_bench::counters;
  const auto metrics = metric_names_with_extras(opt.extra_metrics);
  const auto bytes = static_cast<std::size_t>(opt.gib * (1ull << 30));
  SelftestWorkload workload(opt.device, bytes);
  std::cout << "profile-selftest: N = " << workload.bytes() << " bytes\nmetrics: " << joined(metrics) << "\n";

  std::variant<RangeProfiler, std::string> made = std::string("counters disabled (--no-counters)");
  if (!opt.no_counters) {
    RangeProfilerOptions ro;
    ro.range_mode = opt.whole_launch ? RangeMode::whole_launch : RangeMode::per_kernel;
    made = RangeProfiler::create(opt.device, metrics, ro);
  }
  cudaStream_t stream{};
  DB_CUDA_CHECK(cudaStreamCreate(&stream));
  bool passed = true;
  for (const auto& c : workload.cases()) {
    std::cout << "\n== " << c.name << " (kernel " << c.kernel_name << ")\n";
    if (auto* reason = std::get_if<std::string>(&made)) {
      workload.flush_l2(stream);
      DB_CUDA_CHECK(c.launch(stream));
      DB_CUDA_CHECK(cudaStreamSynchronize(stream));
      std::cout << "ran without counters: " << *reason << "\n";
      continue;
    }
    auto& profiler = std::get<RangeProfiler>(made);
    const auto result = profiler.profile(c.launch, stream, [&](cudaStream_t s) { workload.flush_l2(s); });
    std::cout << "passes " << result.at("passes") << ", ranges " << result.at("ranges") << ", chip "
              << result.at("chip").get<std::string>() << "\n";
    for (const auto& [metric, value] : raw_map(result)) {
      std::printf("  %-55s %20.1f", metric.c_str(), value);
      if (const auto e = c.expected.find(metric); e != c.expected.end()) {
        const double rel = std::abs(value - e->second) / e->second;
        const bool ok = rel <= c.tolerance.at(metric) + 1e-12;
        passed = passed && ok;
        std::printf("   expected %.1f (rel. error %.4f, allowed %.4f) %s", e->second, rel, c.tolerance.at(metric),
                    ok ? "ok" : "FAILED");
      }
      std::printf("\n");
    }
  }
  DB_CUDA_CHECK(cudaStreamDestroy(stream));
  const bool measured = std::holds_alternative<RangeProfiler>(made);
  std::cout << "\nDisposition: " << (!measured ? "Not measured" : passed ? "Passed" : "Failed") << "\n";
  return measured && !passed ? kExitRunFailed : kExitOk;
}

}  // namespace

void add_profile_selftest_command(CLI::App& app, CommandContext& ctx) {
  auto* sub = app.add_subcommand("profile-selftest", "Check the CUPTI counters on kernels with known counts");
  sub->group("");  // hidden: a tool for checking the profiler, not a user workflow
  static SelftestOptions opt;
  sub->add_option("--device", opt.device, "CUDA device index")->capture_default_str();
  sub->add_option("--gib", opt.gib, "Bytes read/copied by the memory kernels, in GiB")->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--metrics", opt.extra_metrics, "Extra Perfworks metrics, comma-separated");
  sub->add_flag("--no-counters", opt.no_counters, "Only run the kernels (to profile them with ncu)");
  sub->add_flag("--whole-launch", opt.whole_launch, "One user range per launch instead of one per kernel");
  sub->callback([&ctx] {
    if (!require_gpu(opt.device, ctx)) return;
    ctx.exit_code = run_selftest(opt);
  });
}

}  // namespace decode_bench::cli
