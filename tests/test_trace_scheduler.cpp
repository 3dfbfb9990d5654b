// The serving trace (pools/trace_workload.hpp) and its continuous-batching scheduler over real
// pools on the accounting backend (pools/trace_scheduler.hpp): deterministic draws, the
// distributions' supports and means over many seeded draws, closed-form schedules (a contiguous
// pool's waves, the paged pool's larger batch at the same budget, rejection), and under page
// pressure preemption that never corrupts the pool, with the pool's accounting checked after
// every step against the scheduler's own view.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include <gtest/gtest.h>

#include "pools/contiguous_pool.hpp"
#include "pools/length_distribution.hpp"
#include "pools/paged_pool.hpp"
#include "pools/trace_scheduler.hpp"

namespace decode_bench {
namespace {

TraceLengths fixed(double n) {
  TraceLengths l;
  l.kind = TraceLengths::Kind::fixed;
  l.mean = n;
  return l;
}

TraceSpec at_once(int requests, std::int64_t prompt, std::int64_t output) {
  TraceSpec s;
  s.requests = requests;
  s.arrival = TraceArrival::all_at_once;
  s.prompt = fixed(static_cast<double>(prompt));
  s.output = fixed(static_cast<double>(output));
  return s;
}

const KVLayout kLayout{1, 8, DType::fp16};

std::unique_ptr<ContiguousPool> contiguous(std::int32_t slots, std::int64_t max_seq_len) {
  ContiguousPoolConfig c;
  c.layout = kLayout;
  c.max_seq_len = max_seq_len;
  c.max_seqs = slots;
  return std::make_unique<ContiguousPool>(c, make_accounting_backend());
}

std::unique_ptr<PagedPool> paged(std::int32_t pages, int page_size, std::int64_t max_seq_len, std::int32_t max_seqs) {
  PagedPoolConfig c;
  c.layout = kLayout;
  c.page_size = page_size;
  c.num_pages = pages;
  c.max_seq_len = max_seq_len;
  c.max_seqs = max_seqs;
  return std::make_unique<PagedPool>(c, make_accounting_backend());
}

// ---- the trace ----

TEST(TraceWorkload, AllAtOnceAndFixedLengthsAreExact) {
  const auto t = make_trace(at_once(5, 100, 20));
  ASSERT_EQ(t.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(t[i].id, i);
    EXPECT_EQ(t[i].arrival_step, 0);
    EXPECT_EQ(t[i].prompt_len, 100);
    EXPECT_EQ(t[i].output_len, 20);
  }
}

TEST(TraceWorkload, OneSeedOneTrace) {
  TraceSpec s = at_once(200, 1, 1);
  s.arrival = TraceArrival::poisson;
  s.rate = 0.7;
  s.prompt.kind = TraceLengths::Kind::lognormal;
  s.prompt.mean = 300;
  s.output.kind = TraceLengths::Kind::uniform;
  s.output.lo = 5;
  s.output.hi = 50;
  s.seed = 9;
  EXPECT_EQ(make_trace(s), make_trace(s));
  TraceSpec other = s;
  other.seed = 10;
  EXPECT_NE(make_trace(s), make_trace(other));
  // The streams are separate: another output distribution leaves arrivals and prompts as they were.
  TraceSpec fixed_out = s;
  fixed_out.output = fixed(7);
  const auto a = make_trace(s), b = make_trace(fixed_out);
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival_step, b[i].arrival_step);
    EXPECT_EQ(a[i].prompt_len, b[i].prompt_len);
  }
}

TEST(TraceWorkload, PoissonArrivalsHaveTheRate) {
  for (double rate : {0.25, 1.0, 8.0}) {
    TraceSpec s = at_once(40000, 1, 1);
    s.arrival = TraceArrival::poisson;
    s.rate = rate;
    s.seed = 3;
    const auto t = make_trace(s);
    for (std::size_t i = 1; i < t.size(); ++i) ASSERT_LE(t[i - 1].arrival_step, t[i].arrival_step);
    // 40,000 arrivals: the observed rate's relative standard error is 0.5%; 3% is six of them.
    const double observed = static_cast<double>(t.size()) / static_cast<double>(t.back().arrival_step + 1);
    EXPECT_NEAR(observed / rate, 1.0, 0.03) << "rate " << rate;
  }
}

