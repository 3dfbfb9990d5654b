// Shared system prompts in a serving trace: the workload's draws (pools/trace_workload.hpp), the
// scheduler's prefix-sharing admission through the radix cache (pools/trace_scheduler.hpp) in
// closed form, and seeded random traces under page pressure (admission, eviction, preemption)
// that write every sequence's rows into a host pool as the trace runner does, checking after
// every step the page accounting (refcount = the tree's hold + the block tables listing the page)
// and every stored row of every running sequence.
#include <algorithm>
#include <random>
#include <set>
#include <stdexcept>

#include <gtest/gtest.h>

#include "pools/contiguous_pool.hpp"
#include "pools/paged_pool.hpp"
#include "pools/radix_cache.hpp"
#include "pools/trace_scheduler.hpp"

namespace decode_bench {
namespace {

TraceLengths fixed(double n) {
  TraceLengths l;
  l.kind = TraceLengths::Kind::fixed;
  l.mean = n;
  return l;
}

TraceSpec with_system_prompt(int requests, std::int64_t own_prompt, std::int64_t output, std::int64_t system_len,
                             int prompts) {
  TraceSpec s;
  s.requests = requests;
  s.prompt = fixed(static_cast<double>(own_prompt));
  s.output = fixed(static_cast<double>(output));
  s.system_prompt_len = system_len;
  s.system_prompts = prompts;
  return s;
}

std::unique_ptr<PagedPool> paged(std::int32_t pages, int page_size, std::int64_t max_seq_len, std::int32_t max_seqs,
                                 std::unique_ptr<MemoryBackend> backend) {
  PagedPoolConfig c;
  c.layout = {1, 2, DType::fp32};
  c.page_size = page_size;
  c.num_pages = pages;
  c.max_seq_len = max_seq_len;
  c.max_seqs = max_seqs;
  return std::make_unique<PagedPool>(c, std::move(backend));
}

// ---- the workload ----

TEST(TraceSystemPrompt, PromptsStartWithADrawnSystemPromptAndKeepTheirOwnDraws) {
  TraceSpec plain = with_system_prompt(400, 1, 1, 0, 1);
  plain.arrival = TraceArrival::poisson;
  plain.rate = 1.5;
  plain.prompt.kind = TraceLengths::Kind::uniform;
  plain.prompt.lo = 1;
  plain.prompt.hi = 99;
  plain.seed = 5;
  TraceSpec shared = plain;
  shared.system_prompt_len = 64;
  shared.system_prompts = 4;
  const auto a = make_trace(plain), b = make_trace(shared);
  ASSERT_EQ(a.size(), b.size());
  std::set<int> drawn;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].system_prompt, -1);
    EXPECT_EQ(a[i].system_prompt_len, 0);
    // The same arrivals and own lengths: the system prompt is drawn from a stream of its own.
    EXPECT_EQ(b[i].arrival_step, a[i].arrival_step);
    EXPECT_EQ(b[i].output_len, a[i].output_len);
    EXPECT_EQ(b[i].prompt_len, a[i].prompt_len + 64);
    EXPECT_EQ(b[i].system_prompt_len, 64);
    ASSERT_GE(b[i].system_prompt, 0);
    ASSERT_LT(b[i].system_prompt, 4);
    drawn.insert(b[i].system_prompt);
  }
  EXPECT_EQ(drawn.size(), 4u) << "400 uniform draws over 4 prompts reach every one";
  EXPECT_EQ(make_trace(shared), b) << "one seed, one trace";
}

TEST(TraceSystemPrompt, InvalidSpecsNameTheField) {
  TraceSpec s = with_system_prompt(4, 8, 8, -1, 1);
  EXPECT_NE(s.invalid_reason().find("system_prompt_len"), std::string::npos) << s.invalid_reason();
  s = with_system_prompt(4, 8, 8, 16, 0);
  EXPECT_NE(s.invalid_reason().find("system_prompts"), std::string::npos) << s.invalid_reason();
  s = with_system_prompt(4, 8, 8, 1 << 20, 4096);
  EXPECT_NE(s.invalid_reason().find("2^31 - 1"), std::string::npos) << s.invalid_reason();
  EXPECT_THROW(make_trace(s), std::invalid_argument);
}

