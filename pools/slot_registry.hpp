#pragma once
// Sequence slots with generations. Both pools hand out the lowest free slot, so sequences
// admitted in order occupy consecutive slots (what a contiguous batch view needs).
#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

#include "pools/handle.hpp"

namespace decode_bench {

class SlotRegistry {
 public:
  explicit SlotRegistry(std::int32_t max_slots);

  std::int32_t capacity() const { return static_cast<std::int32_t>(live_.size()); }
  std::int32_t live_count() const { return capacity() - static_cast<std::int32_t>(free_.size()); }
  bool full() const { return free_.empty(); }
  std::int32_t lowest_free() const { return *free_.begin(); }  // precondition: !full()

  SequenceHandle occupy(std::int32_t slot);  // precondition: slot is free
  void vacate(std::int32_t slot);            // precondition: slot is live; bumps its generation
  // The slot of a live handle; throws PoolError(UnknownHandle) naming `operation` otherwise.
  std::int32_t check(SequenceHandle h, std::string_view operation) const;
  bool is_live(std::int32_t slot) const { return live_[slot]; }

 private:
  std::vector<std::uint32_t> generation_;
  std::vector<bool> live_;
  std::set<std::int32_t> free_;
};

}  // namespace decode_bench