TEST(TraceWorkload, LengthDistributionsKeepTheirSupportAndMean) {
  TraceSpec s = at_once(40000, 1, 1);
  s.seed = 5;
  s.prompt.kind = TraceLengths::Kind::uniform;
  s.prompt.lo = 10;
  s.prompt.hi = 20;
  s.output.kind = TraceLengths::Kind::lognormal;
  s.output.mean = 200;
  s.output.sigma = 0.8;
  const auto t = make_trace(s);
  std::int64_t lo = 1 << 30, hi = 0;
  double out_sum = 0;
  for (const auto& r : t) {
    lo = std::min(lo, r.prompt_len);
    hi = std::max(hi, r.prompt_len);
    ASSERT_GE(r.output_len, 1);
    out_sum += static_cast<double>(r.output_len);
  }
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 20);
  // Lognormal sigma 0.8: the sample mean's relative standard error is about 0.5% at 40,000 draws.
  EXPECT_NEAR(out_sum / static_cast<double>(t.size()) / 200.0, 1.0, 0.03);

  TraceSpec z = at_once(5000, 1, 1);
  z.prompt.kind = TraceLengths::Kind::zipf;
  z.prompt.mean = 64;
  z.prompt.alpha = 1.5;
  const auto support_top = LengthDistribution::zipf(64, 1.5).hi;
  for (const auto& r : make_trace(z)) {
    ASSERT_GE(r.prompt_len, 1);
    ASSERT_LE(r.prompt_len, support_top);
  }
}

