// The timing engine on a real GPU (skipped without one): a kernel of known duration, the L2
// flush, the ceilings' order, and both kinds of CUDA error.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/ceiling_kernels.hpp"
#include "harness/ceiling_wgmma.hpp"
#include "harness/ceilings.hpp"
#include "harness/read_floor.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/results_schema.hpp"
#include "harness/timing.hpp"
#include "tests/gpu_fault_kernel.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

// A clock64 spin of fixed cycles, sized to `us` microseconds at the SM clock measured while a
// spin kernel runs. Each launch also stores the cycles it spun and its own %globaltimer
// duration, so the test knows what the kernel really took even if the clock moved since it was
// measured (boost clocks do).
struct KnownSpin {
  double nominal_us = 0;    // cycles / measured clock
  double clock_khz = 0;     // measured before the test
  unsigned long long* elapsed = nullptr;  // device: {cycles, ns} of the last launch
  LaunchFn launch;

  explicit KnownSpin(double us) : nominal_us(us), clock_khz(measure_sm_clock_khz(nullptr)) {
    DB_CUDA_CHECK(cudaMalloc(&elapsed, 2 * sizeof(unsigned long long)));
    const long long cycles = std::llround(us * 1e-3 * clock_khz);
    launch = [cycles, p = elapsed](cudaStream_t s) { return launch_clock_spin(cycles, p, s); };
  }
  ~KnownSpin() { cudaFree(elapsed); }
  // The last launch's own duration by the GPU's global timer, in microseconds.
  double in_kernel_us() const {
    unsigned long long host[2] = {};
    DB_CUDA_CHECK(cudaMemcpy(host, elapsed, sizeof host, cudaMemcpyDeviceToHost));
    return 1e-3 * static_cast<double>(host[1]);
  }
  std::string describe(const TimingResult& r) const {
    return "clock " + std::to_string(clock_khz / 1e3) + " MHz, nominal " + std::to_string(nominal_us) +
           " us, in-kernel " + std::to_string(in_kernel_us()) + " us, events median " + std::to_string(r.stats.median) +
           " us (min " + std::to_string(r.stats.min) + ", max " + std::to_string(r.stats.max) + ")";
  }
};

TimingOptions quick_options(TimingMode mode) {
  TimingOptions o;
  o.mode = mode;
  o.min_rep_time_ms = 5;
  return o;
}

// Events against two independent clocks: the cycles the kernel spun at the SM clock measured
// beforehand, and the kernel's own %globaltimer span.
TEST(TimingGpu, EventsMeasureAKnownSpinWithinFivePercent) {
  DB_REQUIRE_GPU();
  L2Flusher flusher(0);
  const KnownSpin spin(500);
  for (TimingMode mode : {TimingMode::hot, TimingMode::cold}) {
    TimingOptions o = quick_options(mode);
    const TimingResult r = time_launches("spin_500us", spin.launch, o, flusher, nullptr);
    ASSERT_TRUE(r.ok()) << r.error;
    std::cout << "[ spin     ] " << to_string(mode) << ": " << spin.describe(r) << "\n";
    EXPECT_EQ(r.plan.method, TimingMethod::events);
    EXPECT_EQ(r.samples_us.size(), 5u);
    EXPECT_NEAR(r.stats.median, spin.in_kernel_us(), 0.05 * spin.in_kernel_us()) << spin.describe(r);
    EXPECT_NEAR(r.stats.median, spin.nominal_us, 0.05 * spin.nominal_us) << spin.describe(r);
    EXPECT_NO_THROW(r.to_json());
  }
}

