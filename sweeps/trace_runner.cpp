#include "sweeps/trace_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "backends/registry.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/gpu_verify.hpp"
#include "harness/kernel_kind.hpp"
#include "harness/results_schema.hpp"
#include "harness/verify.hpp"
#include "kernels/gpu_reference.hpp"
#include "kernels/host_staging.hpp"
#include "kernels/step_uploads.hpp"
#include "pools/contiguous_pool.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "pools/pool_error.hpp"
#include "pools/radix_cache.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/phase_timer.hpp"
#include "sweeps/point_pipeline.hpp"
#include "sweeps/step_parity.hpp"
#include "sweeps/trace_fill.hpp"
#include "sweeps/trace_point.hpp"
#include "sweeps/trace_prefix_layout.hpp"
#include "sweeps/trace_step_host.hpp"
#include "kernels/shared_prefix.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr const char* kTraceMethod =
    "one decode launch per step over the whole running batch, CUDA events around it, no L2 flush (steps back to "
    "back); host time = step wall time less device work and verification; exposed host time = CUDA events from when "
    "the GPU was done with the earlier steps' work (or the host began the step) to when the step's host work was "
    "done; metadata words (lengths, block-table entries) deferred and set once per step; every upload of the step's "
    "host work (metadata words, the batch's slots and indptr, its block-table gather, the step's write list, q rows "
    "and last-page lengths, the plan's work lists) merged into one page-locked block by step parity, carried out "
    "by one copy and one launch, so none waits for a decode in flight and the GPU runs two operations between "
    "decodes for them; ";
constexpr const char* kOverlapMethod =
    "host_overlap: a step's host work runs while the previous step's decode is on the GPU (one step in flight)";
constexpr const char* kSerialMethod = "serial: each step waits for its decode before the next begins";

double us_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

// The backend's scratch for one step's plan. Plans of later steps reuse the buffers (what a plan
// writes into them is ordered on the stream after the earlier step's launch; a buffer that grows
// frees the old one only once the device is idle: harness/device_memory.hpp), growing one only
// when a plan asks for more; a new buffer is filled with 0xFF bytes, as the pipeline's workspace is.
// The plan's uploads are recorded in the step's merged upload block (kernels/step_uploads.hpp, two
// by step parity: sweeps/step_parity.hpp), as private segments: nothing else of the step touches
// the workspace.
class StepWorkspace final : public Workspace {
 public:
  explicit StepWorkspace(cudaStream_t stream) : stream_(stream) {}
  // Before the plan of a step: its uploads go into `block`.
  void reset(StepUploadBlock& block) {
    next_ = 0;
    staging_ = HostStaging(&block);
  }
  HostStaging* host_staging() override { return &staging_; }
  void* allocate(std::size_t bytes) override {
    if (bytes == 0) return nullptr;
    if (next_ == buffers_.size()) buffers_.emplace_back();
    DeviceBuffer<std::byte>& b = buffers_[next_++];
    if (b.size() < bytes) {
      b = DeviceBuffer<std::byte>(bytes + bytes / 2);
      DB_CUDA_CHECK(cudaMemsetAsync(b.get(), 0xFF, b.bytes(), stream_));
    }
    return b.get();
  }
  cudaStream_t stream() const override { return stream_; }

 private:
  cudaStream_t stream_;
  std::vector<DeviceBuffer<std::byte>> buffers_;
  std::size_t next_ = 0;
  HostStaging staging_;
};

