#pragma once
// Continuous batching over a real pool, host side: the scheduler of a trace
// (pools/trace_workload.hpp) that admits, grows and releases sequences in a KVPool one decode
// step at a time, as a serving engine does. It launches nothing: a caller that runs attention
// takes each step's batch from on_batch. Deterministic: the trace is its only input.
//
// One step:
//   1. arrivals   requests whose arrival_step is this step. One that can never fit (prompt +
//                 output > the pool's max_seq_len, or more than a paged pool's every page) is
//                 rejected; otherwise it joins the queue (when_full = queue) or is admitted now
//                 or rejected (when_full = reject).
//   2. admission  first come, first served while the head of the queue fits: the pool's own
//                 admit of its prompt (contiguous: a free max_seq_len slab; paged: the prompt's
//                 pages). A refused admit changes nothing (PoolError's strong guarantee) and
//                 stops admission for this step (no request overtakes the head).
//                 With a prefix cache (paged pools, requests with a system prompt): the longest
//                 cached whole-page prefix of its system prompt is shared (admit_with_prefix:
//                 those pages get one more holder, only the rest is allocated); the first
//                 request of a system prompt inserts that prompt's whole pages into the cache
//                 once it has been in a batch (step 4: its caller wrote them), so no sequence
//                 shares pages whose rows were never written (one preempted in the step it was
//                 admitted caches nothing).
//                 When the pages are short, the cache first evicts its least recently used
//                 prefixes no lease holds (a page a running sequence reads stays allocated).
//   3. decode     every running sequence, oldest first, appends one token through the pool's
//                 append path. A paged pool out of pages first evicts cached prefixes (if any
//                 are evictable), then preempts the newest running sequence
//                 (released; back to the head of the queue, to be admitted again from its
//                 prompt, as recompute preemption does) until the append fits.
//   4. batch      on_batch(handles) with the sequences that appended (the decode batch).
//   5. release    sequences that generated their output_len tokens are released.
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <vector>

#include "pools/kv_pool.hpp"
#include "pools/radix_cache.hpp"
#include "pools/trace_workload.hpp"

namespace decode_bench {

class ContiguousPool;
class PagedPool;

enum class WhenFull { queue, reject };

struct SchedulerOptions {
  WhenFull when_full = WhenFull::queue;
  std::int64_t max_queue = 0;  // queue mode: a step's arrivals that would leave more waiting are rejected; 0 = unbounded
  // Shares system prompts through this cache (it must be over the scheduler's pool, a PagedPool,
  // and outlive the scheduler's use of it); nullptr: every prompt is admitted whole.
  RadixCache* prefix_cache = nullptr;
};

// The token ids of system prompt `prompt` (len tokens): prompt * len + i, so distinct prompts
// share no token and the radix cache tells them apart from their first page on.
std::vector<std::int32_t> system_prompt_tokens(int prompt, std::int64_t len);

struct StepRecord {
  std::int64_t step = 0;
  std::int64_t arrived = 0, admitted = 0, preempted = 0, rejected = 0, finished = 0;  // in this step
  std::int64_t shared_tokens = 0;  // prompt tokens of this step's admissions taken from the prefix cache
  std::int64_t running = 0;   // sequences decoded in this step (the batch)
  std::int64_t queued = 0;    // waiting at the end of the step
  std::uint64_t bytes_reserved = 0, bytes_used = 0;  // the pool's, after appends, before releases
  double fragmentation = 0;
  friend bool operator==(const StepRecord&, const StepRecord&) = default;
};

struct TraceSummary {
  std::int64_t steps = 0, tokens = 0;  // tokens: appended by decode (recomputed ones included)
  std::int64_t finished = 0, rejected = 0, preempted = 0;
  std::int64_t peak_running = 0;
  double mean_running = 0;
};

class TraceScheduler {
 public:
  using BatchFn = std::function<void(std::span<const SequenceHandle>)>;
  TraceScheduler(KVPool& pool, std::vector<TraceRequest> trace, SchedulerOptions options = {});

  // Runs one decode step and returns its record.
  const StepRecord& step(const BatchFn& on_batch = nullptr);
  // Every request finished or rejected.
  bool done() const;
  // Steps until done() or max_steps; returns the summary.
  TraceSummary run(std::int64_t max_steps, const BatchFn& on_batch = nullptr);

  const std::vector<StepRecord>& records() const { return records_; }
  TraceSummary summary() const;
  std::int64_t running() const { return static_cast<std::int64_t>(running_.size()); }
  std::int64_t queued() const { return static_cast<std::int64_t>(queue_.size()); }
  // Requests that have not arrived yet.
  std::int64_t pending_arrivals() const { return static_cast<std::int64_t>(trace_.size() - next_arrival_); }
  const std::vector<TraceRequest>& trace() const { return trace_; }

  struct Running {
    int request;  // index into trace_
    SequenceHandle handle;
    std::int64_t generated = 0;  // tokens appended since admission: 1 in the step it was admitted
    std::int64_t shared_tokens = 0;  // its first tokens, shared from the prefix cache at admission (not written)
    bool caches_prompt = false;      // inserts its system prompt's pages after its first batch
  };
  // Inside on_batch: the batch, in the order of its handles (a caller that writes each
  // sequence's K/V keys it by request; generated == 1 marks one whose prompt is new this step).
  const std::vector<Running>& running_sequences() const { return running_; }

 private:
  bool try_admit(int request, StepRecord& rec);
  bool try_admit_with_prefix(int request, StepRecord& rec);
  bool exceeds_pool(const TraceRequest& r) const;
  void preempt_newest(StepRecord& rec);

  // The system prompt's token ids (the prefix cache's key), made once per prompt.
  const std::vector<std::int32_t>& prompt_tokens(const TraceRequest& r);

  KVPool& pool_;
  PagedPool* paged_ = nullptr;  // the pool, when paged
  ContiguousPool* contiguous_ = nullptr;  // the pool, when contiguous
  std::vector<TraceRequest> trace_;
  SchedulerOptions options_;
  std::size_t next_arrival_ = 0;
  std::deque<int> queue_;
  std::vector<Running> running_;  // in admission order
  std::vector<StepRecord> records_;
  // Kept from step to step (no allocation per step once grown): the batch's handles, the
  // sequences still running after the releases, and each system prompt's tokens.
  std::vector<SequenceHandle> handles_;
  std::vector<Running> still_;
  std::vector<std::vector<std::int32_t>> prompt_tokens_;
  std::int64_t step_ = 0, finished_ = 0, rejected_ = 0;
};

}  // namespace decode_bench
