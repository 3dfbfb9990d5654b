#pragma once
// A trace point (kernel = trace): its parameters as the runner uses them, and the host-side
// pieces of its result (the pools it builds, the steps it verifies, the summary of its step
// records), kept apart from the device code so the host tests check them exactly.
//
// The workload: `requests` requests, Poisson at `arrival_rate` per decode step (0: all at step 0),
// prompt and output lengths drawn around `prompt_len` and `output_len` by `trace_lengths`
// (pools/trace_workload.hpp; uniform on [1, 2 x mean - 1], zipf with exponent zipf_alpha, lognormal
// with length_sigma), one seed one trace. The pool holds budget_bytes of K + V:
// With system_prompt_len > 0 every prompt starts with one of system_prompts system prompts of that
// many tokens (pools/trace_workload.hpp); a paged pool shares their whole pages through a radix
// prefix cache (pools/radix_cache.hpp), a contiguous slab holds its own copy.
//   contiguous  slabs of max_seq_len = ceil(fragmentation x (system_prompt_len + prompt_len + output_len)), as many as
//               fit; a request longer than a slab is rejected when it arrives
//   paged       pages of page_size, as many as fit; max_seq_len = the trace's longest request
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "pools/trace_scheduler.hpp"
#include "pools/trace_workload.hpp"

namespace decode_bench::sweeps {

struct TracePoint {
  TraceSpec spec;
  DecodeShape shape;
  DType dtype = DType::fp16;
  bool paged = false;
  int page_size = 16;
  std::string page_order = "sequential";
  double fragmentation = 1.0;
  std::uint64_t budget_bytes = 0;
  std::int64_t steps = 0;         // at most
  std::int64_t verify_every = 0;  // verified steps: 0, every verify_every-th, the last
  std::uint64_t seed = 0;
  // The step's host work runs while the previous step's decode is on the GPU (one step in
  // flight), as a serving loop does; false: each step waits for its decode first (serial).
  bool host_overlap = false;
};

// From a point's parameters (validated by the axis table). Throws std::invalid_argument naming the
// parameter for what the axes cannot check (a zipf mean out of its support's reach, say).
TracePoint parse_trace_point(const nlohmann::json& params);

// Why the runner cannot run it (the budget holds no slab or page, a slab of max_seq_len > 2^31 - 1
// tokens), or nullopt.
std::optional<std::string> trace_unsupported(const TracePoint& t);

// The contiguous slab: ceil(fragmentation x (system_prompt_len + prompt_len mean + output_len mean)).
std::int64_t trace_slab_tokens(const TracePoint& t);
// The paged pool's max_seq_len: the trace's longest request (prompt + output), at least 1.
std::int64_t trace_longest_request(const std::vector<TraceRequest>& trace);

// The K + V budget plus what a step allocates beside the pool (q, o, lse and the reference's
// buffers for the largest batch the budget can hold), for the sweep's memory check.
std::uint64_t trace_device_bytes(const nlohmann::json& params);

// Whether step `step` (from 0) is verified: the first, every verify_every-th, and the last, which
// is max_steps - 1 or the step after which no request is left (`final_step`).
bool trace_step_verified(std::int64_t step, std::int64_t verify_every, std::int64_t max_steps, bool final_step);

// One step's measurements beside the scheduler's record.
struct TraceStepTiming {
  double gpu_us = 0;    // the decode launch, CUDA events around it
  double host_us = 0;   // scheduling, appends, block tables, the batch view and the plan
  double plan_us = 0;   // the backend's plan alone (part of host_us)
  double view_us = 0;   // the batch view and the step's uploads: one copy and one launch (part of host_us)
  std::int64_t decoded = 0;  // sequences the launch decoded (contiguous: the slot span, free slots included)
  std::int64_t prefix_levels = 0;     // shared-prefix path: levels (groups sharing prompt pages); 0: batch decode
  std::int64_t prefix_sequences = 0;  // sequences that read a level
  // The step's host time the GPU waited for: CUDA events from when the GPU was done with what the
  // earlier steps enqueued (or the host began the step, if later) to when this step's host work
  // (scheduling, view, plan, with the view's and plan's uploads) was done. Serial: about host_us;
  // with host_overlap: the part not hidden behind the previous decode.
  double exposed_host_us = 0;
};

// The "steps" block: one array per field over the steps (records and timings of equal length).
nlohmann::json trace_steps_json(const std::vector<StepRecord>& records, const std::vector<TraceStepTiming>& timings);
// The "summary" block: tokens, steps, tokens_per_s (tokens / summed step GPU time), mean / p50 /
// p99 step GPU time (nearest rank), host time, host_over_gpu, the exposed host time and its
// ratio to the GPU time, peak and mean concurrency, finished, rejected, preempted. Throws
// std::invalid_argument when the lengths differ.
nlohmann::json trace_summary_json(const std::vector<StepRecord>& records, const std::vector<TraceStepTiming>& timings);

// Nearest-rank percentile (q in (0, 100]) of `values`; 0 for none.
double nearest_rank_percentile(std::vector<double> values, double q);

}  // namespace decode_bench::sweeps
