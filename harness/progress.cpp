#include "harness/progress.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>

#include <unistd.h>

namespace decode_bench {
namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool is_terminal(const std::ostream& out) {
  if (&out == &std::cerr || &out == &std::clog) return ::isatty(STDERR_FILENO);
  if (&out == &std::cout) return ::isatty(STDOUT_FILENO);
  return false;
}

// "[3/40] " built by appending: GCC 12 warns falsely (-Wrestrict) on "[" + std::string&&.
std::string counter(std::size_t n, std::size_t total) {
  std::string s = "[";
  s += std::to_string(n);
  s += '/';
  s += std::to_string(total);
  s += "] ";
  return s;
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const long long s = std::llround(seconds);
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%llds", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  return buf;
}

ProgressReporter::ProgressReporter(std::size_t total_points, std::ostream& out)
    : ProgressReporter(total_points, out, is_terminal(out), steady_seconds) {}

ProgressReporter::ProgressReporter(std::size_t total_points, std::ostream& out, bool interactive, Clock clock)
    : total_(total_points), out_(out), interactive_(interactive), clock_(std::move(clock)), started_at_(clock_()) {}

double ProgressReporter::eta_seconds() const {
  if (finished_ == 0) return -1;
  const double per_point = (clock_() - started_at_) / static_cast<double>(finished_);
  return per_point * static_cast<double>(total_ > finished_ ? total_ - finished_ : 0);
}

void ProgressReporter::emit(const std::string& line) {
  if (interactive_) {
    out_ << "\r\033[K" << line << std::flush;  // rewrite the line in place
  } else {
    out_ << line << "\n" << std::flush;
  }
}

void ProgressReporter::start(std::string_view point) {
  if (!interactive_) return;  // plain output: one line per finished point only
  const double eta = eta_seconds();
  emit(counter(finished_ + 1, total_) + std::string(point) + " ... ETA " +
       (eta < 0 ? std::string("?") : format_duration(eta)));
}

void ProgressReporter::finish(std::string_view point, std::string_view status, std::string_view detail) {
  ++finished_;
  if (status != "ok" && status != "skipped") ++failed_;
  std::string line = counter(finished_, total_) + std::string(point) + ": " + std::string(status);
  if (!detail.empty()) line += " (" + std::string(detail) + ")";
  line += ", ETA " + format_duration(eta_seconds());
  const bool failed = status != "ok" && status != "skipped";
  if (interactive_ && failed) {
    out_ << "\r\033[K" << line << "\n" << std::flush;  // a failure stays on screen
  } else {
    emit(line);
  }
}

void ProgressReporter::done() {
  const std::string summary = std::to_string(finished_) + "/" + std::to_string(total_) + " points in " +
                              format_duration(clock_() - started_at_) +
                              (failed_ ? ", " + std::to_string(failed_) + " failed" : std::string());
  if (interactive_) out_ << "\r\033[K";
  out_ << summary << "\n" << std::flush;
}

}  // namespace decode_bench