// One step's events: resume (recorded as the host begins the step: done when the GPU has
// finished what earlier steps enqueued), ready (the host's work for the step is done), and start /
// stop around the decode.
class Events {
 public:
  Events() {
    for (cudaEvent_t* e : {&resume, &ready, &start, &stop}) DB_CUDA_CHECK(cudaEventCreate(e));
  }
  ~Events() {
    for (cudaEvent_t e : {resume, ready, start, stop}) cudaEventDestroy(e);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  cudaEvent_t resume = nullptr, ready = nullptr, start = nullptr, stop = nullptr;
};

AttentionProblem described_problem(const TracePoint& t) {
  AttentionProblem p;
  p.kernel = KernelKind::batch_decode;
  p.shape = t.shape;
  p.kv_dtype = t.dtype;
  p.layout = t.paged ? KvLayoutKind::paged : KvLayoutKind::contiguous;
  p.paged.page_size = t.page_size;
  p.paged.heads_kv = t.shape.heads_kv;
  p.paged.head_dim = t.shape.head_dim;
  p.contiguous.head_dim = t.shape.head_dim;
  return p;
}

// One trace, typed by the pool's storage type.
template <class T>
class TraceRun {
 public:
  TraceRun(const TracePoint& t, Backend& backend, RunContext& ctx) : t_(t), backend_(backend), ctx_(ctx) {}

  json run() {
    const std::vector<TraceRequest> trace = make_trace(t_.spec);
    {
      PhaseTimer phase(ctx_.phases, kPhasePoolBuild);
      build_pool(trace);
    }
    stream_ = pool_->stream();
    workspace_ = std::make_unique<StepWorkspace>(stream_);
    uploads_ = std::make_unique<StepUploads>(stream_);
    problem_ = described_problem(t_);
    problem_.tuning = planning_policy(ctx_);  // the run's policy: the same for every step
    SchedulerOptions options;
    if (paged_ && t_.spec.system_prompt_len > 0) {
      prefix_cache_ = std::make_unique<RadixCache>(*paged_);
      options.prefix_cache = prefix_cache_.get();
    }
    TraceScheduler sched(*pool_, trace, options);
    sched_ = &sched;

    bool interrupted = false;
    const auto wall0 = Clock::now();
    for (std::int64_t i = 0; i < t_.steps && !sched.done(); ++i) {
      if (ctx_.interrupt_requested()) {
        interrupted = true;
        break;
      }
      step_ = i;
      parity_ = static_cast<int>(i & 1);
      TraceStepTiming timing;
      excluded_us_ = 0;
      // This step's events are the ones of step i - 2: that step's times must have been read.
      if (pending_ >= 0 && pending_parity_ == parity_) finish_pending();
      // Recorded before the step's clock starts: host_us times the same work as before the event.
      DB_CUDA_CHECK(cudaEventRecord(events_[parity_].resume, stream_));
      const auto s0 = Clock::now();
      sched.step([&](std::span<const SequenceHandle> handles) { timing = decode(handles); });
      timing.host_us = std::max(0.0, us_between(s0, Clock::now()) - excluded_us_);
      timings_.push_back(timing);
    }
    finish_pending();  // host_overlap: the last decode still in flight
    const double wall_s = us_between(wall0, Clock::now()) * 1e-6;
    sched_ = nullptr;
    ctx_.phases[std::string(kPhaseVerification)] += verify_us_ * 1e-6;
    ctx_.phases[std::string(kPhaseTiming)] += std::max(0.0, wall_s - verify_us_ * 1e-6);

    json trace_block = {{"interrupted", interrupted},
                        {"workload",
                         {{"requests", t_.spec.requests},
                          {"arrival", t_.spec.arrival == TraceArrival::poisson ? "poisson" : "all_at_once"},
                          {"rate", t_.spec.arrival == TraceArrival::poisson ? t_.spec.rate : 0.0},
                          {"prompt", t_.spec.prompt.describe()},
                          {"output", t_.spec.output.describe()},
                          {"seed", t_.spec.seed},
                          {"system_prompt_len", t_.spec.system_prompt_len},
                          {"system_prompts", t_.spec.system_prompts}}},
                        {"pool", pool_json_},
                        {"wall_seconds", wall_s},
                        {"host_overlap", t_.host_overlap},
                        {"step_uploads", step_uploads_json()},
                        {"method", std::string(kTraceMethod) + (t_.host_overlap ? kOverlapMethod : kSerialMethod)}};
    if (prefix_cache_) {
      const RadixCache::Stats cs = prefix_cache_->stats();
      trace_block["prefix_cache"] = {{"cached_pages", cs.cached_pages}, {"nodes", cs.nodes},
                                     {"evicted_pages", cs.evicted_pages}, {"splits", cs.splits}};
      trace_block["shared_prefix_decode"] = {
          {"method", "sequences listing the same system-prompt pages grouped next to each other, one level per group "
                     "(sweeps/trace_prefix_layout.hpp), decoded by the shared-prefix path (prefix phase once per "
                     "group, suffix phase per sequence, merge); a step without a group of two runs the batch decode"},
          {"fallback_steps", fallback_steps_}};
      if (!fallback_reason_.empty()) trace_block["shared_prefix_decode"]["fallback_reason"] = fallback_reason_;
    }
    trace_block["summary"] = trace_summary_json(sched.records(), timings_);
    trace_block["steps"] = trace_steps_json(sched.records(), timings_);

    json verification = total_.to_json();
    verification["passed"] = verified_ok_ && !checks_.empty();
    verification["method"] =
        "float64 reference on the GPU at the first, every verify_every-th and the last step; every stored K/V row of "
        "every running sequence compared bitwise with the generator's values";
    verification["steps"] = checks_;
    json out = {{"trace", std::move(trace_block)}, {"verification", std::move(verification)}};
    out["backend"] = {{"name", backend_.name()}, {"version", backend_.version()}};
    out["parameters"] = {{"max_seq_len", pool_->max_seq_len()}};
    if (checks_.empty()) {
      out["status"] = std::string(kStatusError);
      out["reason"] = "no step of the trace ran a batch (nothing was verified)";
    } else if (!verified_ok_) {
      out["status"] = std::string(kStatusVerificationFailed);
      out["reason"] = first_failure_;
    } else {
      out["status"] = std::string(kStatusOk);
    }
    return out;
  }

