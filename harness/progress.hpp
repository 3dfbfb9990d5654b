#pragma once
// Progress of a long run, one point at a time. On a terminal: one line rewritten in place with
// the point, its status and the time left. Elsewhere (CI logs, files): one plain line per point.
// The sweep driver calls start() before and finish() after each point.
#include <chrono>
#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace decode_bench {

class ProgressReporter {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic; injectable for tests

  // `interactive` defaults to whether `out` is a terminal (stderr/stdout only).
  ProgressReporter(std::size_t total_points, std::ostream& out);
  ProgressReporter(std::size_t total_points, std::ostream& out, bool interactive, Clock clock);

  void start(std::string_view point);
  // `status` is "ok", "skipped", "error", ...; `detail` e.g. "12.5 us" or the reason.
  void finish(std::string_view point, std::string_view status, std::string_view detail = {});
  // Ends the in-place line on a terminal and prints the totals.
  void done();

  // Seconds left at the mean time per finished point so far; negative before the first finishes.
  double eta_seconds() const;

 private:
  void emit(const std::string& line);

  std::size_t total_;
  std::ostream& out_;
  bool interactive_;
  Clock clock_;
  double started_at_;
  std::size_t finished_ = 0;
  std::size_t failed_ = 0;
};

// "42s", "3m05s", "2h07m": short enough for one terminal line.
std::string format_duration(double seconds);

}  // namespace decode_bench
