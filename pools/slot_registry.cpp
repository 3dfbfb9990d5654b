#include "pools/slot_registry.hpp"

#include <string>

#include "pools/pool_error.hpp"

namespace decode_bench {

SlotRegistry::SlotRegistry(std::int32_t max_slots) : generation_(max_slots, 0), live_(max_slots, false) {
  for (std::int32_t s = 0; s < max_slots; ++s) free_.insert(free_.end(), s);
}

SequenceHandle SlotRegistry::occupy(std::int32_t slot) {
  free_.erase(slot);
  live_[slot] = true;
  return {slot, generation_[slot]};
}

void SlotRegistry::vacate(std::int32_t slot) {
  live_[slot] = false;
  ++generation_[slot];
  free_.insert(slot);
}

std::int32_t SlotRegistry::check(SequenceHandle h, std::string_view operation) const {
  // The live case first and without building the message: every append, length and block-table
  // lookup of a serving step passes through here.
  if (h.slot >= 0 && h.slot < capacity() && live_[h.slot] && generation_[h.slot] == h.generation) return h.slot;
  const std::string what = std::string(operation) + " on " + h.describe();
  if (h.slot < 0 || h.slot >= capacity())
    throw PoolError(PoolErrorKind::UnknownHandle,
                    what + ": no such slot (pool has " + std::to_string(capacity()) + " slots)");
  throw PoolError(PoolErrorKind::UnknownHandle, what + ": the sequence was released (or never admitted)");
}

}  // namespace decode_bench
