// The host side of a trace point (kernel = trace; sweeps/trace_point.hpp): what the axes give a
// trace point and its id, the parameters the runner reads, the pools it sizes, the steps it
// verifies, the summary of its step records (closed forms), the contiguous pool's slot span with
// free slots read as empty, and the scheduler's view of which sequences are new in a step.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_fp16.h>

#include "pools/contiguous_pool.hpp"
#include "pools/memory_backend.hpp"
#include "pools/trace_scheduler.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/embedded_presets.hpp"
#include "sweeps/memory_estimate.hpp"
#include "sweeps/trace_point.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

json trace_params(json extra = json::object()) {
  json p = {{"kernel", "trace"},   {"layout", "contiguous"}, {"dtype", "fp16"},          {"heads_q", 8},
            {"heads_kv", 2},       {"head_dim", 128},        {"requests", 100},          {"arrival_rate", 0.5},
            {"trace_lengths", "uniform"}, {"prompt_len", 100}, {"output_len", 28},       {"fragmentation", 4.0},
            {"budget_bytes", 1 << 24},    {"steps", 500},      {"verify_every", 100},    {"seed", 3}};
  p.update(extra);
  return p;
}

TEST(TracePoint, TheAxesGiveATracePointItsOwnParametersAndNoDecodeOnes) {
  const json preset = testing::one_experiment(
      {{"layout", {"contiguous", "paged"}}, {"fragmentation", {2, 4, 8}}},
      {{"kernel", "trace"}, {"requests", 64}, {"arrival_rate", 0.25}, {"budget_bytes", 1 << 26}});
  const Plan plan = testing::plan_of(preset);
  // fragmentation is a contiguous slab's: the paged points collapse into one.
  ASSERT_EQ(plan.points.size(), 4u);
  for (const Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    const json& p = point.parameters;
    EXPECT_EQ(point.id.find("/T="), std::string::npos) << "T means nothing to a trace";
    EXPECT_FALSE(p.contains("T"));
    EXPECT_FALSE(p.contains("layers")) << "a trace runs decode-bench's decode, one layer";
    EXPECT_FALSE(p.contains("timing"));
    EXPECT_FALSE(p.contains("counters"));
    EXPECT_EQ(p["budget_bytes"], 1 << 26);
    EXPECT_EQ(p["requests"], 64);
    EXPECT_EQ(p["steps"], 2000) << "the default";
    EXPECT_FALSE(p.contains("length_sigma")) << "lognormal lengths only";
  }
  EXPECT_EQ(plan.points[3].id, "e/kernel=trace/layout=paged/dtype=fp16/page_size=16/budget_bytes=67108864/requests=64/"
                               "arrival_rate=0.25");
  // A decode point keeps T and has none of the trace's axes.
  const Plan decode = testing::plan_of(testing::one_experiment({{"T", {64}}}, {{"kernel", "flash_decode"}}));
  EXPECT_TRUE(decode.points[0].parameters.contains("T"));
  EXPECT_FALSE(decode.points[0].parameters.contains("requests"));
  EXPECT_FALSE(decode.points[0].parameters.contains("budget_bytes"));
}

TEST(TracePoint, BadTraceValuesAreRefusedNamingTheAxis) {
  const auto errors = testing::plan_errors(testing::one_experiment(
      {{"trace_lengths", {"pareto"}}}, {{"kernel", "trace"}}));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(errors[0].path.find("trace_lengths"), std::string::npos);
  EXPECT_NE(errors[0].message.find("pareto"), std::string::npos);
  const auto negative = testing::plan_errors(testing::one_experiment({{"arrival_rate", {-1}}}, {{"kernel", "trace"}}));
  ASSERT_FALSE(negative.empty());
  EXPECT_NE(negative[0].path.find("arrival_rate"), std::string::npos);
}

