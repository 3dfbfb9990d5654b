#pragma once
// How a configuration is timed, and the two decisions the timer makes on its own: events around
// single launches or a CUDA graph of many launches for kernels too short to time one at a time,
// and after each sample whether to take another. Host-only (no CUDA types), so the rules are
// unit-tested in CI.
#include <span>
#include <string>
#include <string_view>

#include "harness/statistics.hpp"

namespace decode_bench {

// cold: L2 flushed before every timed launch (what a decode step sees: the KV cache is not in
//       L2 when the step starts), by reading a buffer twice its size: the lines it leaves are clean.
// cold_write: the same, but flushed by writing that buffer (a memset), as benchmarks that flush
//       with `buffer.zero_()` do; L2 is then full of dirty lines, and their write-back to DRAM
//       lands inside the measured launch. Kept to reproduce such benchmarks' numbers and to
//       measure what that method adds (docs/harness.md).
// hot: back-to-back launches, L2 keeps what the last launch left.
enum class TimingMode { cold, hot, cold_write };

std::string_view to_string(TimingMode mode);
TimingMode parse_timing_mode(std::string_view text);  // "cold" | "hot" | "cold_write"; throws naming the value
// Whether L2 is flushed before every timed launch (cold and cold_write).
constexpr bool flushes_l2(TimingMode mode) { return mode != TimingMode::hot; }

struct TimingOptions {
  TimingMode mode = TimingMode::cold;
  int repetitions = 5;            // samples (one Google Benchmark repetition each) before the stop rule may end it
  int warmup = 2;                 // untimed launches first; the last one also sizes the graph
  double min_rep_time_ms = 2.0;   // each repetition runs launches until this much kernel time
  double noise_cv = kDefaultNoiseCv;  // cv above this is `noisy`; with max_repetitions, the target
  int max_repetitions = 0;        // > 0: add samples past `repetitions` until cv <= noise_cv, at most this many
  double point_time_limit_s = 0;  // > 0: take no further sample once the timing has used this much wall time
  double graph_threshold_us = 20; // hot mode: shorter kernels are timed as a graph; 0 = never
  double graph_target_us = 200;   // a graph holds enough launches to run about this long
  int max_graph_launches = 1000;
};

// Throws std::invalid_argument naming the field, its value and the rule it breaks.
void validate(const TimingOptions& options);

enum class TimingMethod { events, graph };
std::string_view to_string(TimingMethod method);

struct TimingPlan {
  TimingMethod method = TimingMethod::events;
  int launches_per_sample = 1;  // launches between the two events; the time is divided by this
};

// A pure function of the measured single-launch time (from the warm-up) and the options:
//  - cold, cold_write: always events around one launch. A graph cannot hold a flush between its launches
//    without the flush's time landing inside the measured interval, and it is not needed: the
//    flush kernel queued ahead of the start event keeps the GPU busy while the host enqueues the
//    event and the launch, so the host's launch latency is not measured.
//  - hot, single launch >= graph_threshold_us: events around one launch. The timer keeps the
//    next sample queued behind the current one, so the GPU never waits for the host.
//  - hot, shorter: a graph of ceil(graph_target_us / single) launches, at least 2, at most
//    max_graph_launches; a non-positive or non-finite estimate gets max_graph_launches.
TimingPlan choose_timing_plan(double single_launch_us, const TimingOptions& options);

// Why the timer stopped taking samples (`more`: it has not).
enum class TimingStop { more, repetitions, cv_target, max_repetitions, time_limit };
std::string_view to_string(TimingStop stop);

// Whether to take another sample, given those taken so far and the wall time the timing has used
// (warm-up included). A pure function, checked in this order:
//  - no sample yet: more (a timing always has at least one);
//  - point_time_limit_s > 0 and elapsed_s >= it: time_limit (this cuts `repetitions` short too);
//  - fewer than `repetitions`: more;
//  - no target (max_repetitions == 0): repetitions;
//  - cv of the samples (stddev / mean, as summarize computes it) <= noise_cv: cv_target;
//  - max_repetitions reached: max_repetitions;
//  - else more.
TimingStop next_timing_step(std::span<const double> samples_us, double elapsed_s, const TimingOptions& options);

}  // namespace decode_bench
