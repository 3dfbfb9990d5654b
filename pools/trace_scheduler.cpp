#include "pools/trace_scheduler.hpp"

#include <algorithm>
#include <stdexcept>

#include "pools/contiguous_pool.hpp"
#include "pools/paged_pool.hpp"

namespace decode_bench {

std::vector<std::int32_t> system_prompt_tokens(int prompt, std::int64_t len) {
  std::vector<std::int32_t> tokens(static_cast<std::size_t>(len));
  for (std::int64_t i = 0; i < len; ++i) tokens[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(prompt * len + i);
  return tokens;
}

TraceScheduler::TraceScheduler(KVPool& pool, std::vector<TraceRequest> trace, SchedulerOptions options)
    : pool_(pool),
      paged_(dynamic_cast<PagedPool*>(&pool)),
      contiguous_(dynamic_cast<ContiguousPool*>(&pool)),
      trace_(std::move(trace)),
      options_(options) {
  if (options_.prefix_cache && !paged_)
    throw std::invalid_argument("TraceScheduler: a prefix cache needs a paged pool (a contiguous slab shares nothing)");
  if (options_.max_queue < 0)
    throw std::invalid_argument("TraceScheduler: max_queue must be >= 0 (got " + std::to_string(options_.max_queue) + ")");
  for (std::size_t i = 1; i < trace_.size(); ++i)
    if (trace_[i].arrival_step < trace_[i - 1].arrival_step)
      throw std::invalid_argument("TraceScheduler: the trace must be in arrival order (request " + std::to_string(i) +
                                  " arrives before request " + std::to_string(i - 1) + ")");
  for (const TraceRequest& r : trace_)
    if (r.system_prompt_len < 0 || r.system_prompt_len > r.prompt_len)
      throw std::invalid_argument("TraceScheduler: request " + std::to_string(r.id) + " has system_prompt_len " +
                                  std::to_string(r.system_prompt_len) + " outside [0, prompt_len " +
                                  std::to_string(r.prompt_len) + "]");
  for (const TraceRequest& r : trace_)
    if (r.prompt_len < 0 || r.output_len < 1)
      throw std::invalid_argument("TraceScheduler: request " + std::to_string(r.id) + " has prompt_len " +
                                  std::to_string(r.prompt_len) + " and output_len " + std::to_string(r.output_len) +
                                  " (need >= 0 and >= 1)");
}

// A paged request longer than the whole pool could only ever preempt itself.
bool TraceScheduler::exceeds_pool(const TraceRequest& r) const {
  if (!paged_) return false;
  const std::int64_t ps = paged_->config().page_size;
  return (r.prompt_len + r.output_len + ps - 1) / ps > paged_->pages().total();
}

const std::vector<std::int32_t>& TraceScheduler::prompt_tokens(const TraceRequest& r) {
  const auto prompt = static_cast<std::size_t>(r.system_prompt);
  if (prompt >= prompt_tokens_.size()) prompt_tokens_.resize(prompt + 1);
  std::vector<std::int32_t>& tokens = prompt_tokens_[prompt];
  if (static_cast<std::int64_t>(tokens.size()) != r.system_prompt_len)
    tokens = system_prompt_tokens(r.system_prompt, r.system_prompt_len);
  return tokens;
}

bool TraceScheduler::try_admit(int request, StepRecord& rec) {
  const TraceRequest& r = trace_[static_cast<std::size_t>(request)];
  RadixCache* cache = options_.prefix_cache;
  if (cache && r.system_prompt >= 0 && r.system_prompt_len > 0) return try_admit_with_prefix(request, rec);
  // A request that does not fit now is not handed to the pool: the same outcome as its refusal
  // (which changes nothing), without the exception every waiting step would otherwise cost.
  if (contiguous_ && contiguous_->slots_full()) return false;
  if (paged_ && (paged_->slots_full() ||
                 (r.prompt_len + paged_->config().page_size - 1) / paged_->config().page_size >
                     paged_->pages().free_count()))
    return false;
  try {
    const SequenceHandle h = pool_.admit(nullptr, nullptr, r.prompt_len);
    running_.push_back({request, h, 0});
    ++rec.admitted;
    return true;
  } catch (const PoolError& e) {
    // Out of room is the scheduler's business; anything else is a bug to surface.
    if (e.kind() != PoolErrorKind::OutOfPages && e.kind() != PoolErrorKind::OutOfSlots) throw;
    return false;
  }
}

bool TraceScheduler::try_admit_with_prefix(int request, StepRecord& rec) {
  const TraceRequest& r = trace_[static_cast<std::size_t>(request)];
  RadixCache& cache = *options_.prefix_cache;
  const std::int64_t ps = paged_->config().page_size;
  const std::vector<std::int32_t>& tokens = prompt_tokens(r);
  // The lease keeps the matched prefix from being evicted while room is made for the rest.
  RadixCache::Lease lease = cache.acquire(tokens);
  struct Unlock {
    RadixCache& cache;
    RadixCache::Lease& lease;
    ~Unlock() { cache.release(lease); }
  } unlock{cache, lease};
  const std::int64_t shared = lease.tokens();
  const std::int64_t need = (r.prompt_len - shared + ps - 1) / ps;
  if (need > paged_->pages().free_count()) cache.make_room(need);
  if (need > paged_->pages().free_count() || paged_->slots_full()) return false;  // as the pool would refuse it
  SequenceHandle h;
  try {
    h = shared > 0 ? paged_->admit_with_prefix(lease.pages(), nullptr, nullptr, r.prompt_len - shared)
                   : paged_->admit(nullptr, nullptr, r.prompt_len);
  } catch (const PoolError& e) {
    if (e.kind() != PoolErrorKind::OutOfPages && e.kind() != PoolErrorKind::OutOfSlots) throw;
    return false;
  }
  // The system prompt's whole pages not cached yet: this sequence's, shared once written.
  running_.push_back({request, h, 0, shared, shared < r.system_prompt_len / ps * ps});
  ++rec.admitted;
  rec.shared_tokens += shared;
  return true;
}

void TraceScheduler::preempt_newest(StepRecord& rec) {
  Running victim = running_.back();
  running_.pop_back();
  pool_.release(victim.handle);
  queue_.push_front(victim.request);
  ++rec.preempted;
}

const StepRecord& TraceScheduler::step(const BatchFn& on_batch) {
  StepRecord rec;
  rec.step = step_;

  // 1. Arrivals.
  std::int64_t queued_now = 0;  // of this step's arrivals, those at the back of the queue
  while (next_arrival_ < trace_.size() && trace_[next_arrival_].arrival_step <= step_) {
    const int id = static_cast<int>(next_arrival_++);
    const TraceRequest& r = trace_[static_cast<std::size_t>(id)];
    ++rec.arrived;
    const bool never_fits = r.prompt_len + r.output_len > pool_.max_seq_len() || exceeds_pool(r);
    if (never_fits) {
      ++rec.rejected;
    } else if (options_.when_full == WhenFull::reject) {
      if (!try_admit(id, rec)) ++rec.rejected;
    } else {
      queue_.push_back(id);
      ++queued_now;
    }
  }

  // 2. Admission, first come first served; then a bounded queue turns away this step's newest
  // arrivals beyond its bound (never a request that waited longer or was preempted).
  while (!queue_.empty() && try_admit(queue_.front(), rec)) {
    queue_.pop_front();
    queued_now = std::min<std::int64_t>(queued_now, static_cast<std::int64_t>(queue_.size()));
  }
  while (options_.max_queue > 0 && queued_now > 0 && static_cast<std::int64_t>(queue_.size()) > options_.max_queue) {
    queue_.pop_back();
    --queued_now;
    ++rec.rejected;
  }

  // 3. Decode: one token per running sequence, oldest first.
  std::size_t appended = 0;
  // Out of pages: cached prefixes no sequence reads go first; then the newest running sequence
  // (which may be the one that could not append; then the loop ends).
  const auto out_of_pages = [&] {
    if (options_.prefix_cache && options_.prefix_cache->make_room(1)) return;
    preempt_newest(rec);
  };
  while (appended < running_.size()) {
    // A paged append that needs a page none is free for takes the out-of-pages path at once
    // (the pool would refuse it unchanged).
    if (paged_ && paged_->pages_to_append(running_[appended].handle, 1) > paged_->pages().free_count()) {
      out_of_pages();
      continue;
    }
    try {
      pool_.extend(running_[appended].handle, 1);
      ++running_[appended].generated;
      ++appended;
    } catch (const PoolError& e) {
      if (e.kind() != PoolErrorKind::OutOfPages) throw;
      out_of_pages();
    }
  }
  rec.running = static_cast<std::int64_t>(running_.size());
  const PoolStats stats = pool_.stats();
  rec.bytes_reserved = stats.bytes_reserved;
  rec.bytes_used = stats.bytes_used;
  rec.fragmentation = stats.fragmentation();

  // 4. The decode batch.
  if (on_batch && !running_.empty()) {
    handles_.clear();
    for (const Running& s : running_) handles_.push_back(s.handle);
    on_batch(handles_);
  }
  // Prompts written by this batch go into the prefix cache.
  if (options_.prefix_cache)
    for (Running& s : running_)
      if (s.caches_prompt) {
        const TraceRequest& r = trace_[static_cast<std::size_t>(s.request)];
        options_.prefix_cache->insert(prompt_tokens(r), paged_->block_table(s.handle));
        s.caches_prompt = false;
      }

  // 5. Release the finished.
  still_.clear();
  for (const Running& s : running_) {
    if (s.generated >= trace_[static_cast<std::size_t>(s.request)].output_len) {
      pool_.release(s.handle);
      ++rec.finished;
    } else {
      still_.push_back(s);
    }
  }
  std::swap(running_, still_);
  rec.queued = static_cast<std::int64_t>(queue_.size());
  finished_ += rec.finished;
  rejected_ += rec.rejected;
  ++step_;
  records_.push_back(rec);
  return records_.back();
}

bool TraceScheduler::done() const {
  return finished_ + rejected_ == static_cast<std::int64_t>(trace_.size());
}

TraceSummary TraceScheduler::run(std::int64_t max_steps, const BatchFn& on_batch) {
  for (std::int64_t i = 0; i < max_steps && !done(); ++i) step(on_batch);
  return summary();
}

TraceSummary TraceScheduler::summary() const {
  TraceSummary s;
  s.steps = static_cast<std::int64_t>(records_.size());
  for (const StepRecord& r : records_) {
    s.tokens += r.running;
    s.finished += r.finished;
    s.rejected += r.rejected;
    s.preempted += r.preempted;
    s.peak_running = std::max(s.peak_running, r.running);
  }
  s.mean_running = s.steps == 0 ? 0.0 : static_cast<double>(s.tokens) / static_cast<double>(s.steps);
  return s;
}

}  // namespace decode_bench
