// GPU: the range profiler against kernels with closed-form counts (counter_selftest.hpp). The
// read kernel's dram__bytes_read must be within 2% of the bytes it reads; instruction counts of
// the FMA loops must be exact. Skipped without a GPU; skipped with the reason (and its fix) when
// the counters are not permitted, so a machine without profiling rights is not a failure.
#include <cmath>
#include <variant>

#include <gtest/gtest.h>

#include "harness/counters/counter_selftest.hpp"
#include "harness/counters/derived_metrics.hpp"
#include "harness/counters/metric_table.hpp"
#include "harness/counters/range_profiler.hpp"
#include "harness/cuda_check.hpp"
#include "gpu_test_support.hpp"

namespace {

using namespace decode_bench::counters;

TEST(CountersGpu, SelftestKernelsMatchClosedForms) {
  DB_REQUIRE_GPU();
  auto made = RangeProfiler::create(0, metric_names_with_extras(""));
  if (auto* reason = std::get_if<std::string>(&made)) GTEST_SKIP() << *reason;
  auto& profiler = std::get<RangeProfiler>(made);
  SelftestWorkload workload(0, std::size_t{1} << 30);
  cudaStream_t stream{};
  DB_CUDA_CHECK(cudaStreamCreate(&stream));
  for (const auto& c : workload.cases()) {
    const auto result = profiler.profile(c.launch, stream, [&](cudaStream_t s) { workload.flush_l2(s); });
    const auto raw = raw_map(result);
    for (const auto& [metric, expected] : c.expected) {
      const double rel = std::abs(raw.at(metric) - expected) / expected;
      EXPECT_LE(rel, c.tolerance.at(metric) + 1e-12)
          << c.name << " " << metric << ": measured " << raw.at(metric) << ", expected " << expected;
    }
    // The derivation runs on real values too: duration positive, DRAM bandwidth finite.
    const auto derived = derive_counters(raw, {{"bytes", static_cast<double>(workload.bytes())}, {"flops", 1.0}});
    EXPECT_GT(derived.at("duration_ns").get<double>(), 0) << c.name;
    EXPECT_TRUE(std::isfinite(derived.at("levels").at("dram").at("gbps").get<double>())) << c.name;
  }
  DB_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST(CountersGpu, ReplayedPassesAgreeWithEachOther) {
  DB_REQUIRE_GPU();
  auto made = RangeProfiler::create(0, metric_names_with_extras(""));
  if (auto* reason = std::get_if<std::string>(&made)) GTEST_SKIP() << *reason;
  auto& profiler = std::get<RangeProfiler>(made);
  SelftestWorkload workload(0, std::size_t{256} << 20);
  const auto read = workload.cases().front();
  const auto flush = [&](cudaStream_t s) { workload.flush_l2(s); };
  const auto a = raw_map(profiler.profile(read.launch, nullptr, flush));
  const auto b = raw_map(profiler.profile(read.launch, nullptr, flush));
  EXPECT_NEAR(a.at("dram__bytes_read.sum"), b.at("dram__bytes_read.sum"), 0.01 * a.at("dram__bytes_read.sum"));
}

}  // namespace
