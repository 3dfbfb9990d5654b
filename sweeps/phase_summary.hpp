#pragma once
// The end-of-sweep lines that say where the wall time went: the points' run.phases summed, each
// phase with its share of the sweep's wall time, e.g.
//   time by phase (wall 52.1 s, measured 0.39 s): timing 21.0 s (40%), counters 12.3 s (24%), ...
#include <string>

#include "sweeps/phase_timer.hpp"

namespace decode_bench::sweeps {

// Phases largest first; the time outside every point (ceilings, plan, final write) as "outside points".
std::string phase_summary(const PhaseSeconds& totals, double wall_seconds, double measured_seconds);

}  // namespace decode_bench::sweeps