 private:
  void build_pool(const std::vector<TraceRequest>& trace) {
    const KVLayout layout{t_.shape.heads_kv, t_.shape.head_dim, t_.dtype};
    if (t_.paged) {
      const std::int32_t max_seqs = static_cast<std::int32_t>(std::min<std::int64_t>(t_.spec.requests, 1 << 20));
      PagedPoolConfig cfg =
          PagedPoolConfig::for_budget(layout, t_.budget_bytes, t_.page_size, trace_longest_request(trace), max_seqs);
      cfg.page_order = parse_page_order(t_.page_order).value_or(PageOrder::sequential);
      cfg.order_seed = t_.seed + 1;
      auto pool = std::make_unique<PagedPool>(cfg, make_device_backend());
      max_batch_ = std::min<std::int64_t>(t_.spec.requests, cfg.num_pages);
      pool_json_ = {{"layout", "paged"},          {"page_size", cfg.page_size}, {"pages", cfg.num_pages},
                    {"max_seq_len", cfg.max_seq_len}, {"max_seqs", cfg.max_seqs},
                    {"arena_bytes", 2 * cfg.page_bytes() * static_cast<std::uint64_t>(cfg.num_pages)}};
      pool->defer_metadata_writes(true);
      paged_ = pool.get();
      step_host_ = std::make_unique<TraceStepHost>(cfg.page_size, t_.spec.system_prompt_len > 0);
      pool_ = std::move(pool);
    } else {
      const ContiguousPoolConfig cfg = ContiguousPoolConfig::for_budget(layout, t_.budget_bytes, trace_slab_tokens(t_));
      auto pool = std::make_unique<ContiguousPool>(cfg, make_device_backend());
      max_batch_ = cfg.max_seqs;
      pool_json_ = {{"layout", "contiguous"},     {"fragmentation", t_.fragmentation}, {"slots", cfg.max_seqs},
                    {"max_seq_len", cfg.max_seq_len},
                    {"arena_bytes", 2 * cfg.slab_bytes() * static_cast<std::uint64_t>(cfg.max_seqs)}};
      pool->defer_metadata_writes(true);
      contiguous_ = pool.get();
      pool_ = std::move(pool);
    }
    pool_->backend().synchronize();
    const std::size_t rows = static_cast<std::size_t>(max_batch_);
    q_ = DeviceBuffer<float>(rows * t_.shape.heads_q * t_.shape.head_dim);
    o_ = DeviceBuffer<float>(rows * t_.shape.heads_q * t_.shape.head_dim);
    lse_ = DeviceBuffer<float>(rows * t_.shape.heads_q);
    writes_ = DeviceBuffer<TraceWrite>(rows);
    // The step's staged rows, at most: (rows) writes, (rows) q rows, then (rows) last-page lengths.
    static_assert(sizeof(TraceWrite) % sizeof(std::int32_t) == 0);
    staged_ = DeviceBuffer<std::int32_t>(rows * (2 * sizeof(TraceWrite) + sizeof(std::int32_t)) / sizeof(std::int32_t));
  }

