#include "sweeps/phase_summary.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace decode_bench::sweeps {

std::string phase_summary(const PhaseSeconds& totals, double wall_seconds, double measured_seconds) {
  std::vector<std::pair<std::string, double>> order(totals.begin(), totals.end());
  double in_points = 0;
  for (const auto& [_, s] : order) in_points += s;
  order.emplace_back("outside points", std::max(0.0, wall_seconds - in_points));
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  char buf[160];
  std::snprintf(buf, sizeof buf, "time by phase (wall %.1f s, measured %.2f s):", wall_seconds, measured_seconds);
  std::string out = buf;
  for (const auto& [name, s] : order) {
    std::snprintf(buf, sizeof buf, "\n  %-16s %8.2f s  %5.1f%%", name.c_str(), s,
                  wall_seconds > 0 ? 100.0 * s / wall_seconds : 0.0);
    out += buf;
  }
  return out + "\n";
}

}  // namespace decode_bench::sweeps
