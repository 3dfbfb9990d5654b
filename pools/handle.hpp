#pragma once
// A sequence handle: its slot plus the slot's generation when it was issued. Releasing a slot
// bumps the generation, so a stale handle is recognised (UnknownHandle) instead of silently
// addressing whichever sequence reuses the slot.
#include <cstdint>
#include <string>

namespace decode_bench {

struct SequenceHandle {
  std::int32_t slot = -1;
  std::uint32_t generation = 0;

  friend bool operator==(const SequenceHandle&, const SequenceHandle&) = default;
  std::string describe() const {
    return "handle (slot " + std::to_string(slot) + ", generation " + std::to_string(generation) + ")";
  }
};

}  // namespace decode_bench