  json step_uploads_json() const {
    const StepUploads::Counts& c = uploads_->counts();
    return {{"flushes", c.flushes}, {"copies", c.copies},   {"launches", c.launches},
            {"phases", c.phases},   {"bytes", c.bytes},     {"grows", c.grows}};
  }

  // A step's staged rows hold only what it uses, back to back, so they add no more to the step's
  // upload block: (running) writes, (batch) q rows, then (batch) last-page lengths.
  static TraceWrite* staged_writes(std::int32_t* base) { return reinterpret_cast<TraceWrite*>(base); }
  static TraceWrite* staged_q_rows(std::int32_t* base, std::int64_t running) { return staged_writes(base) + running; }
  static std::int32_t* staged_last_page_len(std::int32_t* base, std::int64_t running, std::int64_t batch) {
    return reinterpret_cast<std::int32_t*>(staged_q_rows(base, running) + batch);
  }

  // Whether no request is left after this step: nothing queued or still to arrive, and every
  // running sequence generates its last token now.
  bool final_step() const {
    if (sched_->queued() > 0 || sched_->pending_arrivals() > 0) return false;
    for (const auto& r : sched_->running_sequences())
      if (r.generated < sched_->trace()[static_cast<std::size_t>(r.request)].output_len) return false;
    return true;
  }