// A graph of back-to-back launches still pays the dependent-launch gap between its kernel nodes
// (1.06 us per launch on the H100, against 3.3 us of event overhead around a single launch), so
// the graph figure is the kernel plus at most that gap: never less than the kernel, and within
// 1.5 us of it.
TEST(TimingGpu, GraphMeasuresAShortSpinToWithinOneLaunchGap) {
  DB_REQUIRE_GPU();
  L2Flusher flusher(0);
  const KnownSpin spin(10);
  const TimingResult r = time_launches("spin_10us", spin.launch, quick_options(TimingMode::hot), flusher, nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  std::cout << "[ spin     ] graph: " << spin.describe(r) << ", " << r.plan.launches_per_sample << " launches/sample\n";
  EXPECT_EQ(r.plan.method, TimingMethod::graph);
  EXPECT_GE(r.plan.launches_per_sample, 10);
  EXPECT_GE(r.stats.median, 0.99 * spin.in_kernel_us()) << spin.describe(r);
  EXPECT_LE(r.stats.median, spin.in_kernel_us() + 1.5) << spin.describe(r);
}

// sweep --devices times from one thread per GPU: concurrent callers take turns (Google Benchmark
// has one process-wide registry), so each gets its own kernel's samples, not a mix or a crash.
TEST(TimingGpu, ConcurrentCallersOnTwoThreadsEachTimeTheirOwnKernel) {
  DB_REQUIRE_GPU();
  const KnownSpin short_spin(100), long_spin(400);
  TimingResult results[2];
  std::thread threads[2];
  for (int k = 0; k < 2; ++k)
    threads[k] = std::thread([&, k] {
      DB_CUDA_CHECK(cudaSetDevice(0));
      L2Flusher flusher(0);
      const KnownSpin& spin = k == 0 ? short_spin : long_spin;
      for (int round = 0; round < 3; ++round)
        results[k] = time_launches(k == 0 ? "spin_100us" : "spin_400us", spin.launch, quick_options(TimingMode::hot),
                                   flusher, nullptr);
    });
  for (auto& t : threads) t.join();
  ASSERT_TRUE(results[0].ok()) << results[0].error;
  ASSERT_TRUE(results[1].ok()) << results[1].error;
  EXPECT_EQ(results[0].name, "spin_100us");
  EXPECT_NEAR(results[0].stats.median, short_spin.nominal_us, 0.05 * short_spin.nominal_us);
  EXPECT_NEAR(results[1].stats.median, long_spin.nominal_us, 0.05 * long_spin.nominal_us);
}

TEST(TimingGpu, FlushedSixteenMebibyteReadIsSlowerThanHot) {
  DB_REQUIRE_GPU();
  const DeviceInfo info = query_device_info(0);
  if (info.l2_bytes < (32 << 20)) GTEST_SKIP() << "needs an L2 of at least 32 MiB to hold 16 MiB hot";
  void* buffer = nullptr;
  unsigned* sink = nullptr;
  DB_CUDA_CHECK(cudaMalloc(&buffer, 16 << 20));
  DB_CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
  DB_CUDA_CHECK(cudaMemset(buffer, 0, 16 << 20));
  CeilingWorkspace ws;
  ws.buffer = buffer;
  ws.buffer_bytes = 16 << 20;
  ws.sink = sink;
  const CeilingVariant read = make_ceiling_variants(ws, info.sm_count, /*quick=*/true).front();
  ASSERT_EQ(read.ceiling, "dram_read");
  L2Flusher flusher(0);
  double median[2] = {};
  for (TimingMode mode : {TimingMode::hot, TimingMode::cold}) {
    TimingOptions o = quick_options(mode);
    o.graph_threshold_us = 0;  // events in both modes: the flush is the only difference
    const TimingResult r = time_launches("read_16MiB", read.launch, o, flusher, nullptr);
    ASSERT_TRUE(r.ok()) << r.error;
    median[mode == TimingMode::cold] = r.stats.median;
  }
  std::cout << "[ flush    ] 16 MiB read: hot " << median[0] << " us, cold " << median[1] << " us\n";
  EXPECT_GT(median[1], 1.15 * median[0]) << "hot " << median[0] << " us, cold " << median[1] << " us";
  cudaFree(buffer);
  cudaFree(sink);
}

TEST(TimingGpu, CeilingsAreOrderedSensibly) {
  DB_REQUIRE_GPU();
  const DeviceInfo info = query_device_info(0);
  CeilingOptions o;
  o.quick = true;
  const nlohmann::json c = measure_ceilings(0, o);
  const bool hopper = info.cc_major == 9 && info.cc_minor == 0;
  const auto wgmma_ceilings_in_build = [] { return wgmma_ceiling_kernel(WgmmaCeilingInput::f16, 1).kernel != nullptr; };
  for (auto name : kCeilingNames) {
    if (name.ends_with("_wgmma") && !(hopper && wgmma_ceilings_in_build())) {
      EXPECT_FALSE(c.contains(std::string(name))) << name << ": refused off sm_90a, never measured";
      continue;
    }
    ASSERT_TRUE(c.contains(std::string(name))) << name;
    EXPECT_GT(c[std::string(name)]["value"].get<double>(), 0) << name;
    EXPECT_TRUE(c[std::string(name)]["config"].is_object()) << name;
  }
  auto v = [&c](const char* name) { return c[name]["value"].get<double>(); };
  EXPECT_GT(v("l1_shared"), v("l2_read"));
  EXPECT_GT(v("l2_read"), v("dram_read"));
  EXPECT_GT(v("dram_read"), v("dram_copy") / 2);
  EXPECT_LE(v("dram_read"), 1.02 * info.theoretical_dram_gbps()) << "faster than the bus: the ceiling is wrong";
  EXPECT_GT(v("fp16_tensor"), v("fp16_fma"));
  if (hopper && wgmma_ceilings_in_build()) {
    // Warpgroup MMA is Hopper's full-rate tensor path: at least mma.sync's rate at every 16-bit
    // type, and FP8 at least the 16-bit rate.
    EXPECT_GE(v("fp16_tensor_wgmma"), v("fp16_tensor"));
    EXPECT_GE(v("bf16_tensor_wgmma"), v("fp16_tensor"));
    EXPECT_GE(v("fp8_e4m3_tensor_wgmma"), v("fp16_tensor_wgmma"));
  }
  EXPECT_GE(v("fp16_fma"), 0.9 * v("fp32_fma"));
  // The read floor: 1 MiB .. 1 GiB (the quick buffer), each size no faster than the one half its size, none
  // reading faster than the hot ceiling, the largest within reach of it.
  const auto floor = read_floor_samples(c);
  ASSERT_EQ(floor.size(), read_floor_sizes(std::uint64_t{1} << 30).size());
  for (std::size_t i = 0; i < floor.size(); ++i) {
    const double gbps = floor[i].bytes / floor[i].median_us / 1e3;
    EXPECT_LE(gbps, 1.02 * v("dram_read")) << floor[i].bytes << " bytes";
    if (i > 0) {
      EXPECT_GT(floor[i].median_us, floor[i - 1].median_us * 0.95) << floor[i].bytes << " bytes";
    }
  }
  EXPECT_GT(floor.back().bytes / floor.back().median_us / 1e3, 0.8 * v("dram_read"));
  nlohmann::json doc = make_results_document(make_meta({"test"}, "ceilings"), to_json(info));
  doc["ceilings"] = c;
  EXPECT_NO_THROW(validate_results(doc));
}

// The floor at sizes of one's choosing (decode-read-floor): one sample per size in the order
// given, the larger read no faster; sizes outside (0, memory / 4] refused by value.
TEST(TimingGpu, ReadFloorAtChosenSizesAndRefusesBadOnes) {
  DB_REQUIRE_GPU();
  const std::vector<std::uint64_t> sizes = {std::uint64_t{8} << 20, std::uint64_t{1} << 20};
  const nlohmann::json floor = measure_read_floor(0, sizes);
  ASSERT_EQ(floor["samples"].size(), 2u) << floor.dump();
  EXPECT_EQ(floor["samples"][0]["bytes"].get<std::uint64_t>(), sizes[0]);
  EXPECT_EQ(floor["samples"][1]["bytes"].get<std::uint64_t>(), sizes[1]);
  EXPECT_GT(floor["samples"][0]["median_us"].get<double>(), floor["samples"][1]["median_us"].get<double>());
  const auto too_big = static_cast<std::uint64_t>(query_device_info(0).memory_bytes);
  for (const std::vector<std::uint64_t>& bad : {std::vector<std::uint64_t>{0}, std::vector<std::uint64_t>{too_big},
                                                std::vector<std::uint64_t>{}}) {
    EXPECT_THROW(measure_read_floor(0, bad), std::invalid_argument);
  }
}

TEST(TimingGpu, LaunchErrorFailsThePointButNotTheRun) {
  DB_REQUIRE_GPU();
  L2Flusher flusher(0);
  const TimingResult bad = time_launches(
      "bad_launch", [](cudaStream_t) { return cudaErrorInvalidConfiguration; }, quick_options(TimingMode::hot),
      flusher, nullptr);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.error.find("cudaErrorInvalidConfiguration"), std::string::npos) << bad.error;
  EXPECT_FALSE(bad.sticky_error);
  const KnownSpin spin(50);
  const TimingResult good = time_launches("after_bad", spin.launch, quick_options(TimingMode::hot), flusher, nullptr);
  EXPECT_TRUE(good.ok()) << good.error;
}

