// A serving trace on the GPU (kernel = trace, sweeps/trace_runner.hpp): short traces through a
// contiguous and a paged pool small enough that requests queue (and pages run out), every
// sampled step's decode output against the float64 reference and every stored K/V row against
// the values the trace wrote, the step records' accounting, one seed one schedule, and Ctrl-C
// mid-trace keeping the steps measured so far. Skipped (with the reason) where no GPU exists.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "harness/cuda_check.hpp"
#include "harness/results_schema.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/trace_runner.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

// 2 KV heads x 128 x fp16: 1 KiB of K + V a token. 1 MiB holds 8 contiguous slabs of
// 2 x (40 + 24) = 128 tokens, or 64 pages of 16: at one arrival a step and 24 output tokens on
// average, about 24 requests want to run at once, so both pools queue.
json trace_preset() {
  return testing::one_experiment(
      {{"layout", {"contiguous", "paged"}}},
      {{"kernel", "trace"}, {"heads_q", 8}, {"heads_kv", 2}, {"head_dim", 128}, {"dtype", "fp16"},
       {"requests", 48}, {"arrival_rate", 1.0}, {"trace_lengths", "uniform"}, {"prompt_len", 40},
       {"output_len", 24}, {"fragmentation", 2.0}, {"page_size", 16}, {"page_order", "shuffled"},
       {"budget_bytes", 1 << 20}, {"steps", 1000}, {"verify_every", 7}, {"seed", 11}});
}

// The same data through the same plans: the same errors against the reference, up to the order
// of FP32 sums. Split-K decodes over paged K/V let a split take the tail tiles of another (work
// stealing, docs/kernels/rows_mma.md), so which block sums which tiles, and with it the last bits
// of an output, depends on timing. Reordering sums of O(1) terms moves an output by a few FP32 ulps,
// far below 1e-6, itself a thousandth of the half-precision tolerance; data that went wrong
// (a stale row, a wrong page) moves it by orders of magnitude more.
void expect_same_error(const json& a, const json& b, std::size_t step) {
  const double ea = a["max_abs_error"].get<double>(), eb = b["max_abs_error"].get<double>();
  EXPECT_NEAR(ea, eb, 1e-6) << "verified step " << step;
}

std::int64_t sum(const json& column) {
  std::int64_t s = 0;
  for (const json& v : column) s += v.get<std::int64_t>();
  return s;
}

