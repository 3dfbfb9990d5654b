#pragma once
// Which of a few page-locked staging buffers a host -> device copy fills next, and the rule that
// keeps a copy still queued on the stream from reading bytes the host has already replaced.
//
// A copy from page-locked memory is asynchronous: cudaMemcpyAsync returns at once and the bytes
// are read when the stream reaches the copy, which in a serving loop can be after the decode in
// flight. So a staging buffer is filled again only once its last copy is known done (its fence:
// a CUDA event recorded after the copy). Buffers are used in turn, so with N of them the fence
// waited for is the copy N uses back, long done in a loop that keeps one step in flight: the wait
// costs nothing there, where one buffer would wait for the copy just before it.
//
// No CUDA here: the device backend (pools/device_backend.cu) pairs each slot with an event, and
// tests check the bookkeeping on the host.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace decode_bench {

class StagingRotation {
 public:
  explicit StagingRotation(int slots) : in_flight_(static_cast<std::size_t>(slots > 0 ? slots : 1), false) {}

  int slots() const { return static_cast<int>(in_flight_.size()); }
  // The slot the next staged copy fills (in turn).
  int next() const { return static_cast<int>(uses_ % static_cast<std::int64_t>(in_flight_.size())); }
  // Whether the slot's last copy may still be queued: its fence must be waited for before filling it.
  bool in_flight(int slot) const { return in_flight_.at(static_cast<std::size_t>(slot)); }
  // The slot's last copy is done (its fence was waited for).
  void retired(int slot) {
    if (in_flight(slot)) ++waits_;
    in_flight_.at(static_cast<std::size_t>(slot)) = false;
  }
  // The host fills `slot` and queues its copy: refused while its last copy may still read it, and
  // when it is not the slot in turn. The copy is in flight from here until retired().
  void fill(int slot) {
    if (slot != next())
      throw std::logic_error("staging rotation: slot " + std::to_string(slot) + " filled out of turn (next is " +
                             std::to_string(next()) + ")");
    if (in_flight(slot))
      throw std::logic_error("staging rotation: slot " + std::to_string(slot) +
                             " refilled while its last copy may still be reading it");
    in_flight_[static_cast<std::size_t>(slot)] = true;
    ++uses_;
  }
  std::int64_t uses() const { return uses_; }
  // Fences waited for (a slot found in flight when its turn came).
  std::int64_t waits() const { return waits_; }

 private:
  std::vector<bool> in_flight_;
  std::int64_t uses_ = 0, waits_ = 0;
};

}  // namespace decode_bench