TEST(TraceWorkload, InvalidSpecsNameTheField) {
  const auto reason = [](TraceSpec s) {
    try {
      make_trace(s);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  TraceSpec s = at_once(3, 10, 10);
  s.arrival = TraceArrival::poisson;
  s.rate = 0;
  EXPECT_NE(reason(s).find("rate 0"), std::string::npos) << reason(s);
  s = at_once(3, 10, 10);
  s.prompt.kind = TraceLengths::Kind::uniform;
  s.prompt.lo = 9;
  s.prompt.hi = 3;
  EXPECT_NE(reason(s).find("prompt hi 3"), std::string::npos) << reason(s);
  s = at_once(3, 10, 10);
  s.output.kind = TraceLengths::Kind::lognormal;
  s.output.sigma = -1;
  EXPECT_NE(reason(s).find("output sigma -1"), std::string::npos) << reason(s);
  s = at_once(3, 0, 10);
  EXPECT_NE(reason(s).find("prompt mean 0"), std::string::npos) << reason(s);
  s = at_once(-1, 1, 1);
  EXPECT_NE(reason(s).find("requests"), std::string::npos);
}

// ---- the scheduler ----

// The pool's accounting equals the scheduler's view after a step: the running sequences' lengths.
void expect_pool_matches(const KVPool& pool, const TraceScheduler& sched) {
  const PoolStats st = pool.stats();
  EXPECT_EQ(st.sequences, sched.running());
  EXPECT_EQ(st.units_used + st.units_free, st.units_total);
  EXPECT_LE(st.bytes_used, st.bytes_reserved);
}

TEST(TraceScheduler, ContiguousSlotsRunInWaves) {
  auto pool = contiguous(4, 64);
  TraceScheduler sched(*pool, make_trace(at_once(10, 10, 5)));
  std::vector<std::int64_t> batch_lengths;
  const auto summary = sched.run(100, [&](std::span<const SequenceHandle> hs) {
    for (SequenceHandle h : hs) batch_lengths.push_back(pool->length(h));
  });
  ASSERT_TRUE(sched.done());
  // 4 + 4 + 2 sequences, 5 steps each.
  EXPECT_EQ(summary.steps, 15);
  EXPECT_EQ(summary.tokens, 50);
  EXPECT_EQ(summary.finished, 10);
  EXPECT_EQ(summary.peak_running, 4);
  const auto& r = sched.records();
  for (int s = 0; s < 15; ++s) EXPECT_EQ(r[s].running, s < 10 ? 4 : 2) << "step " << s;
  EXPECT_EQ(r[0].admitted, 4);
  EXPECT_EQ(r[0].queued, 6);
  EXPECT_EQ(r[4].finished, 4);
  EXPECT_EQ(r[5].admitted, 4);
  EXPECT_EQ(r[10].admitted, 2);
  EXPECT_EQ(r[14].queued, 0);
  // A slab holds 64 tokens of which 11..15 are used in the batch: the closed-form fragmentation.
  EXPECT_DOUBLE_EQ(r[0].fragmentation, 1.0 - 11.0 / 64.0);
  // Every batch sees lengths prompt + 1 .. prompt + output.
  for (std::int64_t len : batch_lengths) {
    EXPECT_GE(len, 11);
    EXPECT_LE(len, 15);
  }
  EXPECT_EQ(pool->stats().sequences, 0);
}

TEST(TraceScheduler, PagedPoolRunsMoreAtTheSameBudget) {
  // 8 slabs of 64 tokens, or the same bytes as 32 pages of 16.
  auto slabs = contiguous(8, 64);
  auto pages = paged(32, 16, 64, 64);
  ASSERT_EQ(slabs->stats().arena_bytes, pages->stats().arena_bytes);
  TraceScheduler a(*slabs, make_trace(at_once(40, 10, 5)));
  TraceScheduler b(*pages, make_trace(at_once(40, 10, 5)));
  const auto sa = a.run(1000), sb = b.run(1000);
  EXPECT_EQ(sa.peak_running, 8);
  EXPECT_EQ(sb.peak_running, 32);  // 15 tokens fit one page: every page is a sequence
  EXPECT_EQ(sa.tokens, 200);
  EXPECT_EQ(sb.tokens, 200);
  EXPECT_LT(sb.steps, sa.steps);
  EXPECT_EQ(sb.preempted, 0);
}

TEST(TraceScheduler, RejectModeAndRequestsThatNeverFit) {
  auto pool = contiguous(2, 32);
  auto trace = make_trace(at_once(5, 10, 5));
  trace.push_back({5, 0, 30, 5});  // 35 tokens > max_seq_len 32
  SchedulerOptions options;
  options.when_full = WhenFull::reject;
  TraceScheduler sched(*pool, trace, options);
  const auto s = sched.run(100);
  ASSERT_TRUE(sched.done());
  EXPECT_EQ(sched.records()[0].arrived, 6);
  EXPECT_EQ(sched.records()[0].admitted, 2);
  EXPECT_EQ(sched.records()[0].rejected, 4);
  EXPECT_EQ(s.finished, 2);
  EXPECT_EQ(s.rejected, 4);

  auto pool2 = contiguous(2, 32);
  SchedulerOptions bounded;
  bounded.max_queue = 1;
  TraceScheduler q(*pool2, make_trace(at_once(5, 10, 5)), bounded);
  const auto sq = q.run(100);
  EXPECT_EQ(sq.finished, 3);  // two admitted, one waited
  EXPECT_EQ(sq.rejected, 2);
}

TEST(TraceScheduler, PagePressurePreemptsTheNewestAndNeverCorruptsThePool) {
  // 12 pages of 4 tokens; prompts of 3 tokens fit one page, but each sequence grows to 3 pages.
  auto pool = paged(12, 4, 64, 16);
  TraceSpec spec = at_once(10, 3, 8);
  TraceScheduler sched(*pool, make_trace(spec));
  std::map<std::int64_t, std::int64_t> appended_per_step;
  while (!sched.done()) {
    ASSERT_LT(sched.records().size(), 1000u) << "the trace does not finish";
    const StepRecord& r = sched.step([&](std::span<const SequenceHandle> hs) {
      // Inside the step: every batch sequence holds its pages; used <= total.
      const PoolStats st = pool->stats();
      EXPECT_EQ(st.sequences, static_cast<std::int64_t>(hs.size()));
      EXPECT_LE(st.units_used, 12);
      std::int64_t pages = 0;
      for (SequenceHandle h : hs) pages += static_cast<std::int64_t>(pool->block_table(h).size());
      EXPECT_EQ(pages, st.units_used) << "no page held by anything but a running sequence";
    });
    appended_per_step[r.step] = r.running;
    expect_pool_matches(*pool, sched);
    ASSERT_FALSE(::testing::Test::HasFailure()) << "after step " << r.step;
  }
  const auto s = sched.summary();
  EXPECT_EQ(s.finished, 10);
  EXPECT_EQ(s.rejected, 0);
  EXPECT_GT(s.preempted, 0);
  EXPECT_GE(s.tokens, 80);  // recomputed tokens of preempted sequences come on top
  EXPECT_EQ(pool->stats().units_used, 0);
  EXPECT_EQ(pool->stats().sequences, 0);
  // A request longer than the whole pool is rejected at arrival, not preempted forever.
  auto tiny = paged(2, 4, 64, 4);
  TraceScheduler t(*tiny, make_trace(at_once(1, 6, 6)));
  t.run(10);
  EXPECT_TRUE(t.done());
  EXPECT_EQ(t.summary().rejected, 1);
}

TEST(TraceScheduler, PoissonTracesAreDeterministic) {
  TraceSpec spec = at_once(300, 1, 1);
  spec.arrival = TraceArrival::poisson;
  spec.rate = 2;
  spec.prompt.kind = TraceLengths::Kind::lognormal;
  spec.prompt.mean = 40;
  spec.output.kind = TraceLengths::Kind::zipf;
  spec.output.mean = 20;
  spec.output.alpha = 1.3;
  spec.seed = 11;
  const auto trace = make_trace(spec);
  auto p1 = paged(64, 16, 4096, 64), p2 = paged(64, 16, 4096, 64);
  TraceScheduler a(*p1, trace), b(*p2, trace);
  a.run(100000);
  b.run(100000);
  ASSERT_TRUE(a.done());
  EXPECT_EQ(a.records(), b.records());
  const auto s = a.summary();
  EXPECT_EQ(s.finished + s.rejected, 300);
  // Tokens decoded = outputs of the finished requests + what preemption made them recompute.
  std::int64_t outputs = 0;
  for (const auto& r : trace)
    if (r.prompt_len + r.output_len <= 4096 && (r.prompt_len + r.output_len + 15) / 16 <= 64) outputs += r.output_len;
  EXPECT_GE(s.tokens, outputs);
  if (s.preempted == 0) {
    EXPECT_EQ(s.tokens, outputs);
  }
}

}  // namespace
}  // namespace decode_bench