void expect_consistent_trace(const json& r, bool paged) {
  ASSERT_EQ(r.value("status", ""), kStatusOk) << r.dump().substr(0, 2000);
  const json& tr = r["trace"];
  const json& steps = tr["steps"];
  const json& summary = tr["summary"];
  const std::size_t n = summary["steps"].get<std::size_t>();
  ASSERT_GT(n, 0u);
  ASSERT_LT(n, 1000u) << "the trace finished before the step limit";
  EXPECT_FALSE(tr["interrupted"].get<bool>());
  for (const auto& [key, column] : steps.items()) ASSERT_EQ(column.size(), n) << key;

  // Every request arrived, and each was finished or rejected; admissions = finishes + preemptions.
  EXPECT_EQ(sum(steps["arrived"]), 48);
  EXPECT_EQ(sum(steps["finished"]) + sum(steps["rejected"]), 48);
  EXPECT_EQ(sum(steps["admitted"]), sum(steps["finished"]) + sum(steps["preempted"]));
  EXPECT_EQ(summary["tokens"].get<std::int64_t>(), sum(steps["running"]));
  EXPECT_EQ(summary["finished"], sum(steps["finished"]));
  // The pool was full: requests waited.
  std::int64_t max_queued = 0, peak = 0;
  for (const json& q : steps["queued"]) max_queued = std::max(max_queued, q.get<std::int64_t>());
  for (const json& q : steps["running"]) peak = std::max(peak, q.get<std::int64_t>());
  EXPECT_GT(max_queued, 0);
  EXPECT_EQ(summary["peak_running"].get<std::int64_t>(), peak);
  const json& pool = tr["pool"];
  if (!paged) {
    EXPECT_LE(peak, pool["slots"].get<std::int64_t>());
  }
  const std::uint64_t arena = pool["arena_bytes"].get<std::uint64_t>();
  EXPECT_LE(arena, std::uint64_t{1} << 20);
  for (std::size_t i = 0; i < n; ++i) {
    const auto running = steps["running"][i].get<std::int64_t>();
    const auto decoded = steps["decoded"][i].get<std::int64_t>();
    EXPECT_LE(steps["bytes_used"][i].get<std::uint64_t>(), steps["bytes_reserved"][i].get<std::uint64_t>()) << i;
    EXPECT_LE(steps["bytes_reserved"][i].get<std::uint64_t>(), arena) << i;
    if (running > 0) {
      EXPECT_GT(steps["gpu_us"][i].get<double>(), 0.0) << i;
      EXPECT_GE(steps["host_us"][i].get<double>(), steps["plan_us"][i].get<double>()) << i;
      if (paged) {
        EXPECT_EQ(decoded, running) << i;
      } else {
        EXPECT_GE(decoded, running) << i << ": the slot span holds every running sequence";
      }
    }
  }
  EXPECT_GT(summary["tokens_per_s"].get<double>(), 0.0);
  EXPECT_LE(summary["p50_step_us"].get<double>(), summary["p99_step_us"].get<double>());

  // The sampled steps: the first, every 7th and the last, each verified, every row as written.
  const json& v = r["verification"];
  EXPECT_TRUE(v["passed"].get<bool>());
  std::set<std::int64_t> want;
  for (std::size_t i = 0; i < n; ++i)
    if (steps["running"][i].get<std::int64_t>() > 0 && (i == 0 || i % 7 == 0 || i == n - 1))
      want.insert(static_cast<std::int64_t>(i));
  std::set<std::int64_t> got;
  for (const json& c : v["steps"]) {
    got.insert(c["step"].get<std::int64_t>());
    EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
    EXPECT_EQ(c["non_finite"], 0) << c.dump();
    EXPECT_EQ(c["row_mismatches"], 0) << c.dump();
    EXPECT_GT(c["rows_checked"].get<std::int64_t>(), 0);
    EXPECT_EQ(c["running"], steps["running"][c["step"].get<std::size_t>()]);
  }
  EXPECT_EQ(got, want);
}

TEST(TraceGpu, ShortTracesVerifyAndKeepTheirAccountsOnBothPools) {
  DB_REQUIRE_GPU();
  const Plan plan = testing::plan_of(trace_preset());
  ASSERT_EQ(plan.points.size(), 2u);
  auto runner = make_trace_runner();
  std::int64_t peak[2] = {0, 0};
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    ASSERT_FALSE(runner->cannot_run(point).has_value()) << *runner->cannot_run(point);
    RunContext ctx;
    const json r = runner->run(point, ctx);
    const bool paged = point.parameters["layout"] == "paged";
    expect_consistent_trace(r, paged);
    peak[paged] = r["trace"]["summary"]["peak_running"].get<std::int64_t>();
    EXPECT_GT(ctx.measured_seconds, 0.0);
  }
  // The same bytes hold more sequences in pages than in slabs of twice the mean length.
  EXPECT_GT(peak[1], peak[0]);
}

TEST(TraceGpu, OneSeedGivesOneScheduleAndOneOutput) {
  DB_REQUIRE_GPU();
  const Plan plan = testing::plan_of(trace_preset());
  auto runner = make_trace_runner();
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    RunContext a, b;
    const json ra = runner->run(point, a), rb = runner->run(point, b);
    ASSERT_EQ(ra.value("status", ""), kStatusOk);
    ASSERT_EQ(rb.value("status", ""), kStatusOk);
    for (const char* key : {"running", "queued", "arrived", "admitted", "rejected", "preempted", "finished",
                            "bytes_reserved", "bytes_used", "decoded"})
      EXPECT_EQ(ra["trace"]["steps"][key], rb["trace"]["steps"][key]) << key;
    // The same data, lengths, plans and kernels: the same errors against the reference.
    ASSERT_EQ(ra["verification"]["steps"].size(), rb["verification"]["steps"].size());
    for (std::size_t i = 0; i < ra["verification"]["steps"].size(); ++i)
      expect_same_error(ra["verification"]["steps"][i], rb["verification"]["steps"][i], i);
  }
}