  TraceStepTiming decode(std::span<const SequenceHandle> handles) {
    TraceStepTiming timing;
    const auto view0 = Clock::now();
    const auto& running = sched_->running_sequences();
    // Everything the step uploads (the pool's words, slots and indptr and gather, the staged rows,
    // the plan's work lists) is recorded in one page-locked block, then one copy and one launch.
    // Two blocks, by step parity: with host_overlap the previous step's copy may not have run
    // yet; the one of two steps back has (this step's host work began after its stop event). The
    // guard checks it (sweeps/step_parity.hpp).
    parity_guard_.begin(step_);
    StepUploadBlock& block = uploads_->begin(parity_);
    std::optional<CollectedUploads> collected(std::in_place, pool_->backend(), block);
    const auto n_running = static_cast<std::int64_t>(running.size());
    writes_host_.resize(static_cast<std::size_t>(n_running));
    TraceWrite* writes = writes_host_.data();
    // The problem is kept from step to step: its host vectors keep their capacity, and the
    // backend's copy of it (plan) reuses its own.
    AttentionProblem& p = problem_;
    p.kernel = KernelKind::batch_decode;
    if (paged_) {
      // With system prompts: sequences reading the same prompt pages next to each other, and
      // the step decoded by the shared-prefix path (prefix once per group + each own suffix).
      step_host_->build(*sched_, *paged_, handles);
      if (const SharedPrefixLayout* layout = step_host_->prefix_layout()) {
        timing.prefix_levels = static_cast<std::int64_t>(layout->levels.size());
        timing.prefix_sequences = step_host_->shared_sequences();
        if (p.prefix)
          *p.prefix = *layout;
        else
          p.prefix = *layout;
      } else {
        p.prefix.reset();
      }
      const BatchView<PagedKV<T>> view = paged_->batch<T>(step_host_->batch_handles());
      step_host_->set_view_lengths(view.lengths_host);
      p.paged = erased_kv(view.kv);
      p.seq_lens = view.seq_lens_device;
      p.max_len = view.max_len;
      p.batch = view.num_seqs;
      p.host_seq_lens.assign(view.lengths_host.begin(), view.lengths_host.end());
      p.host_indptr.assign(step_host_->indptr().begin(), step_host_->indptr().end());
      p.host_last_page_len.assign(step_host_->last_page_len().begin(), step_host_->last_page_len().end());
      p.last_page_len = staged_last_page_len(staged_.get(), n_running, p.batch);
      const std::span<const std::int32_t> position = step_host_->position();
      for (std::int64_t i = 0; i < n_running; ++i) writes[i].batch_index = position[static_cast<std::size_t>(i)];
      if (p.prefix) use_shared_prefix(p, timing);
    } else {
      std::int32_t first = contiguous_->slot_of(handles[0]), last = 0;
      for (const SequenceHandle& h : handles) {
        first = std::min(first, contiguous_->slot_of(h));
        last = std::max(last, contiguous_->slot_of(h));
      }
      const BatchView<ContiguousKV<T>> view = contiguous_->slot_span<T>(first, last - first + 1);
      p.contiguous = erased_kv(view.kv);
      p.seq_lens = view.seq_lens_device;
      p.max_len = view.max_len;
      p.batch = view.num_seqs;
      p.host_seq_lens.assign(view.lengths_host.begin(), view.lengths_host.end());
      for (std::int64_t i = 0; i < n_running; ++i)
        writes[i].batch_index = contiguous_->slot_of(running[static_cast<std::size_t>(i)].handle) - first;
    }
    for (std::int64_t i = 0; i < n_running; ++i) {
      const TraceScheduler::Running& r = running[static_cast<std::size_t>(i)];
      const TraceRequest& req = sched_->trace()[static_cast<std::size_t>(r.request)];
      const auto len = static_cast<std::int32_t>(pool_->length(r.handle));
      writes[i].request = r.request;
      writes[i].to = len;
      // A new sequence's prompt (after what it shares from the prefix cache), else its new token.
      writes[i].from = r.generated == 1 ? static_cast<std::int32_t>(r.shared_tokens) : len - 1;
      writes[i].prefix_len = static_cast<std::int32_t>(req.system_prompt_len);
      writes[i].prefix_key = req.system_prompt >= 0 ? t_.spec.requests + req.system_prompt : 0;
    }
    // The staged rows, a private segment of the step's block (only the step's own kernels read
    // staged_): the writes, q rows by batch position (free slots of a contiguous span get request
    // -1's values), the last-page lengths.
    const std::size_t staged_bytes = static_cast<std::size_t>(n_running + p.batch) * sizeof(TraceWrite) +
                                     (paged_ ? static_cast<std::size_t>(p.batch) * sizeof(std::int32_t) : 0);
    auto* host = static_cast<std::int32_t*>(block.write_private(staged_.get(), staged_bytes));
    std::copy(writes, writes + n_running, staged_writes(host));
    TraceWrite* q_rows = staged_q_rows(host, n_running);
    std::fill(q_rows, q_rows + p.batch, TraceWrite{0, -1, 0, 0});
    for (std::int64_t i = 0; i < n_running; ++i) q_rows[writes[i].batch_index] = writes[i];
    if (paged_)
      std::copy(p.host_last_page_len.begin(), p.host_last_page_len.end(),
                staged_last_page_len(host, n_running, p.batch));
    p.q = q_.get();
    p.o = o_.get();
    p.lse = lse_.get();
    timing.decoded = p.batch;

    const auto plan0 = Clock::now();
    timing.view_us = us_between(view0, plan0);
    workspace_->reset(block);
    backend_.plan(p, *workspace_);
    const auto flush0 = Clock::now();
    timing.plan_us = us_between(plan0, flush0);
    // The step's uploads: one copy of the block and one launch (kernels/step_uploads.hpp), counted
    // with the view (whose uploads they mostly are).
    collected.reset();
    uploads_->flush();
    const auto device0 = Clock::now();
    timing.view_us += us_between(flush0, device0);
    DB_CUDA_CHECK(cudaEventRecord(events_[parity_].ready, stream_));  // the step's host work is done

    // The cache writes and q (not timed), then the decode between the events.
    const std::uint64_t k_seed = kv_seed(t_.seed);
    const int n = static_cast<int>(n_running);
    const TraceWrite* writes_dev = staged_writes(staged_.get());
    if (paged_)
      DB_CUDA_CHECK(write_trace_tokens(typed_kv<T>(p.paged), writes_dev, n, t_.shape.heads_kv, t_.shape.head_dim,
                                       k_seed, stream_));
    else
      DB_CUDA_CHECK(write_trace_tokens(typed_kv<T>(p.contiguous), writes_dev, n, t_.shape.heads_kv,
                                       t_.shape.head_dim, k_seed, stream_));
    DB_CUDA_CHECK(fill_trace_q(q_.get(), staged_q_rows(staged_.get(), n_running), p.batch, t_.shape.heads_q,
                               t_.shape.head_dim, q_seed(t_.seed), step_, stream_));
    Events& ev = events_[parity_];
    DB_CUDA_CHECK(cudaEventRecord(ev.start, stream_));
    DB_CUDA_CHECK(backend_.run(stream_));
    DB_CUDA_CHECK(cudaEventRecord(ev.stop, stream_));

    const bool verified = trace_step_verified(step_, t_.verify_every, t_.steps, final_step());
    if (!t_.host_overlap || verified) {
      // Serial (and every verified step): the step's decode is done before the next step begins.
      DB_CUDA_CHECK(cudaEventSynchronize(ev.stop));
      parity_guard_.completed(step_);
      finish_pending();
      read_times(ev, timing);
    } else {
      // One step in flight: wait for the previous step's decode, then go on to the next step's
      // host work while this one runs; its times are read in the next step.
      finish_pending();
      pending_ = static_cast<std::int64_t>(timings_.size());  // timings_ holds one entry per earlier step
      pending_parity_ = parity_;
    }
    if (verified) verify(p, std::vector<TraceWrite>(writes, writes + n_running));
    excluded_us_ += us_between(device0, Clock::now());
    return timing;
  }

