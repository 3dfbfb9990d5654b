#include "pools/deferred_words.hpp"

#include <algorithm>

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
  pending_.push_back({dst, value, static_cast<std::uint32_t>(pending_.size())});
}

void DeferredWords::flush() {
  if (pending_.empty()) return;
  // The last write of each word wins: ordered by (destination, when put) with an in-place sort
  // (a stable sort would take a buffer every flush), each run of equal destinations collapses
  // to its last entry.
  std::sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
    return a.dst != b.dst ? a.dst < b.dst : a.order < b.order;
  });
  out_.clear();
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (i + 1 < pending_.size() && pending_[i + 1].dst == pending_[i].dst) continue;
    out_.push_back({pending_[i].dst, pending_[i].value});
  }
  // Emptied even if the backend throws (the words are not retried); the capacity is kept.
  pending_.clear();
  backend_->write_words(out_);
  ++flushes_;
  words_flushed_ += static_cast<std::int64_t>(out_.size());
}

}  // namespace decode_bench
