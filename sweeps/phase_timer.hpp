#pragma once
// Where a point's wall time goes: a runner times its phases into RunContext::phases (seconds by
// name), the driver adds "other" (wall time minus the phases) and records them as run.phases.
// Phases that end with device work must synchronize before the scope ends, or the work is
// charged to whichever phase waits for it next.
#include <chrono>
#include <map>
#include <string>
#include <string_view>

namespace decode_bench::sweeps {

using PhaseSeconds = std::map<std::string, double, std::less<>>;

// The phase names the decode runners use, in the order a point passes through them.
inline constexpr std::string_view kPhasePoolBuild = "pool_build";      // pool arena, slots, pages, block tables
inline constexpr std::string_view kPhaseDataFill = "data_fill";        // K/V/q generated (host + upload, or device)
inline constexpr std::string_view kPhaseReference = "reference";       // float64 reference (CPU or GPU)
inline constexpr std::string_view kPhaseVerification = "verification"; // checked launch + comparison
inline constexpr std::string_view kPhaseTiming = "timing";             // the timed repetitions (harness/timing)
inline constexpr std::string_view kPhaseCounters = "counters";         // the profiled replay passes
inline constexpr std::string_view kPhaseOther = "other";               // the rest of the wall time (driver)

class PhaseTimer {
 public:
  PhaseTimer(PhaseSeconds& phases, std::string_view name)
      : phases_(&phases), name_(name), t0_(std::chrono::steady_clock::now()) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() { stop(); }
  // Ends the phase early (idempotent).
  void stop() {
    if (!phases_) return;
    (*phases_)[std::string(name_)] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    phases_ = nullptr;
  }

 private:
  PhaseSeconds* phases_;
  std::string_view name_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace decode_bench::sweeps
