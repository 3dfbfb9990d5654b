#pragma once
// The timing engine: Google Benchmark runs the statistics (repetitions, iterations to a minimum
// time, aggregates) over CUDA-event times of the launch region only (UseManualTime), with the
// L2 flushed outside the measured interval in cold mode. docs/harness.md explains the method.
#include <functional>
#include <string_view>

#include <cuda_runtime.h>

#include "harness/l2_flush.hpp"
#include "harness/timing_options.hpp"
#include "harness/timing_result.hpp"

namespace decode_bench {

// Enqueues one launch of the configuration on the stream and returns its launch status
// (cudaGetLastError() after <<<>>>). It must be capturable into a CUDA graph: no synchronisation,
// allocation or host reads inside.
using LaunchFn = std::function<cudaError_t(cudaStream_t)>;

// Times `launch` under `options` and returns the samples and their summary, or the CUDA error
// that stopped it (TimingResult::error, with sticky_error set when the context is poisoned and
// the run must end after writing what it has). Samples are taken until next_timing_step says
// stop (options.repetitions, a cv target, a wall-time limit). `stream` 0 means: use a private stream (the
// graph method cannot capture the legacy default stream). Not re-entrant: Google Benchmark's
// registry is process-wide. Throws std::invalid_argument for invalid options.
TimingResult time_launches(std::string_view name, const LaunchFn& launch, const TimingOptions& options,
                           L2Flusher& flusher, cudaStream_t stream);

}  // namespace decode_bench