TEST(TracePoint, SystemPromptKeysAreCheckedAtTheirPath) {
  const auto none = testing::plan_errors(
      testing::one_experiment({{"system_prompts", {4}}}, {{"kernel", "trace"}}));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_NE(none[0].path.find("system_prompts"), std::string::npos) << none[0].path;
  EXPECT_NE(none[0].message.find("system_prompt_len"), std::string::npos) << none[0].message;
  const auto too_many = testing::plan_errors(testing::one_experiment(
      {{"system_prompt_len", {1 << 20}}}, {{"kernel", "trace"}, {"system_prompts", 4096}}));
  ASSERT_EQ(too_many.size(), 1u);
  EXPECT_NE(too_many[0].path.find("system_prompt_len"), std::string::npos) << too_many[0].path;
  const auto negative = testing::plan_errors(
      testing::one_experiment({{"system_prompt_len", {-1}}}, {{"kernel", "trace"}}));
  ASSERT_FALSE(negative.empty());
  EXPECT_NE(negative[0].path.find("system_prompt_len"), std::string::npos);
  EXPECT_TRUE(testing::plan_errors(testing::one_experiment({{"system_prompt_len", {0, 256}}},
                                                           {{"kernel", "trace"}, {"system_prompts", 1}}))
                  .empty());

  const TracePoint t = parse_trace_point(trace_params({{"system_prompt_len", 256}, {"system_prompts", 3}}));
  EXPECT_EQ(t.spec.system_prompt_len, 256);
  EXPECT_EQ(t.spec.system_prompts, 3);
  EXPECT_EQ(trace_slab_tokens(t), 1536) << "ceil(4 x (256 + 100 + 28)): a slab holds its own copy of the prompt";
  EXPECT_THROW(parse_trace_point(trace_params({{"system_prompts", 2}})), std::invalid_argument);
}

// configs/serving.json's trace experiment: the same trace through contiguous pools at
// fragmentation 2, 4, 8 and a paged pool, without and with a 512-token system prompt (one of 4),
// all at one budget: 8 points, every one runnable by the trace runner's host checks.
TEST(TracePoint, TheServingPresetRunsEachPoolWithAndWithoutASystemPrompt) {
  const auto preset = find_embedded_preset("serving");
  ASSERT_TRUE(preset);
  std::vector<Point> traces;
  for (const Point& p : testing::plan_of(json::parse(preset->json)).points)
    if (p.experiment == "trace") traces.push_back(p);
  ASSERT_EQ(traces.size(), 8u);
  std::set<std::pair<std::string, std::int64_t>> pools;
  for (const Point& p : traces) {
    SCOPED_TRACE(p.id);
    const TracePoint t = parse_trace_point(p.parameters);
    EXPECT_EQ(t.budget_bytes, 512ull << 20);
    EXPECT_FALSE(trace_unsupported(t).has_value());
    if (t.spec.system_prompt_len == 0) {
      EXPECT_EQ(t.spec.system_prompts, 1);
    } else {
      EXPECT_EQ(t.spec.system_prompt_len, 512);
      EXPECT_EQ(t.spec.system_prompts, 4);
    }
    pools.insert({t.paged ? "paged" : "contiguous x" + std::to_string(static_cast<int>(t.fragmentation)),
                  t.spec.system_prompt_len});
  }
  EXPECT_EQ(pools.size(), 8u) << "four pools, each without and with the prompt";
}