  // The shared-prefix path where the backend takes the step's layout; otherwise the batch decode
  // over the same pages (every sequence reads its prompt itself), the first reason kept.
  void use_shared_prefix(AttentionProblem& p, TraceStepTiming& timing) {
    p.kernel = KernelKind::shared_prefix;
    std::optional<std::string> why = backend_.supports(p);
    if (!why) why = shared_prefix_unsupported_reason({t_.shape, t_.dtype}, *p.prefix);
    if (!why) return;
    if (fallback_reason_.empty()) fallback_reason_ = *why;
    ++fallback_steps_;
    p.kernel = KernelKind::batch_decode;
    p.prefix.reset();
    timing.prefix_levels = 0;
    timing.prefix_sequences = 0;
  }

  // A step's GPU time (start to stop) and exposed host time (resume to ready), once its stop
  // event has completed.
  void read_times(const Events& ev, TraceStepTiming& timing) {
    float ms = 0;
    DB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.start, ev.stop));
    timing.gpu_us = static_cast<double>(ms) * 1e3;
    DB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev.resume, ev.ready));
    timing.exposed_host_us = std::max(0.0, static_cast<double>(ms) * 1e3);
    ctx_.measured_seconds += timing.gpu_us * 1e-6;
  }
  // host_overlap: the step whose decode is still in flight, waited for and its times read.
  void finish_pending() {
    if (pending_ < 0) return;
    const Events& ev = events_[pending_parity_];
    DB_CUDA_CHECK(cudaEventSynchronize(ev.stop));
    parity_guard_.completed(pending_);
    read_times(ev, timings_[static_cast<std::size_t>(pending_)]);
    pending_ = -1;
  }

  // The step's o and lse against the float64 reference, and every stored row of every running
  // sequence against the generator.
  void verify(const AttentionProblem& p, std::vector<TraceWrite> seqs) {
    const auto v0 = Clock::now();
    const std::size_t heads = static_cast<std::size_t>(p.batch) * t_.shape.heads_q;
    DeviceBuffer<double> ws(gpu_reference_workspace_doubles(t_.shape, p.batch, p.max_len));
    DeviceBuffer<double> ref_o(heads * t_.shape.head_dim), ref_abs(heads * t_.shape.head_dim), ref_lse(heads);
    const GpuReferenceOutput ref{ref_o.get(), ref_abs.get(), ref_lse.get()};
    const auto run_reference = [&](const auto& kv) {
      DB_CUDA_CHECK(gpu_reference_decode(kv, t_.shape, p.batch, p.max_len, p.seq_lens, q_.get(), ws.get(), ref,
                                         stream_));
    };
    if (paged_)
      run_reference(typed_kv<T>(p.paged));
    else
      run_reference(typed_kv<T>(p.contiguous));
    VerificationResult r = verify_decode_on_device(o_.get(), lse_.get(), ref, heads, t_.shape.head_dim, t_.dtype,
                                                   stream_);

    for (TraceWrite& s : seqs) s.from = 0;  // every row up to the length
    DB_CUDA_CHECK(cudaMemcpyAsync(writes_.get(), seqs.data(), seqs.size() * sizeof(TraceWrite), cudaMemcpyHostToDevice,
                                  stream_));
    DeviceBuffer<unsigned long long> bad(1);
    DB_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0, sizeof(unsigned long long), stream_));
    const std::uint64_t k_seed = kv_seed(t_.seed);
    const int n = static_cast<int>(seqs.size());
    if (paged_)
      DB_CUDA_CHECK(check_trace_rows(typed_kv<T>(p.paged), writes_.get(), n, t_.shape.heads_kv, t_.shape.head_dim,
                                     k_seed, bad.get(), stream_));
    else
      DB_CUDA_CHECK(check_trace_rows(typed_kv<T>(p.contiguous), writes_.get(), n, t_.shape.heads_kv,
                                     t_.shape.head_dim, k_seed, bad.get(), stream_));
    unsigned long long mismatches = 0;
    DB_CUDA_CHECK(cudaMemcpyAsync(&mismatches, bad.get(), sizeof mismatches, cudaMemcpyDeviceToHost, stream_));
    DB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    std::int64_t rows = 0;
    for (const TraceWrite& s : seqs) rows += static_cast<std::int64_t>(s.to) * t_.shape.heads_kv;

    json entry = r.to_json();
    entry["step"] = step_;
    entry["decoded"] = p.batch;
    entry["running"] = static_cast<std::int64_t>(seqs.size());
    entry["rows_checked"] = rows;
    entry["row_mismatches"] = mismatches;
    checks_.push_back(std::move(entry));
    if (checks_.size() == 1) total_ = r;
    else accumulate(total_, r);
    const bool ok = r.passed && mismatches == 0;
    if (!ok && verified_ok_) {
      first_failure_ = "step " + std::to_string(step_) + ": " +
                       (r.passed ? std::to_string(mismatches) + " stored K/V rows differ from what the trace wrote"
                                 : r.summary());
    }
    verified_ok_ = verified_ok_ && ok;
    verify_us_ += us_between(v0, Clock::now());
  }

  const TracePoint& t_;
  Backend& backend_;
  RunContext& ctx_;
  std::unique_ptr<KVPool> pool_;
  std::unique_ptr<RadixCache> prefix_cache_;  // after pool_: drops its page references before the pool goes
  PagedPool* paged_ = nullptr;
  ContiguousPool* contiguous_ = nullptr;
  json pool_json_;
  std::int64_t max_batch_ = 0;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<StepWorkspace> workspace_;
  Events events_[2];  // by step parity
  int parity_ = 0;
  std::int64_t pending_ = -1;  // host_overlap: the index of the step whose times are not read yet
  int pending_parity_ = 0;
  StepParityGuard parity_guard_;  // the step upload blocks, by step parity
  DeviceBuffer<float> q_, o_, lse_;
  DeviceBuffer<TraceWrite> writes_;  // verification's row list
  std::unique_ptr<StepUploads> uploads_;  // the step's merged upload block, two by step parity
  std::vector<TraceWrite> writes_host_;   // the step's write list (kept: its capacity)
  DeviceBuffer<std::int32_t> staged_;
  std::unique_ptr<TraceStepHost> step_host_;  // paged: the step's batch order, layout and page counts
  AttentionProblem problem_;                   // the step's problem, kept from step to step
  std::string fallback_reason_;
  std::int64_t fallback_steps_ = 0;
  TraceScheduler* sched_ = nullptr;
  std::int64_t step_ = 0;
  double excluded_us_ = 0, verify_us_ = 0;
  std::vector<TraceStepTiming> timings_;
  json checks_ = json::array();
  VerificationResult total_;
  bool verified_ok_ = true;
  std::string first_failure_;
};

