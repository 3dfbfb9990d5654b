// Implementation notes (docs/harness.md has the user-facing version):
//  - One Google Benchmark is registered per repetition, run through a capturing reporter and
//    cleared. Each GB iteration times one gated launch region; its manual time is the
//    event-measured time divided by the launches in it. GB's MinTime (manual time) sets the
//    iterations of the first repetition, later ones reuse that count; each repetition becomes one
//    of our samples (its mean time per launch). After each, next_timing_step (timing_options.hpp)
//    decides whether another is taken: the repetitions, a cv target, a wall-time limit.
//  - Every sample starts behind a gate kernel that the host opens once the sample is enqueued
//    (harness/stream_gate.hpp), so the events never time the host. Samples are also pipelined
//    two deep (k+1 enqueued before the host waits on k), which keeps the GPU busy between them.
//  - Warm-up and (for the graph method) capture run on the first call of the benchmark body,
//    outside its timing loop, so GB's probe runs and repetitions reuse them.
#include "harness/timing.hpp"

#include <array>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "harness/benchmark_flags.hpp"
#include "harness/cuda_check.hpp"
#include "harness/nvtx.hpp"
#include "harness/stream_gate.hpp"

namespace decode_bench {
namespace {

struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
};

// Everything the benchmark body needs; owns the CUDA objects it creates.
class Sampler {
 public:
  Sampler(const LaunchFn& launch, const TimingOptions& options, L2Flusher& flusher, cudaStream_t stream)
      : launch_(launch), options_(options), flusher_(flusher), stream_(stream) {}
  ~Sampler() {
    if (graph_exec_) cudaGraphExecDestroy(graph_exec_);
    for (auto& p : events_) {
      if (p.start) cudaEventDestroy(p.start);
      if (p.stop) cudaEventDestroy(p.stop);
    }
    if (own_stream_) cudaStreamDestroy(own_stream_);
  }