TEST(TracePoint, ParsesTheWorkloadAndThePool) {
  const TracePoint t = parse_trace_point(trace_params());
  EXPECT_EQ(t.spec.requests, 100);
  EXPECT_EQ(t.spec.arrival, TraceArrival::poisson);
  EXPECT_DOUBLE_EQ(t.spec.rate, 0.5);
  EXPECT_EQ(t.spec.prompt.kind, TraceLengths::Kind::uniform);
  EXPECT_EQ(t.spec.prompt.lo, 1);
  EXPECT_EQ(t.spec.prompt.hi, 199) << "uniform on [1, 2 x mean - 1]";
  EXPECT_EQ(t.spec.output.hi, 55);
  EXPECT_EQ(t.spec.seed, 3u);
  EXPECT_EQ(t.shape.heads_q, 8);
  EXPECT_EQ(t.shape.heads_kv, 2);
  EXPECT_FALSE(t.paged);
  EXPECT_EQ(trace_slab_tokens(t), 512) << "ceil(4 x (100 + 28))";
  EXPECT_EQ(t.steps, 500);
  EXPECT_EQ(t.verify_every, 100);
  EXPECT_FALSE(t.host_overlap) << "serial unless asked";
  EXPECT_TRUE(parse_trace_point(trace_params({{"host_overlap", true}})).host_overlap);

  const TracePoint all = parse_trace_point(trace_params({{"arrival_rate", 0.0}, {"trace_lengths", "fixed"}}));
  EXPECT_EQ(all.spec.arrival, TraceArrival::all_at_once);
  const std::vector<TraceRequest> trace = make_trace(all.spec);
  ASSERT_EQ(trace.size(), 100u);
  EXPECT_EQ(trace_longest_request(trace), 128);
  for (const TraceRequest& r : trace) EXPECT_EQ(r.arrival_step, 0);

  const TracePoint paged = parse_trace_point(trace_params({{"layout", "paged"}, {"page_size", 32}}));
  EXPECT_TRUE(paged.paged);
  EXPECT_EQ(paged.page_size, 32);
  EXPECT_DOUBLE_EQ(paged.fragmentation, 1.0) << "a paged pool has no slab";
}

TEST(TracePoint, UnsupportedPointsNameTheReason) {
  // 2 x 2 heads x 128 x 2 bytes = 1 KiB a token; a 512-token slab is 512 KiB of K + V.
  EXPECT_FALSE(trace_unsupported(parse_trace_point(trace_params({{"budget_bytes", 512 << 10}}))).has_value());
  const auto small = trace_unsupported(parse_trace_point(trace_params({{"budget_bytes", (512 << 10) - 1}})));
  ASSERT_TRUE(small.has_value());
  EXPECT_NE(small->find("budget_bytes 524287 holds no slab of 512 tokens"), std::string::npos) << *small;
  const auto page = trace_unsupported(
      parse_trace_point(trace_params({{"layout", "paged"}, {"page_size", 16}, {"budget_bytes", 1000}})));
  ASSERT_TRUE(page.has_value());
  EXPECT_NE(page->find("holds no page of 16 tokens"), std::string::npos) << *page;
  const auto fp8 = trace_unsupported(parse_trace_point(trace_params({{"dtype", "fp8_e4m3"}})));
  ASSERT_TRUE(fp8.has_value());
  EXPECT_NE(fp8->find("fp8_e4m3"), std::string::npos);
  EXPECT_THROW(parse_trace_point(trace_params({{"trace_lengths", "zipf"}, {"zipf_alpha", 10.0}, {"prompt_len", 1000}})),
               std::invalid_argument);
}

TEST(TracePoint, MemoryEstimateIsTheBudgetAndTheStepBuffers) {
  const json p = trace_params();
  const std::uint64_t need = estimate_device_bytes(p);
  EXPECT_EQ(need, trace_device_bytes(p));
  EXPECT_GT(need, std::uint64_t{1} << 24);
  EXPECT_LT(need, (std::uint64_t{1} << 24) + (std::uint64_t{128} << 20));
}

TEST(TracePoint, VerifiedStepsAreTheFirstEveryNthAndTheLast) {
  std::vector<std::int64_t> verified;
  for (std::int64_t s = 0; s < 350; ++s)
    if (trace_step_verified(s, 100, 350, false)) verified.push_back(s);
  EXPECT_EQ(verified, (std::vector<std::int64_t>{0, 100, 200, 300, 349}));
  EXPECT_TRUE(trace_step_verified(57, 100, 350, true)) << "the step after which no request is left";
  EXPECT_FALSE(trace_step_verified(57, 100, 350, false));
}