// A slow kernel's measurement launches it warm-up + probe + one per sample + the one sample left
// in flight after the last repetition, in either mode (hot adds one untimed launch up front): the
// sample queued behind a repetition's last one is read by the next repetition, not discarded.
TEST(TimingGpu, SlowKernelLaunchCountIsWarmupProbeSamplesAndOne) {
  DB_REQUIRE_GPU();
  L2Flusher flusher(0);
  KnownSpin spin(3000);  // 3 ms: one launch per repetition at min_rep_time_ms 2
  for (const TimingMode mode : {TimingMode::cold, TimingMode::hot}) {
    TimingOptions o;
    o.mode = mode;
    o.repetitions = 4;
    o.warmup = 2;
    int launches = 0;
    const TimingResult r = time_launches(
        "spin_3ms", [&](cudaStream_t st) { ++launches; return spin.launch(st); }, o, flusher, nullptr);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(r.samples_us.size(), 4u);
    EXPECT_EQ(r.iterations_per_repetition, 1);
    EXPECT_EQ(launches, 2 + 1 + 4 + 1 + (mode == TimingMode::hot ? 1 : 0)) << to_string(mode);
    EXPECT_NEAR(r.stats.median, spin.nominal_us, 0.05 * spin.nominal_us) << spin.describe(r);
  }
}