  // Warm-up, single-launch probe, plan, graph capture. Returns the first error.
  cudaError_t prepare() {
    if (!stream_) {
      DB_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&own_stream_, cudaStreamNonBlocking));
      stream_ = own_stream_;
    }
    for (auto& p : events_) {
      DB_RETURN_IF_ERROR(cudaEventCreate(&p.start));
      DB_RETURN_IF_ERROR(cudaEventCreate(&p.stop));
    }
    // Warm-up launches queued back to back (no sync): the last one keeps the GPU busy while the
    // probe's start event and launch are enqueued.
    for (int i = 0; i < options_.warmup; ++i) {
      if (cold()) DB_RETURN_IF_ERROR(flush());
      DB_RETURN_IF_ERROR(launch_(stream_));
    }
    DB_RETURN_IF_ERROR(enqueue_sample(events_[0], /*use_graph=*/false));
    float ms = 0;
    DB_RETURN_IF_ERROR(wait_sample(events_[0], ms));
    warmup_launch_us_ = 1e3 * ms;
    plan_ = choose_timing_plan(warmup_launch_us_, options_);
    if (plan_.method == TimingMethod::graph) DB_RETURN_IF_ERROR(capture_graph());
    return cudaSuccess;
  }

  // gate [flush] start [launch | graph] stop, on the stream; the gate opens once all of it is
  // enqueued, so the events bracket GPU work only (harness/stream_gate.hpp).
  cudaError_t enqueue_sample(const EventPair& p, bool use_graph) {
    DB_RETURN_IF_ERROR(gate_.hold(stream_));
    const cudaError_t err = enqueue_gated(p, use_graph);
    gate_.release();
    return err;
  }
  cudaError_t enqueue_gated(const EventPair& p, bool use_graph) {
    if (cold()) DB_RETURN_IF_ERROR(flush());
    DB_RETURN_IF_ERROR(cudaEventRecord(p.start, stream_));
    if (use_graph) {
      DB_RETURN_IF_ERROR(cudaGraphLaunch(graph_exec_, stream_));
    } else {
      DB_RETURN_IF_ERROR(launch_(stream_));
    }
    return cudaEventRecord(p.stop, stream_);
  }

  cudaError_t wait_sample(const EventPair& p, float& ms) {
    DB_RETURN_IF_ERROR(cudaEventSynchronize(p.stop));
    return cudaEventElapsedTime(&ms, p.start, p.stop);
  }

  // The benchmark body: GB calls it for its probe runs and for every repetition.
  // A CUDA error is never handed to GB as SkipWithError: GB's aggregate step mishandles
  // repetitions that fail partway (google/benchmark#1406). Instead the remaining iterations
  // finish without GPU work, reporting 1 s each so GB asks for no more, and time_launches
  // discards everything GB measured once error() is set.
  void run(benchmark::State& state) {
    if (error_ == cudaSuccess && !prepared_) {
      prepared_ = true;
      error_ = prepare();
    }
    const bool graph = plan_.method == TimingMethod::graph;
    const double per_launch = 1.0 / plan_.launches_per_sample;
    if (error_ == cudaSuccess && !pending_) {
      if (!cold())  // hot: an untimed launch first, so the first start event does not wait for the host
        error_ = graph ? cudaGraphLaunch(graph_exec_, stream_) : launch_(stream_);
      if (error_ == cudaSuccess) error_ = enqueue_sample(events_[current_], graph);
      pending_ = error_ == cudaSuccess;
    }
    for (auto _ : state) {
      if (error_ != cudaSuccess) {
        state.SetIterationTime(1.0);
        continue;
      }
      float ms = 0;
      cudaError_t err = enqueue_sample(events_[current_ ^ 1], graph);  // the next one is queued first
      if (err == cudaSuccess) err = wait_sample(events_[current_], ms);
      if (err != cudaSuccess) {
        error_ = err;
        state.SetIterationTime(1.0);
        continue;
      }
      state.SetIterationTime(1e-3 * ms * per_launch);
      current_ ^= 1;
    }
    // The sample queued last stays in flight and is the first one the next call (GB's next
    // repetition) reads: one unread launch per measurement instead of one per repetition, which
    // for a 240 ms kernel was 5 of its 13 launches (docs/harness.md).
  }

  // After the last repetition: waits for the sample left in flight, so the stream is idle.
  cudaError_t finish() {
    pending_ = false;
    const cudaError_t drain = stream_ ? cudaStreamSynchronize(stream_) : cudaSuccess;
    if (error_ == cudaSuccess) error_ = drain;
    return error_;
  }

  cudaError_t error() const { return error_; }
  const TimingPlan& plan() const { return plan_; }
  double warmup_launch_us() const { return warmup_launch_us_; }

 private:
  bool cold() const { return flushes_l2(options_.mode); }
  cudaError_t flush() { return flusher_.flush(stream_, options_.mode == TimingMode::cold_write); }

  cudaError_t capture_graph() {
    cudaGraph_t graph = nullptr;
    DB_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    cudaError_t launch_err = cudaSuccess;
    for (int i = 0; i < plan_.launches_per_sample && launch_err == cudaSuccess; ++i) launch_err = launch_(stream_);
    const cudaError_t end_err = cudaStreamEndCapture(stream_, &graph);
    if (launch_err == cudaSuccess && end_err == cudaSuccess)
      launch_err = cudaGraphInstantiate(&graph_exec_, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    return launch_err != cudaSuccess ? launch_err : end_err;
  }

  const LaunchFn& launch_;
  const TimingOptions& options_;
  L2Flusher& flusher_;
  cudaStream_t stream_;
  cudaStream_t own_stream_ = nullptr;
  std::array<EventPair, 2> events_{};  // ping-pong: one sample in flight while the other is read
  StreamGate gate_;
  cudaGraphExec_t graph_exec_ = nullptr;
  TimingPlan plan_;
  double warmup_launch_us_ = 0;
  bool prepared_ = false;
  bool pending_ = false;  // a sample is queued on events_[current_] and not yet read
  int current_ = 0;
  cudaError_t error_ = cudaSuccess;
};

