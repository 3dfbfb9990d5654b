#include "pools/deferred_words.hpp"

#include <bit>
#include <cstddef>
#include <cstdint>

namespace decode_bench {

void DeferredWords::set_deferred(bool on) {
  if (!on) flush();
  deferred_ = on;
}

void DeferredWords::put(std::int32_t* dst, std::int32_t value) {
  if (!backend_->has_memory()) return;
  if (!deferred_) {
    backend_->upload(dst, sizeof value, &value, sizeof value, sizeof value, 1);
    return;
  }
  pending_.push_back({dst, value});
}

void DeferredWords::flush() {
  if (pending_.empty()) return;
  // The last write of each word wins. A table from destination to the index of its last put, in
  // one pass over the words (a serving step's flush holds a few hundred, nearly all distinct: a
  // sort of them was most of the batch view's host time), then the words that are their
  // destination's last, in the order put (the scatter sets distinct words, in any order).
  const std::size_t n = pending_.size();
  const std::size_t size = std::bit_ceil(2 * n);
  if (last_.size() < size) last_.assign(size, -1);
  const std::size_t mask = size - 1;
  const auto slot_of = [&](const std::int32_t* dst) {
    // Fibonacci hashing of the word index: the high bits of the product, masked.
    const std::uint64_t h = (reinterpret_cast<std::uintptr_t>(dst) >> 2) * 0x9E3779B97F4A7C15ull;
    std::size_t at = static_cast<std::size_t>(h >> 32) & mask;
    while (last_[at] >= 0 && pending_[static_cast<std::size_t>(last_[at])].dst != dst) at = (at + 1) & mask;
    return at;
  };
  at_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    at_[i] = static_cast<std::uint32_t>(slot_of(pending_[i].dst));
    last_[at_[i]] = static_cast<std::int32_t>(i);
  }
  out_.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (last_[at_[i]] == static_cast<std::int32_t>(i)) out_.push_back(pending_[i]);
  for (std::size_t i = 0; i < n; ++i) last_[at_[i]] = -1;  // every slot used, so no stale entry
  // Emptied even if the backend throws (the words are not retried); the capacity is kept.
  pending_.clear();
  backend_->write_words(out_);
  ++flushes_;
  words_flushed_ += static_cast<std::int64_t>(out_.size());
}

}  // namespace decode_bench