// host_overlap: each step's host work runs while the previous decode is on the GPU. The schedule
// does not depend on the GPU (output lengths are drawn up front), so both modes run the same
// steps; every sampled step still verifies against the float64 reference and every stored row is
// as written, on both pools and with shared system prompts, with the serial run's errors; every
// step with a batch has its GPU time read (the last one too), the exposed host time is recorded
// beside the host time, and each step's uploads were one copy and one launch.
TEST(TraceGpu, OverlappedHostWorkRunsTheSameStepsAndVerifies) {
  DB_REQUIRE_GPU();
  for (const bool prompts : {false, true}) {
    json preset = trace_preset();
    if (prompts) {
      preset["experiments"][0]["common"]["system_prompt_len"] = 64;
      preset["experiments"][0]["common"]["system_prompts"] = 3;
      preset["experiments"][0]["common"]["budget_bytes"] = 2 << 20;
      preset["experiments"][0]["axes"]["layout"] = {"paged"};
    }
    const Plan serial_plan = testing::plan_of(preset);
    preset["experiments"][0]["common"]["host_overlap"] = true;
    const Plan overlap_plan = testing::plan_of(preset);
    ASSERT_EQ(serial_plan.points.size(), overlap_plan.points.size());
    auto runner = make_trace_runner();
    for (std::size_t k = 0; k < overlap_plan.points.size(); ++k) {
      const Point& point = overlap_plan.points[k];
      SCOPED_TRACE(point.id);
      EXPECT_EQ(point.parameters["host_overlap"], true);
      RunContext a, b;
      const json serial = runner->run(serial_plan.points[k], a), overlapped = runner->run(point, b);
      ASSERT_EQ(overlapped.value("status", ""), kStatusOk) << overlapped.dump().substr(0, 2000);
      if (!prompts) expect_consistent_trace(overlapped, point.parameters["layout"] == "paged");
      EXPECT_TRUE(overlapped["verification"]["passed"].get<bool>());
      for (const json& c : overlapped["verification"]["steps"]) EXPECT_EQ(c["row_mismatches"], 0) << c.dump();
      EXPECT_TRUE(overlapped["trace"]["host_overlap"].get<bool>());
      EXPECT_FALSE(serial["trace"]["host_overlap"].get<bool>());
      for (const char* key : {"running", "queued", "admitted", "preempted", "finished", "decoded", "prefix_levels"})
        EXPECT_EQ(overlapped["trace"]["steps"][key], serial["trace"]["steps"][key]) << key;
      ASSERT_EQ(overlapped["verification"]["steps"].size(), serial["verification"]["steps"].size());
      const json& steps = overlapped["trace"]["steps"];
      for (std::size_t i = 0; i < steps["running"].size(); ++i) {
        if (steps["running"][i].get<std::int64_t>() == 0) continue;
        EXPECT_GT(steps["gpu_us"][i].get<double>(), 0.0) << i;
        EXPECT_GE(steps["exposed_host_us"][i].get<double>(), 0.0) << i;
        EXPECT_GE(serial["trace"]["steps"]["exposed_host_us"][i].get<double>(), 0.0) << i;
      }
      for (std::size_t i = 0; i < serial["verification"]["steps"].size(); ++i)
        expect_same_error(overlapped["verification"]["steps"][i], serial["verification"]["steps"][i], i);
      // Each step's uploads went to the GPU as one copy and one launch (cooperative where the
      // device allows it, else one a phase), in both modes: two phases at most (the pool's words,
      // slots and indptr and the private segments, then the gather).
      int cooperative = 0;
      DB_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, 0));
      for (const json* r : {&serial, &overlapped}) {
        std::int64_t batches = 0;
        for (const json& running : (*r)["trace"]["steps"]["running"]) batches += running.get<std::int64_t>() > 0;
        const json& up = (*r)["trace"]["step_uploads"];
        EXPECT_EQ(up["flushes"].get<std::int64_t>(), batches) << up.dump();
        EXPECT_EQ(up["copies"].get<std::int64_t>(), batches) << up.dump();
        EXPECT_LE(up["phases"].get<std::int64_t>(), 2 * batches) << up.dump();
        if (cooperative) EXPECT_EQ(up["launches"].get<std::int64_t>(), batches) << up.dump();
        else EXPECT_EQ(up["launches"], up["phases"]) << up.dump();
      }
      const json& summary = overlapped["trace"]["summary"];
      EXPECT_GT(summary["host_seconds"].get<double>(), 0.0);
      EXPECT_GE(summary["exposed_host_seconds"].get<double>(), 0.0);
      EXPECT_GT(b.measured_seconds, 0.0);
      EXPECT_NEAR(b.measured_seconds, summary["gpu_seconds"].get<double>(), 1e-9) << "every step's GPU time read once";
    }
  }
}