class TraceRunner final : public PointRunner {
 public:
  std::string name() const override { return std::string(kernel_name(KernelKind::trace)); }

  std::optional<std::string> cannot_run(const Point& point) const override {
    TracePoint t;
    try {
      t = parse_trace_point(point.parameters);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    if (auto why = trace_unsupported(t)) return why;
    const BackendEntry* entry = find_backend(kDefaultBackend);
    if (!entry) return "backend " + std::string(kDefaultBackend) + " is not registered";
    return entry->make()->supports(described_problem(t));
  }

  std::uint64_t device_bytes_needed(const Point& point) const override { return trace_device_bytes(point.parameters); }

  json run(const Point& point, RunContext& ctx) override {
    if (auto why = cannot_run(point)) return {{"status", std::string(kStatusSkipped)}, {"reason", *why}};
    const TracePoint t = parse_trace_point(point.parameters);
    if (!backend_) backend_ = find_backend(kDefaultBackend)->make();
    try {
      switch (t.dtype) {
        case DType::fp32: return TraceRun<float>(t, *backend_, ctx).run();
        case DType::fp16: return TraceRun<__half>(t, *backend_, ctx).run();
        case DType::bf16: return TraceRun<__nv_bfloat16>(t, *backend_, ctx).run();
        default: break;
      }
    } catch (const PoolError& e) {
      if (e.kind() != PoolErrorKind::OutOfDeviceMemory) throw;
      return {{"status", std::string(kStatusSkipped)}, {"reason", std::string("trace pool: ") + e.what()}};
    }
    return {{"status", std::string(kStatusSkipped)}, {"reason", "dtype " + std::string(dtype_name(t.dtype))}};
  }

 private:
  std::unique_ptr<Backend> backend_;
};

}  // namespace

std::unique_ptr<PointRunner> make_trace_runner() { return std::make_unique<TraceRunner>(); }

}  // namespace decode_bench::sweeps
