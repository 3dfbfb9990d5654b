#pragma once
// The runner of kernel = trace: continuous batching over a serving trace in a real device pool.
// The scheduler (pools/trace_scheduler.hpp) admits, grows and releases sequences through the
// pool's own admit / extend / release; each step with a batch then
//   host    the batch view (paged: the pool's block-table gather; contiguous: the span of slots
//           from the lowest to the highest running one, free slots as empty sequences) and the
//           decode-bench backend's plan for it (Backend::plan, host lengths, on the pool's stream)
//   writes  a kernel writes each new token's K/V (a new sequence's whole prompt) where the pool put
//           it, and q (sweeps/trace_fill.hpp), outside the timed region
//   decode  Backend::run over the whole batch between two CUDA events (the step's GPU time)
//   verify  at sampled steps (trace_step_verified): o and lse against the float64 reference on the
//           GPU, and every stored row of every running sequence against the generator's values
// A step's host time is its wall time less the device work and the verification, so it holds
// scheduling, the pool's appends and block tables, the batch view and the plan. Steps run back to
// back without an L2 flush, as a server's do. Ctrl-C ends the trace after the current step; the
// point keeps the steps measured so far (trace.interrupted).
#include <memory>

#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

std::unique_ptr<PointRunner> make_trace_runner();

}  // namespace decode_bench::sweeps
