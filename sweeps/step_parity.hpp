#pragma once
// The rule behind a trace step's host buffers kept two by step parity (sweeps/trace_runner.cpp:
// the staged block of writes, q rows and last-page lengths, and the plan's page-locked staging):
// step s fills parity s % 2's buffers, whose copies step s - 2 queued. Those copies are
// asynchronous (page-locked memory), so the buffers may be refilled only once step s - 2's device
// work is known done. With one step in flight (host_overlap) it is: step s - 1 waited for step
// s - 2's stop event before step s began. This guard records which steps are known done and
// refuses a step that would refill buffers a step still in flight reads, so a change of the
// runner's order (say, two steps in flight) fails loudly instead of racing.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace decode_bench::sweeps {

class StepParityGuard {
 public:
  // Step `step` begins filling its parity's buffers.
  void begin(std::int64_t step) {
    if (step < 0 || step <= last_begun_)
      throw std::logic_error("step parity: step " + std::to_string(step) + " begun after step " +
                             std::to_string(last_begun_));
    const int p = parity(step);
    if (user_[p] >= 0 && !done_[p])
      throw std::logic_error("step parity: step " + std::to_string(step) + " would refill the buffers step " +
                             std::to_string(user_[p]) + " may still be reading (its device work is not known done)");
    user_[p] = step;
    done_[p] = false;
    last_begun_ = step;
  }
  // Step `step`'s device work is known done (its stop event was waited for).
  void completed(std::int64_t step) {
    if (step < 0 || step > last_begun_)
      throw std::logic_error("step parity: step " + std::to_string(step) + " completed before it began");
    const int p = parity(step);
    if (user_[p] == step) done_[p] = true;
  }
  // Whether the buffers of `step`'s parity may be filled now.
  bool may_begin(std::int64_t step) const {
    const int p = parity(step);
    return step > last_begun_ && (user_[p] < 0 || done_[p]);
  }

 private:
  static int parity(std::int64_t step) { return static_cast<int>(step & 1); }
  std::int64_t user_[2] = {-1, -1};  // the last step that filled each parity's buffers
  bool done_[2] = {false, false};
  std::int64_t last_begun_ = -1;
};

}  // namespace decode_bench::sweeps
