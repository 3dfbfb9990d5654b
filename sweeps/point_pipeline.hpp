#pragma once
// The one measurement pipeline: every GPU point of every backend passes through
// run_point_pipeline, which owns the point's life once:
//   supports       the backend judges the described problem; a reason -> "skipped"
//   io dtype       the q / o dtype the backend asks for (fp32, fp16, bf16; else "skipped")
//   build          pool, K/V data, q, o, lse (phases pool_build, data_fill); the pool record
//   poison         o and lse filled with NaN bytes (phase verification)
//   plan           backend.plan, untimed, its host time recorded (backend.plan_us); every
//                  workspace buffer it allocates is poisoned before it sees it
//   checked launch backend.run once on the point's stream, waited for (phase verification)
//   verify         against the float64 reference, on the GPU where it takes the point, else the
//                  CPU (phases reference, verification); a failure ends the point untimed
//   model          the backend's traffic model, else the minimum; the shared-prefix bound
//   time           harness/timing (cold / hot, L2 flush), or the E2E copies around the launch
//   counters       the profiled pass over backend.run_serial (unless counters=false or end_to_end)
//   JSON           status, backend, pool, verification, model, plan, bound, timing, achieved, counters
// The device work is behind PointSteps, so the order above is tested on the host with a fake
// (tests/test_point_pipeline.cpp); sweeps/gpu_point_steps.hpp is the real one.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/attention_problem.hpp"
#include "harness/backend.hpp"
#include "harness/timing.hpp"
#include "harness/timing_options.hpp"
#include "harness/timing_result.hpp"
#include "harness/verify.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

// What the point asks of the measurement, beside its problem.
struct MeasureRequest {
  std::string id;                       // the point id: NVTX ranges and the timing's name
  TimingMode timing = TimingMode::cold;
  bool end_to_end = false;              // time the host copies of K, V, q, o, lse around the launch
  bool counters = true;                 // the profiled counter pass
  int layers = 1;                       // > 1: also a decode step of that many layers (sweeps/layer_step.hpp)
};

// A verification and what the point records beside the result (method, sequences checked).
struct CheckedVerification {
  VerificationResult result;
  nlohmann::json details = nlohmann::json::object();  // merged into the point's "verification"
};

// The device side of one point, step by step, in the order run_point_pipeline takes them.
class PointSteps {
 public:
  virtual ~PointSteps() = default;
  // Pool, data, q (in problem.io_dtype), o and lse: fills the problem's device pointers and
  // returns with every upload finished.
  virtual void build(AttentionProblem& problem) = 0;
  // After build: what the point's pool holds where that is recorded (a paged point with a window:
  // the pages released behind it, sweeps/window_release.hpp), else null. The point's "pool".
  virtual nlohmann::json pool_record() const { return nullptr; }
  // NaN bytes into o and lse, so an element the backend never writes fails verification.
  virtual void poison_outputs() = 0;
  // Where plan() allocates (each buffer poisoned) and enqueues its initialisation.
  virtual Workspace& workspace() = 0;
  // One launch on the point's stream, waited for; o widened back to FP32 when io_dtype is not,
  // and lse turned from `lse_base` into the natural log. Throws CudaError when the launch fails.
  virtual void checked_launch(const LaunchFn& launch, LseBase lse_base) = 0;
  // The launch's o and lse against the float64 reference.
  virtual CheckedVerification verify() = 0;
  // The timed launches: harness/timing's time_launches, or with the E2E copies around them.
  virtual TimingResult time(const LaunchFn& launch, const TimingOptions& options, bool end_to_end) = 0;
  // The per-block timeline's diagnostic launch after timing (DECODE_BENCH_BLOCK_TIMELINE); the
  // reason when it was asked for and failed.
  virtual std::optional<std::string> capture_block_timeline(const LaunchFn& launch) = 0;
  // The profiled counter pass over `launch`, beside the point's model.
  virtual nlohmann::json counters(const LaunchFn& launch, const nlohmann::json& model, TimingMode mode) = 0;

  // A decode step of L layers (layers > 1, sweeps/layer_step.hpp). Why these steps cannot build
  // more layers, or nullopt.
  virtual std::optional<std::string> layers_unsupported() const { return "this kind of point builds one layer only"; }
  // Layers 1 .. layers - 1 after build(problem): each its own pool and data (its own seed), q, o
  // and lse, with layer 0's lengths. Returns their problems (as `problem`, other pointers).
  virtual std::vector<AttentionProblem> build_layers(const AttentionProblem& problem, int layers);
  // `launches`, in order, captured into one CUDA graph; returns one launch of that graph (valid
  // until the point ends).
  virtual LaunchFn capture_step(const std::vector<LaunchFn>& launches);
  // Every layer's o and lse poisoned, `step` run once and waited for, each layer's o widened and
  // lse turned into the natural log as checked_launch does.
  virtual void checked_step(const LaunchFn& step, LseBase lse_base);
  // Layer `layer`'s o and lse (0: the point's own) against the float64 reference of its data.
  virtual CheckedVerification verify_layer(int layer);
};

// The minimum traffic of the problem (kernels/traffic_model.hpp) with no extra bytes: the model a
// point records when its backend has none of its own.
BackendTrafficModel minimum_traffic_model(const AttentionProblem& problem);

// The point's JSON (status and the blocks above) for `problem` as described (device pointers
// null). Adds the seconds of measured launches to ctx.measured_seconds and the phases to
// ctx.phases. Throws CudaError for CUDA failures outside timing, or a sticky one inside it (the
// driver stops the sweep); an exception from plan() other than CUDA's and memory exhaustion
// becomes this point's "error".
nlohmann::json run_point_pipeline(Backend& backend, AttentionProblem problem, PointSteps& steps,
                                  const MeasureRequest& request, RunContext& ctx);

// The policy a point's backend plans under: the run's knobs (ctx.tuning) with its measured DRAM
// read ceiling (ctx.ceilings.dram_read, GB/s, as bytes/s; 0 when the run measured none).
TuningPolicy planning_policy(const RunContext& ctx);

}  // namespace decode_bench::sweeps