// An unreachable noise target takes samples up to the cap, one registration per repetition, and
// still launches warm-up + probe + samples + the one left in flight; the JSON says the target
// was missed. The launches alternate between spins of 3 and 3.3 ms, so the samples' spread is a
// few percent whatever the clock: one spin of a fixed cycle count can time the same to the
// events' resolution three times running, which met a target of 1e-12 (H100, cd1073d).
TEST(TimingGpu, AnUnmetNoiseTargetStopsAtTheCap) {
  DB_REQUIRE_GPU();
  L2Flusher flusher(0);
  KnownSpin shorter(3000);  // 3 ms: one launch per repetition at min_rep_time_ms 2
  KnownSpin longer(3300);
  TimingOptions o;
  o.mode = TimingMode::cold;
  o.repetitions = 3;
  o.warmup = 2;
  o.noise_cv = 0.01;  // under the alternating spins' spread of about 5%
  o.max_repetitions = 7;
  int launches = 0;
  const TimingResult r = time_launches(
      "spin_target", [&](cudaStream_t st) { return (launches++ % 2 ? longer : shorter).launch(st); }, o, flusher,
      nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.samples_us.size(), 7u);
  EXPECT_EQ(r.stopped_by, TimingStop::max_repetitions);
  EXPECT_EQ(r.iterations_per_repetition, 1);
  EXPECT_EQ(launches, 2 + 1 + 7 + 1);
  EXPECT_EQ(r.to_json()["cv_target_met"], false);
}

// A time limit shorter than the warm-up leaves one sample (a timing always has one).
TEST(TimingGpu, ATimeLimitCutsTheRepetitionsShort) {
  DB_REQUIRE_GPU();
  L2Flusher flusher(0);
  KnownSpin spin(3000);
  TimingOptions o;
  o.mode = TimingMode::hot;
  o.repetitions = 5;
  o.point_time_limit_s = 0.001;  // the two 3 ms warm-up launches alone take longer
  const TimingResult r = time_launches("spin_limit", spin.launch, o, flusher, nullptr);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.samples_us.size(), 1u);
  EXPECT_EQ(r.stopped_by, TimingStop::time_limit);
}

TEST(TimingGpuDeathTest, IllegalAddressIsStickyAndReported) {
  DB_REQUIRE_GPU();
  // The fault poisons the CUDA context, so it runs in a fresh child process.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        L2Flusher flusher(0);
        const TimingResult r = time_launches("fault", test::launch_illegal_write, quick_options(TimingMode::hot),
                                             flusher, nullptr);
        std::exit(!r.ok() && r.sticky_error && r.error.find("cudaErrorIllegalAddress") != std::string::npos ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace decode_bench
