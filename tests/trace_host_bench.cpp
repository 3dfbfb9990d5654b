// trace_host_bench: the host side of a serving trace's decode step, timed on the CPU alone (no
// GPU): the scheduler over a paged pool's host mirror (arrivals, admission through the radix
// cache, one append per running sequence, stats, releases), the batch view's host part (the
// deferred metadata words, the block-table CSR's indptr and lengths), the shared-prefix grouping
// of the step's batch, and the host part of the step's plan (the balanced work list of the grouped
// decode, or the shared-prefix plan's metadata image). Device work is not modelled: the pool's
// memory is host memory and the "gather" a host copy, so `view` here is an upper bound of what
// the host pays for it.
//
//   trace_host_bench [--steps N] [--warmup N] [--system-prompt 0|1]
//
// Prints one line per part: the median and the mean microseconds per step over the timed steps
// (the median is the steadier on a shared machine), and the mean batch. Not a test (timings are
// machine-dependent); docs/pools.md says what it measures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/row_attention_balance.hpp"
#include "kernels/shared_prefix_metadata.hpp"
#include "pools/paged_pool.hpp"
#include "pools/radix_cache.hpp"
#include "pools/trace_scheduler.hpp"
#include "sweeps/trace_step_host.hpp"

namespace {

using namespace decode_bench;
using namespace decode_bench::sweeps;
using Clock = std::chrono::steady_clock;

double us(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::micro>(b - a).count(); }

struct Part {
  std::vector<double> values;
  double median() const {
    std::vector<double> v = values;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  }
  double mean() const {
    double sum = 0;
    for (double x : values) sum += x;
    return sum / static_cast<double>(values.size());
  }
};

TraceLengths uniform(std::int64_t lo, std::int64_t hi) {
  TraceLengths l;
  l.kind = TraceLengths::Kind::uniform;
  l.lo = lo;
  l.hi = hi;
  return l;
}

int usage() {
  std::fprintf(stderr, "usage: trace_host_bench [--steps N] [--warmup N] [--system-prompt 0|1]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  long steps = 2000, warmup = 600;
  int system_prompt = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) return usage();
    char* end = nullptr;
    const long v = std::strtol(argv[++i], &end, 10);
    if (*end != '\0' || v < 0) return usage();
    if (a == "--steps") steps = v;
    else if (a == "--warmup") warmup = v;
    else if (a == "--system-prompt" && v <= 1) system_prompt = static_cast<int>(v);
    else return usage();
  }

  // Llama-3-8B's heads; about 256 running sequences of about 600 tokens at page 16: Poisson 2
  // arrivals a step, outputs uniform 1..255 (mean 128). Without a system prompt: prompts uniform
  // 1..1023; with one: a 512-token system prompt (one of 4) before a prompt of 1..191.
  const DecodeShape shape{32, 8, 128};
  const int page_size = 16;
  TraceSpec spec;
  spec.requests = static_cast<int>(2 * (steps + warmup) + 1000);
  spec.arrival = TraceArrival::poisson;
  spec.rate = 2.0;
  spec.output = uniform(1, 255);
  spec.seed = 0;
  if (system_prompt) {
    spec.prompt = uniform(1, 191);
    spec.system_prompt_len = 512;
    spec.system_prompts = 4;
  } else {
    spec.prompt = uniform(1, 1023);
  }
  const std::vector<TraceRequest> trace = make_trace(spec);

  // The pool's host mirror at a small row size (the mirror's cost does not depend on it) and
  // pages to spare (no preemption: the batch is the arrivals' steady state).
  PagedPoolConfig cfg;
  cfg.layout = {1, 2, DType::fp32};
  cfg.page_size = page_size;
  cfg.num_pages = 16384;
  cfg.max_seq_len = 2048;
  cfg.max_seqs = spec.requests;
  PagedPool pool(cfg, make_host_backend());
  pool.defer_metadata_writes(true);
  RadixCache cache(pool);
  SchedulerOptions options;
  if (system_prompt) options.prefix_cache = &cache;
  TraceScheduler sched(pool, trace, options);

  TraceStepHost host(page_size, system_prompt != 0);
  SharedPrefixMetadata metadata;
  Part t_sched, t_view, t_layout, t_plan, t_total;
  double batch_sum = 0, levels_sum = 0;
  long timed = 0;
  for (long s = 0; s < warmup + steps && !sched.done(); ++s) {
    double view = 0, layout = 0, plan = 0;
    const auto s0 = Clock::now();
    sched.step([&](std::span<const SequenceHandle> handles) {
      const auto v0 = Clock::now();
      host.build(sched, pool, handles);
      const auto v1 = Clock::now();
      const BatchView<PagedKV<float>> view_ = pool.batch<float>(host.batch_handles());
      host.set_view_lengths(view_.lengths_host);
      const auto v2 = Clock::now();
      if (host.prefix_layout())
        shared_prefix_metadata(shape, *host.prefix_layout(), &metadata);
      else
        (void)balance_row_work(host.lengths(), shape.heads_kv, shape.group(), 1, 132, 64);
      const auto v3 = Clock::now();
      layout = us(v0, v1);
      view = us(v1, v2);
      plan = us(v2, v3);
    });
    const double total = us(s0, Clock::now());
    if (s < warmup) continue;
    ++timed;
    t_layout.values.push_back(layout);
    t_view.values.push_back(view);
    t_plan.values.push_back(plan);
    t_sched.values.push_back(total - layout - view - plan);
    t_total.values.push_back(total);
    batch_sum += static_cast<double>(sched.records().back().running);
    levels_sum += host.prefix_layout() ? static_cast<double>(host.prefix_layout()->levels.size()) : 0.0;
  }
  if (timed == 0) {
    std::fprintf(stderr, "trace_host_bench: no step was timed (the trace ended during the warm-up)\n");
    return 1;
  }
  const double n = static_cast<double>(timed);
  std::printf("steps %ld  mean batch %.1f  mean levels %.2f  system prompt %s\n", timed, batch_sum / n,
              levels_sum / n, system_prompt ? "512 x 4" : "none");
  const auto line = [](const char* name, const Part& part, const char* what) {
    std::printf("%-7s p50 %8.2f  mean %8.2f us/step  (%s)\n", name, part.median(), part.mean(), what);
  };
  line("sched", t_sched, "arrivals, admission, appends, stats, releases");
  line("layout", t_layout, "batch order, shared-prefix groups");
  line("view", t_view, "metadata words, block-table CSR host part");
  line("plan", t_plan, system_prompt ? "shared-prefix metadata image" : "balanced work list");
  line("total", t_total, "the step");
  return 0;
}