TEST(TracePoint, PercentilesAreNearestRank) {
  std::vector<double> v(100);
  std::iota(v.rbegin(), v.rend(), 1.0);  // 100 .. 1: sorted inside
  EXPECT_DOUBLE_EQ(nearest_rank_percentile(v, 50), 50.0);
  EXPECT_DOUBLE_EQ(nearest_rank_percentile(v, 99), 99.0);
  EXPECT_DOUBLE_EQ(nearest_rank_percentile(v, 100), 100.0);
  EXPECT_DOUBLE_EQ(nearest_rank_percentile({7.0}, 99), 7.0);
  EXPECT_DOUBLE_EQ(nearest_rank_percentile({}, 50), 0.0);
  EXPECT_DOUBLE_EQ(nearest_rank_percentile({1, 2, 3, 4}, 50), 2.0);
}

TEST(TracePoint, SummaryIsComputedFromTheStepRecords) {
  std::vector<StepRecord> records(4);
  std::vector<TraceStepTiming> timings(4);
  const std::int64_t running[] = {2, 4, 0, 3};
  const double gpu[] = {10, 20, 0, 30};
  for (int i = 0; i < 4; ++i) {
    records[i].step = i;
    records[i].running = running[i];
    records[i].finished = i == 3 ? 3 : (i == 1 ? 1 : 0);
    records[i].rejected = i == 0 ? 1 : 0;
    timings[i].gpu_us = gpu[i];
    timings[i].host_us = 2.0;
    timings[i].plan_us = 0.5;
    timings[i].view_us = 0.25;
    timings[i].prefix_levels = i % 2;
    timings[i].prefix_sequences = 2 * (i % 2);
    timings[i].decoded = running[i];
    timings[i].exposed_host_us = 0.5 * i;
    records[i].shared_tokens = 32 * i;
  }
  const json s = trace_summary_json(records, timings);
  EXPECT_EQ(s["steps"], 4);
  EXPECT_EQ(s["tokens"], 9);
  EXPECT_EQ(s["finished"], 4);
  EXPECT_EQ(s["rejected"], 1);
  EXPECT_EQ(s["peak_running"], 4);
  EXPECT_DOUBLE_EQ(s["mean_running"].get<double>(), 9.0 / 4);
  EXPECT_DOUBLE_EQ(s["tokens_per_s"].get<double>(), 9 / 60e-6);
  EXPECT_DOUBLE_EQ(s["tokens_per_s_with_host"].get<double>(), 9 / 68e-6);
  EXPECT_DOUBLE_EQ(s["host_over_gpu"].get<double>(), 8.0 / 60);
  // The empty step launched nothing: it is not a step time.
  EXPECT_DOUBLE_EQ(s["mean_step_us"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(s["p50_step_us"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(s["p99_step_us"].get<double>(), 30.0);
  EXPECT_DOUBLE_EQ(s["gpu_seconds"].get<double>(), 60e-6);
  EXPECT_DOUBLE_EQ(s["plan_seconds"].get<double>(), 2e-6);
  EXPECT_DOUBLE_EQ(s["view_seconds"].get<double>(), 1e-6);
  // Scheduling is what is left of the host time: 4 x (2 - 0.5 - 0.25) us.
  EXPECT_DOUBLE_EQ(s["schedule_seconds"].get<double>(), 5e-6);
  EXPECT_EQ(s["shared_prompt_tokens"], 32 * (0 + 1 + 2 + 3));
  EXPECT_EQ(s["shared_prefix_steps"], 2) << "steps 1 and 3 decoded through the shared-prefix path";
  // The exposed host time, beside (not instead of) the host time: 0.5 x (0 + 1 + 2 + 3) us.
  EXPECT_DOUBLE_EQ(s["exposed_host_seconds"].get<double>(), 3e-6);
  EXPECT_DOUBLE_EQ(s["exposed_host_over_gpu"].get<double>(), 3.0 / 60);
  EXPECT_DOUBLE_EQ(s["host_seconds"].get<double>(), 8e-6);

  const json steps = trace_steps_json(records, timings);
  EXPECT_EQ(steps["running"], json({2, 4, 0, 3}));
  EXPECT_EQ(steps["gpu_us"], json({10.0, 20.0, 0.0, 30.0}));
  EXPECT_EQ(steps["view_us"], json({0.25, 0.25, 0.25, 0.25}));
  EXPECT_EQ(steps["shared_tokens"], json({0, 32, 64, 96}));
  EXPECT_EQ(steps["prefix_levels"], json({0, 1, 0, 1}));
  EXPECT_EQ(steps["prefix_sequences"], json({0, 2, 0, 2}));
  EXPECT_EQ(steps["exposed_host_us"], json({0.0, 0.5, 1.0, 1.5}));
  for (const auto& [key, column] : steps.items()) EXPECT_EQ(column.size(), 4u) << key;

  timings.pop_back();
  EXPECT_THROW(trace_summary_json(records, timings), std::invalid_argument);
  EXPECT_THROW(trace_steps_json(records, timings), std::invalid_argument);
}

// A contiguous pool's slot span reads free slots as empty sequences, in the host mirror and in
// pool memory: a released slot's length is written back as 0.
TEST(TracePoint, ContiguousSlotSpanShowsFreeSlotsAsEmpty) {
  ContiguousPoolConfig c;
  c.layout = {1, 8, DType::fp16};
  c.max_seq_len = 64;
  c.max_seqs = 6;
  ContiguousPool pool(c, make_backend(BackendKind::host));
  std::vector<SequenceHandle> h;
  for (int i = 0; i < 5; ++i) h.push_back(pool.admit(nullptr, nullptr, 10 + i));
  pool.release(h[1]);
  pool.release(h[3]);
  const auto view = pool.slot_span<__half>(0, 5);
  EXPECT_EQ(view.num_seqs, 5);
  EXPECT_EQ(view.lengths_host, (std::vector<std::int32_t>{10, 0, 12, 0, 14}));
  EXPECT_EQ(view.max_len, 14);
  const std::vector<std::int32_t> in_pool(view.seq_lens_device, view.seq_lens_device + 5);
  EXPECT_EQ(in_pool, view.lengths_host);
  const auto tail = pool.slot_span<__half>(5, 1);
  EXPECT_EQ(tail.seq_lens_device[0], 0) << "a never-used slot starts at 0 in pool memory";
  EXPECT_THROW(pool.slot_span<__half>(2, 5), PoolError);
  EXPECT_THROW(pool.slot_span<__half>(-1, 2), PoolError);
  EXPECT_THROW(pool.slot_span<float>(0, 1), PoolError) << "the pool's dtype is fp16";
}

// Inside on_batch the scheduler shows each sequence's request and how many tokens it generated:
// 1 exactly in the step it was admitted (its prompt is new), more after.
TEST(TracePoint, SchedulerShowsWhichSequencesAreNewInAStep) {
  ContiguousPoolConfig c;
  c.layout = {1, 8, DType::fp16};
  c.max_seq_len = 16;
  c.max_seqs = 2;
  ContiguousPool pool(c, make_accounting_backend());
  TraceSpec spec;
  spec.requests = 3;
  spec.prompt.mean = 4;
  spec.output.mean = 3;
  TraceScheduler sched(pool, make_trace(spec));
  std::vector<std::vector<std::pair<int, std::int64_t>>> seen;
  while (!sched.done()) {
    sched.step([&](std::span<const SequenceHandle> handles) {
      const auto& running = sched.running_sequences();
      ASSERT_EQ(running.size(), handles.size());
      std::vector<std::pair<int, std::int64_t>> step;
      for (std::size_t i = 0; i < running.size(); ++i) {
        EXPECT_EQ(running[i].handle, handles[i]);
        step.emplace_back(running[i].request, running[i].generated);
      }
      seen.push_back(step);
    });
  }
  using Step = std::vector<std::pair<int, std::int64_t>>;
  EXPECT_EQ(seen, (std::vector<Step>{{{0, 1}, {1, 1}}, {{0, 2}, {1, 2}}, {{0, 3}, {1, 3}}, {{2, 1}}, {{2, 2}},
                                     {{2, 3}}}));
  EXPECT_EQ(sched.pending_arrivals(), 0);
}

}  // namespace
}  // namespace decode_bench::sweeps