// Keeps the per-repetition runs; prints nothing (our JSON comes from our writer).
class CapturingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration && r.iterations > 0) this->runs.push_back(r);
  }
  std::vector<Run> runs;
};

// One Google Benchmark repetition of the sampler, registered and cleared around the run. The
// first one sizes its iterations by MinTime (Google Benchmark's probe); later ones pass the count
// it found, as Google Benchmark itself does for repetitions 2..n of one registration. Returns
// nullopt when no run was reported.
std::optional<benchmark::BenchmarkReporter::Run> run_repetition(const std::string& name, Sampler& sampler,
                                                               const TimingOptions& options, long long iterations) {
  benchmark::ClearRegisteredBenchmarks();
  auto* bench =
      benchmark::RegisterBenchmark(name.c_str(), [&sampler](benchmark::State& state) { sampler.run(state); });
  bench->UseManualTime()->Unit(benchmark::kMicrosecond)->Repetitions(1);
  if (iterations > 0) {
    bench->Iterations(iterations);
  } else if (options.min_rep_time_ms > 0) {
    bench->MinTime(1e-3 * options.min_rep_time_ms);
  } else {
    bench->Iterations(1);
  }
  CapturingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, ".");
  benchmark::ClearRegisteredBenchmarks();
  if (reporter.runs.empty()) return std::nullopt;
  return reporter.runs.back();
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TimingResult time_launches(std::string_view name, const LaunchFn& launch, const TimingOptions& options,
                           L2Flusher& flusher, cudaStream_t stream) {
  validate(options);
  // Google Benchmark has one process-wide registry and runner: callers on other threads (sweep
  // --devices, one per GPU) take turns here; their setup and verification still overlap.
  static std::mutex benchmark_registry;
  const std::lock_guard turn(benchmark_registry);
  const auto start = std::chrono::steady_clock::now();  // the point's timing, not the wait for its turn
  ensure_benchmark_initialized();
  TimingResult result;
  result.name = std::string(name);
  result.mode = options.mode;
  result.options = options;
  NvtxRange range(result.name);
  cudaGetLastError();  // a non-sticky error left by earlier work is not this point's error

  // One repetition (one sample) per Google Benchmark run, so that after each the stop rule
  // (next_timing_step: the repetitions, the cv target, the time limit) decides on the next.
  Sampler sampler(launch, options, flusher, stream);
  long long iterations = 0;
  TimingStop stop = TimingStop::more;
  while ((stop = next_timing_step(result.samples_us, seconds_since(start), options)) == TimingStop::more) {
    const auto run = run_repetition(result.name, sampler, options, iterations);
    if (sampler.error() != cudaSuccess) break;
    if (!run) {
      result.error = "Google Benchmark reported no repetition";
      break;
    }
    iterations = run->iterations;
    result.samples_us.push_back(1e6 * run->real_accumulated_time / static_cast<double>(run->iterations));
  }
  sampler.finish();

  result.plan = sampler.plan();
  result.warmup_launch_us = sampler.warmup_launch_us();
  result.iterations_per_repetition = iterations;
  if (sampler.error() != cudaSuccess) {
    result.error = std::string(cudaGetErrorName(sampler.error())) + ": " + cudaGetErrorString(sampler.error());
    result.cuda_error = static_cast<int>(sampler.error());
    result.sticky_error = is_sticky_error(sampler.error());
    result.samples_us.clear();
    return result;
  }
  if (!result.error.empty()) return result;
  result.stopped_by = stop;
  result.stats = summarize(result.samples_us, options.noise_cv);
  return result;
}

}  // namespace decode_bench
