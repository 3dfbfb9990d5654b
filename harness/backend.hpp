#pragma once
// The kernel under test, behind a narrow interface: a backend computes decode attention for an
// AttentionProblem (harness/attention_problem.hpp); the measurement pipeline
// (sweeps/point_pipeline.hpp) owns everything else once for every backend: the pool and its data,
// poisoned outputs, verification against the float64 reference, the traffic model, timing,
// counters and the JSON. The `backend` axis picks one by name; backends/registry.cpp lists them.
//
// The pipeline calls, per point and in this order:
//   supports(problem)            before any memory exists: a reason ends the point as "skipped"
//   io_dtype(problem)            the q / o dtype the backend wants (fp32 unless it overrides)
//   plan(problem, workspace)     untimed, after o and lse are poisoned; its host time is recorded
//   run(stream)                  once for verification, then the timed launches (warm-up,
//                                repetitions, maybe inside a CUDA graph), then counter replays
//   plan_json(), traffic_model() for the point's JSON
// A backend object lives for a whole sweep on one device (one per worker thread) and may keep
// resources (streams, events, handles) from point to point; its constructor does no device work.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "harness/attention_problem.hpp"
#include "harness/lse_base.hpp"
#include "kernels/traffic_model.hpp"

namespace decode_bench {

class HostStaging;  // kernels/host_staging.hpp

// Device scratch memory a backend asks for while planning. The harness owns it: each allocation is
// filled with 0xFF bytes (NaN in every float type), so a backend that reads scratch it never
// wrote fails verification, and it is freed when the point ends.
class Workspace {
 public:
  virtual ~Workspace() = default;
  // `bytes` of device memory (nullptr for 0), valid until the point ends. Call from plan() only;
  // several calls give several buffers. Throws CudaError(cudaErrorMemoryAllocation) when the
  // device is full (the point is then skipped).
  virtual void* allocate(std::size_t bytes) = 0;
  // The stream plan() enqueues its uploads and zeroing on: the checked launch and every run come
  // after it on the same stream.
  virtual cudaStream_t stream() const = 0;
  // Page-locked memory for plan()'s uploads (kernels/host_staging.hpp), reset for each plan and
  // kept unchanged until the stream has run them, or nullptr: plan() then copies from its own
  // memory. A serving loop that plans while the previous step's decode runs provides one, so a
  // plan's upload never waits for that decode.
  virtual HostStaging* host_staging() { return nullptr; }
};

// A backend's own account of the bytes its planned launch moves (kernels/traffic_model.hpp): the
// minimum plus its intermediates in extra_bytes, and the name the point's model records.
struct BackendTrafficModel {
  TrafficModel model;
  std::string basis;  // e.g. "decode_min_bytes+splitk_partials"
};

class Backend {
 public:
  virtual ~Backend() = default;

  // The `backend` axis value ("decode-bench") and the version recorded in every point it runs.
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;

  // Why this backend cannot compute the problem (naming the parameter and value), or nullopt.
  // Sees the described problem: device pointers are null.
  virtual std::optional<std::string> supports(const AttentionProblem& problem) const = 0;

  // The dtype the backend reads q in and writes o in. The pipeline converts q from FP32 before
  // plan() and o back to FP32 after the checked launch, outside every timed region, and records it.
  virtual DType io_dtype(const AttentionProblem&) const { return DType::fp32; }

  // The base of the lse run() writes. The pipeline converts a base-2 lse to the natural log after
  // the checked launch, outside every timed region (harness/lse_base.hpp), and records it.
  virtual LseBase lse_base() const { return LseBase::natural; }

  // An arithmetic property the verifier's lse bound depends on: true where the softmax denominator
  // sums the weights p after rounding them to the MMA operand type (FlashInfer's MLA kernel does), so
  // the lse is off by up to that type's unit u, absolute. The MLA verifier then widens its lse bound
  // to u + the score error (sweeps/mla_verify.hpp); o's bound is unchanged. Plugins cannot declare it.
  virtual bool denominator_sums_rounded_weights() const { return false; }

  // Host-side choices, workspace requests and their initialisation (on workspace.stream()); never
  // timed. The problem stays alive and unchanged until the point ends. Throws on failure
  // (CudaError for CUDA's; the point records the message and the sweep goes on).
  virtual void plan(const AttentionProblem& problem, Workspace& workspace) = 0;

  // The planned computation on `stream`: enqueue only (no synchronisation, allocation or host
  // reads: it is captured into CUDA graphs), repeatable any number of times (each complete run
  // leaves the workspace ready for the next). Returns the launch status (cudaGetLastError()).
  virtual cudaError_t run(cudaStream_t stream) = 0;

  // The same computation on `stream` alone, for the counter pass's replays. A backend whose run()
  // forks work onto a second stream overrides it.
  virtual cudaError_t run_serial(cudaStream_t stream) { return run(stream); }

  // A decode step of L layers (the `layers` axis) runs one plan over L caches of one shape, as a
  // server's step does: why this backend cannot (the point is then skipped), or nullopt.
  virtual std::optional<std::string> layers_unsupported(const AttentionProblem&) const {
    return "backend " + name() + " cannot run its plan over another layer's data (layers > 1)";
  }
  // The planned computation over `layer`: the planned problem with another layer's K/V, q, o and
  // lse device pointers (same shape, dtypes, lengths and host metadata). Called after plan(),
  // without planning again; the launch has run()'s rules (capturable, repeatable). Layers share
  // the plan's workspace: their launches run one after another on one stream.
  virtual std::function<cudaError_t(cudaStream_t)> layer_launch(const AttentionProblem& layer) {
    (void)layer;
    return {};
  }

  // The last plan, as the point's "plan" object; it names the kernel family it runs ("family").
  virtual nlohmann::json plan_json() const = 0;

  // The bytes the last plan moves; nullopt leaves the pipeline's minimum model (no extra bytes).
  virtual std::optional<BackendTrafficModel> traffic_model(const AttentionProblem&) const { return std::nullopt; }
};

}  // namespace decode_bench