TEST(TraceSystemPrompt, PromptTokensAreDistinctAcrossPrompts) {
  const auto a = system_prompt_tokens(0, 8), b = system_prompt_tokens(3, 8);
  EXPECT_EQ(a, std::vector<std::int32_t>({0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(b.front(), 24);
  EXPECT_EQ(b.back(), 31);
}

// ---- admission through the prefix cache ----

// One request at step 0, then `later` at step 1: a 32-token system prompt (4 pages of 8) + 5 own
// tokens, 3 output tokens each.
std::vector<TraceRequest> first_then(int later) {
  std::vector<TraceRequest> t;
  for (int i = 0; i <= later; ++i)
    t.push_back({.id = i, .arrival_step = i == 0 ? 0 : 1, .prompt_len = 37, .output_len = 3, .system_prompt = 0,
                 .system_prompt_len = 32});
  return t;
}

// The first request allocates ceil(37 / 8) = 5 pages and, once its batch wrote them, caches the
// prompt's 4; the 7 arriving next step share those 4 and allocate one page each for their 5 + 3
// tokens. Without the cache: 8 x 5.
TEST(TraceSystemPrompt, PagedAdmissionSharesThePromptPagesInClosedForm) {
  const auto trace = first_then(7);
  auto pool = paged(64, 8, 64, 16, make_accounting_backend());
  RadixCache cache(*pool);
  TraceScheduler sched(*pool, trace, {.prefix_cache = &cache});
  sched.step([&](std::span<const SequenceHandle>) {
    EXPECT_EQ(cache.stats().cached_pages, 0) << "nothing is cached before its batch wrote it";
  });
  EXPECT_EQ(cache.stats().cached_pages, 4);
  const StepRecord& second = sched.step([&](std::span<const SequenceHandle> hs) {
    ASSERT_EQ(hs.size(), 8u);
    const auto prompt_pages = pool->block_table(hs[0]).subspan(0, 4);
    for (std::size_t i = 1; i < hs.size(); ++i) {
      const auto t = pool->block_table(hs[i]);
      ASSERT_EQ(t.size(), 5u);
      EXPECT_TRUE(std::equal(prompt_pages.begin(), prompt_pages.end(), t.begin())) << "sequence " << i;
    }
    for (std::int32_t p : prompt_pages) EXPECT_EQ(pool->pages().refcount(p), 9) << "8 sequences + the tree";
  });
  EXPECT_EQ(second.admitted, 7);
  EXPECT_EQ(second.shared_tokens, 7 * 32);
  EXPECT_EQ(second.bytes_reserved, 2ull * 12 * pool->config().page_bytes()) << "5 + 7 x 1 pages";
  EXPECT_EQ(sched.running_sequences()[0].shared_tokens, 0);
  EXPECT_EQ(sched.running_sequences()[1].shared_tokens, 32);
  sched.run(10);
  ASSERT_TRUE(sched.done());
  EXPECT_EQ(sched.summary().finished, 8);
  EXPECT_EQ(pool->stats().units_used, 4) << "only the cached prompt stays";
  EXPECT_EQ(cache.stats().cached_pages, 4);

  // Without the cache every prompt is whole: 8 x 5 pages.
  auto plain = paged(64, 8, 64, 16, make_accounting_backend());
  TraceScheduler whole(*plain, trace);
  whole.step();
  EXPECT_EQ(whole.step().bytes_reserved, 2ull * 40 * plain->config().page_bytes());
  EXPECT_EQ(whole.records()[1].shared_tokens, 0);
}

// A request admitted and preempted in the same step never reached a batch: it caches nothing,
// and its pages all go back.
TEST(TraceSystemPrompt, APromptPreemptedBeforeItsBatchIsNotCached) {
  // 6 pages of 8. Request 0 (no system prompt) fills one page at step 0 and needs a second at
  // step 1, when request 1's 40-token prompt has taken the other five: request 1 is preempted.
  const std::vector<TraceRequest> trace{
      {.id = 0, .arrival_step = 0, .prompt_len = 7, .output_len = 4},
      {.id = 1, .arrival_step = 1, .prompt_len = 40, .output_len = 2, .system_prompt = 0, .system_prompt_len = 32}};
  auto pool = paged(6, 8, 64, 4, make_accounting_backend());
  RadixCache cache(*pool);
  TraceScheduler sched(*pool, trace, {.prefix_cache = &cache});
  sched.step();
  const StepRecord& r = sched.step();
  EXPECT_EQ(r.admitted, 1);
  EXPECT_EQ(r.preempted, 1);
  EXPECT_EQ(r.running, 1);
  EXPECT_EQ(cache.stats().cached_pages, 0);
  EXPECT_EQ(pool->pages().used_count(), 2) << "request 0's two pages only";
  sched.run(20);
  EXPECT_TRUE(sched.done());
  EXPECT_EQ(sched.summary().finished, 2);
  EXPECT_EQ(cache.stats().cached_pages, 4) << "cached once request 1 ran";
}

TEST(TraceSystemPrompt, SharingRunsMoreSequencesAtTheSameBudget) {
  // 40 pages of 8: a request is 32 + 5 + 3 tokens = 5 pages whole, 1 page beside a shared prompt.
  const auto trace = first_then(63);
  auto shared_pool = paged(40, 8, 64, 64, make_accounting_backend());
  auto whole_pool = paged(40, 8, 64, 64, make_accounting_backend());
  RadixCache cache(*shared_pool);
  TraceScheduler shared(*shared_pool, trace, {.prefix_cache = &cache}), whole(*whole_pool, trace);
  shared.step();
  whole.step();
  EXPECT_EQ(whole.step().running, 8) << "40 / 5";
  EXPECT_EQ(shared.step().running, 36) << "5 + 35 x 1 pages";
}

TEST(TraceSystemPrompt, APrefixCacheNeedsAPagedPool) {
  ContiguousPoolConfig c;
  c.layout = {1, 2, DType::fp32};
  c.max_seq_len = 64;
  c.max_seqs = 4;
  ContiguousPool contiguous(c, make_accounting_backend());
  auto pool = paged(8, 8, 64, 4, make_accounting_backend());
  RadixCache cache(*pool);
  EXPECT_THROW(TraceScheduler(contiguous, make_trace(with_system_prompt(2, 5, 3, 32, 1)), {.prefix_cache = &cache}),
               std::invalid_argument);
}

// ---- random traces under page pressure, with data ----

// The row the trace runner writes at token t of a request: the system prompt's rows are keyed by
// the prompt (so sharers hold the same values), the rest by the request.
float row_key(const TraceRequest& r, std::int64_t t, int requests) {
  return static_cast<float>(t < r.system_prompt_len ? requests + r.system_prompt : r.id);
}

struct RandomPrefixCase {
  std::uint64_t seed;
  int prompts;
  WhenFull when_full;
};

class TracePrefixRandom : public ::testing::TestWithParam<RandomPrefixCase> {};

TEST_P(TracePrefixRandom, NeverCorruptsThePoolOrTheRowsItShares) {
  const RandomPrefixCase c = GetParam();
  TraceSpec spec;
  spec.requests = 300;
  spec.arrival = TraceArrival::poisson;
  spec.rate = 1.2;
  spec.prompt.kind = TraceLengths::Kind::uniform;
  spec.prompt.lo = 1;
  spec.prompt.hi = 11;
  spec.output.kind = TraceLengths::Kind::uniform;
  spec.output.lo = 1;
  spec.output.hi = 15;
  spec.system_prompt_len = 10;  // two whole pages of 4 and a partial one
  spec.system_prompts = c.prompts;
  spec.seed = c.seed;
  const auto trace = make_trace(spec);
  const int ps = 4;
  auto pool = paged(24, ps, 64, 32, make_host_backend());
  RadixCache cache(*pool);
  TraceScheduler sched(*pool, trace, {.when_full = c.when_full, .prefix_cache = &cache});
  std::int64_t shared_tokens = 0, verified_rows = 0;
  while (!sched.done()) {
    ASSERT_LT(sched.records().size(), 20000u) << "the trace does not finish";
    const StepRecord& r = sched.step([&](std::span<const SequenceHandle> hs) {
      const auto& running = sched.running_sequences();
      ASSERT_EQ(running.size(), hs.size());
      // Write what the runner writes: a new sequence's prompt after its shared prefix, else its
      // new token.
      for (const auto& s : running) {
        const TraceRequest& req = trace[static_cast<std::size_t>(s.request)];
        const auto kv = pool->accessor<float>(s.handle);
        const std::int64_t len = pool->length(s.handle);
        ASSERT_EQ(len, req.prompt_len + s.generated);
        ASSERT_LE(s.shared_tokens, req.system_prompt_len);
        ASSERT_EQ(s.shared_tokens % ps, 0);
        for (std::int64_t t = s.generated == 1 ? s.shared_tokens : len - 1; t < len; ++t) {
          auto* k = const_cast<float*>(kv.k) + kv.row_offset(0, 0, t);
          k[0] = row_key(req, t, spec.requests);
          k[1] = static_cast<float>(t);
        }
      }
      // Every stored row of every running sequence, shared or not, is the one written for it.
      for (const auto& s : running) {
        const TraceRequest& req = trace[static_cast<std::size_t>(s.request)];
        const auto kv = pool->accessor<float>(s.handle);
        for (std::int64_t t = 0; t < pool->length(s.handle); ++t) {
          const float* k = kv.k + kv.row_offset(0, 0, t);
          ASSERT_EQ(k[0], row_key(req, t, spec.requests)) << "request " << req.id << " token " << t;
          ASSERT_EQ(k[1], static_cast<float>(t)) << "request " << req.id << " token " << t;
          ++verified_rows;
        }
      }
    });
    ASSERT_FALSE(::testing::Test::HasFatalFailure()) << "at step " << r.step;
    shared_tokens += r.shared_tokens;
    // Free pages are poisoned: a page handed out again holds nothing a sequence could pass off as
    // its own rows (a shared prefix whose rows were never written fails the row check).
    if (sched.running() > 0) {
      auto* arena = const_cast<float*>(pool->accessor<float>(sched.running_sequences()[0].handle).k);
      for (std::int32_t p = 0; p < pool->pages().total(); ++p)
        if (pool->pages().refcount(p) == 0) std::fill(arena + p * ps * 2, arena + (p + 1) * ps * 2, -1.0f);
    }
    // Refcount of every page = the tree's hold (at most one) + the running block tables listing it.
    std::vector<std::int32_t> refs(static_cast<std::size_t>(pool->pages().total()), 0);
    std::set<std::int32_t> tree;
    for (const auto& path : cache.paths()) tree.insert(path.pages.begin(), path.pages.end());
    for (std::int32_t p : tree) ++refs[static_cast<std::size_t>(p)];
    for (const auto& s : sched.running_sequences())
      for (std::int32_t p : pool->block_table(s.handle)) ++refs[static_cast<std::size_t>(p)];
    std::int64_t used = 0;
    for (std::int32_t p = 0; p < pool->pages().total(); ++p) {
      ASSERT_EQ(pool->pages().refcount(p), refs[static_cast<std::size_t>(p)]) << "page " << p << ", step " << r.step;
      used += refs[static_cast<std::size_t>(p)] > 0;
    }
    ASSERT_EQ(pool->pages().used_count(), used);
    ASSERT_EQ(cache.stats().leases, 0) << "admission holds a lease only while it admits";
    ASSERT_EQ(pool->stats().sequences, sched.running());
  }
  const auto s = sched.summary();
  EXPECT_EQ(s.finished + s.rejected, spec.requests);
  // The run must have exercised what it claims to test.
  EXPECT_GT(shared_tokens, 0);
  EXPECT_GT(cache.stats().evicted_pages, 0) << "the pool ran full of cached prompts";
  EXPECT_GT(verified_rows, 1000);
  if (c.when_full == WhenFull::queue) {
    EXPECT_GT(s.preempted, 0);
  } else {
    EXPECT_GT(s.rejected, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, TracePrefixRandom,
                         ::testing::Values(RandomPrefixCase{1, 1, WhenFull::queue}, RandomPrefixCase{2, 3, WhenFull::queue},
                                           RandomPrefixCase{3, 8, WhenFull::queue},
                                           RandomPrefixCase{4, 3, WhenFull::reject}),
                         [](const auto& info) {
                           return "seed" + std::to_string(info.param.seed) + "_prompts" +
                                  std::to_string(info.param.prompts) +
                                  (info.param.when_full == WhenFull::queue ? "_queue" : "_reject");
                         });

}  // namespace
}  // namespace decode_bench
