#pragma once
// Which of a few page-locked staging buffers a host -> device copy fills next, and the rule that
// keeps a copy still queued on the stream from reading bytes the host has already replaced.
//
// A copy from page-locked memory is asynchronous: cudaMemcpyAsync returns at once and the bytes
// are read when the stream reaches the copy, which in a serving loop can be after the decode in
// flight. So a staging buffer is filled again only once its last copy is known done (its fence:
// a CUDA event recorded after the copy). Buffers are used in turn. When the buffer in turn still
// has a copy queued, the caller may grow the ring instead of waiting (insert()): a new buffer takes
// that place in the order, so the ring grows to the copies a loop keeps queued (a serving step's
// uploads wait behind the decode in flight: with a fixed ring, a step of more uploads than buffers
// would wait for that decode) and the host never waits in the steady state.
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
  int next() const { return next_; }
  // A new slot at the place in turn (the slots from there on move one place up, in order): the
  // caller inserts its buffer at the same index. Returns that index, the slot to fill now.
  int insert() {
    in_flight_.insert(in_flight_.begin() + next_, false);
    ++inserts_;
    return next_;
  }
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
    next_ = (next_ + 1) % slots();
    ++uses_;
  }
  std::int64_t uses() const { return uses_; }
  // Slots inserted instead of waiting for a fence.
  std::int64_t inserts() const { return inserts_; }
  // Fences waited for (a slot found in flight when its turn came).
  std::int64_t waits() const { return waits_; }

 private:
  std::vector<bool> in_flight_;
  int next_ = 0;
  std::int64_t uses_ = 0, waits_ = 0, inserts_ = 0;
};

}  // namespace decode_bench