// A 64-token system prompt (4 pages of 16) out of 3 distinct ones before every prompt: the paged
// pool shares each prompt's pages (radix cache), so it holds more sequences than the same trace
// without sharing at the same budget, and decodes groups through the shared-prefix path; every
// sampled step verifies against the float64 reference over the whole sequence (prompt + own
// tokens) and every stored row (the prompt's rows keyed by the prompt) is as written.
TEST(TraceGpu, SystemPromptsShareThePagesAndVerifyThroughTheSharedPrefixPath) {
  DB_REQUIRE_GPU();
  json preset = trace_preset();
  preset["experiments"][0]["common"]["system_prompt_len"] = 64;
  preset["experiments"][0]["common"]["system_prompts"] = 3;
  preset["experiments"][0]["common"]["budget_bytes"] = 2 << 20;
  preset["experiments"][0]["axes"]["layout"] = {"paged"};
  preset["experiments"][0]["common"].erase("page_order");
  preset["experiments"][0]["axes"]["page_order"] = {"sequential", "shuffled"};
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 2u);
  auto runner = make_trace_runner();
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    RunContext ctx;
    const json r = runner->run(point, ctx);
    ASSERT_EQ(r.value("status", ""), kStatusOk) << r.dump().substr(0, 2000);
    EXPECT_TRUE(r["verification"]["passed"].get<bool>());
    for (const json& c : r["verification"]["steps"]) {
      EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
      EXPECT_EQ(c["row_mismatches"], 0) << c.dump();
    }
    const json& summary = r["trace"]["summary"];
    EXPECT_EQ(summary["finished"].get<std::int64_t>() + summary["rejected"].get<std::int64_t>(), 48);
    EXPECT_GT(summary["shared_prompt_tokens"].get<std::int64_t>(), 0);
    EXPECT_GT(summary["shared_prefix_steps"].get<std::int64_t>(), 0) << r["trace"]["shared_prefix_decode"].dump();
    EXPECT_EQ(r["trace"]["shared_prefix_decode"]["fallback_steps"], 0) << r["trace"]["shared_prefix_decode"].dump();
    // A verified step that ran the shared-prefix path compared its output with the reference.
    bool verified_shared = false;
    for (const json& c : r["verification"]["steps"])
      verified_shared |= r["trace"]["steps"]["prefix_levels"][c["step"].get<std::size_t>()].get<std::int64_t>() > 0;
    EXPECT_TRUE(verified_shared);
  }

  // Fixed lengths: the same arrivals and the same 104-token prompts, once as a 64-token system
  // prompt + 40 own tokens (shared pages) and once as 104 own tokens. Sharing runs more at once.
  json plain = preset;
  plain["experiments"][0]["axes"]["page_order"] = {"sequential"};
  plain["experiments"][0]["common"]["trace_lengths"] = "fixed";
  const Plan shared_plan = testing::plan_of(plain);
  plain["experiments"][0]["common"]["system_prompt_len"] = 0;
  plain["experiments"][0]["common"]["system_prompts"] = 1;
  plain["experiments"][0]["common"]["prompt_len"] = 40 + 64;
  const Plan plain_plan = testing::plan_of(plain);
  RunContext a, b;
  const json with_sharing = runner->run(shared_plan.points[0], a), without = runner->run(plain_plan.points[0], b);
  ASSERT_EQ(with_sharing.value("status", ""), kStatusOk);
  ASSERT_EQ(without.value("status", ""), kStatusOk);
  EXPECT_GT(with_sharing["trace"]["summary"]["mean_running"].get<double>(),
            without["trace"]["summary"]["mean_running"].get<double>());
}

TEST(TraceGpu, AContiguousPoolHoldsItsOwnCopyOfTheSystemPromptAndVerifies) {
  DB_REQUIRE_GPU();
  json preset = trace_preset();
  preset["experiments"][0]["common"]["system_prompt_len"] = 64;
  preset["experiments"][0]["common"]["system_prompts"] = 2;
  preset["experiments"][0]["common"]["budget_bytes"] = 2 << 20;
  preset["experiments"][0]["axes"]["layout"] = {"contiguous"};
  const Plan plan = testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 1u);
  auto runner = make_trace_runner();
  RunContext ctx;
  const json r = runner->run(plan.points[0], ctx);
  ASSERT_EQ(r.value("status", ""), kStatusOk) << r.dump().substr(0, 2000);
  EXPECT_TRUE(r["verification"]["passed"].get<bool>());
  EXPECT_EQ(r["trace"]["summary"]["shared_prompt_tokens"], 0) << "a slab shares nothing";
  EXPECT_EQ(r["trace"]["summary"]["shared_prefix_steps"], 0);
  EXPECT_FALSE(r["trace"].contains("prefix_cache"));
  EXPECT_EQ(r["trace"]["pool"]["max_seq_len"], 2 * (64 + 40 + 24)) << "fragmentation x (system prompt + means)";
}

TEST(TraceGpu, AnInterruptedTraceKeepsTheStepsMeasuredSoFar) {
  DB_REQUIRE_GPU();
  // Requests that never finish within the step limit: only the interrupt ends this trace.
  const Plan plan = testing::plan_of(testing::one_experiment(
      {{"layout", {"paged"}}},
      {{"kernel", "trace"}, {"heads_q", 8}, {"heads_kv", 2}, {"head_dim", 128}, {"requests", 32},
       {"prompt_len", 16}, {"output_len", 1 << 16}, {"budget_bytes", 128 << 20}, {"steps", 1 << 24},
       {"verify_every", 500}}));
  ASSERT_EQ(plan.points.size(), 1u);
  auto runner = make_trace_runner();
  std::atomic<bool> interrupted{false};
  RunContext ctx;
  ctx.interrupted = &interrupted;
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    interrupted = true;
  });
  const json r = runner->run(plan.points[0], ctx);
  ctrl_c.join();
  ASSERT_EQ(r.value("status", ""), kStatusOk) << r.dump().substr(0, 2000);
  EXPECT_TRUE(r["trace"]["interrupted"].get<bool>());
  const std::size_t n = r["trace"]["summary"]["steps"].get<std::size_t>();
  EXPECT_GT(n, 0u);
  EXPECT_LT(n, std::size_t{1} << 24);
  for (const auto& [key, column] : r["trace"]["steps"].items()) EXPECT_EQ(column.size(), n) << key;
  EXPECT_EQ(r["trace"]["summary"]["finished"], 0);
  EXPECT_TRUE(r["verification"]["passed"].get<bool>());
  EXPECT_EQ(r["verification"]["steps"][0]["step"], 0);
}

}  // namespace
}  // namespace decode_bench::sweeps
