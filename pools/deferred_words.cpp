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
  pending_.push_back({dst, value});
}

void DeferredWords::flush() {
  if (pending_.empty()) return;
  // The last write of each word wins: a stable sort keeps writes to one word in order, then
  // each run of equal destinations collapses to its last entry.
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const WordWrite& a, const WordWrite& b) { return a.dst < b.dst; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    if (i + 1 < pending_.size() && pending_[i + 1].dst == pending_[i].dst) continue;
    pending_[out++] = pending_[i];
  }
  pending_.resize(out);
  // Emptied even if the backend throws (the words are not retried); the capacity is kept.
  struct Clear {
    std::vector<WordWrite>& words;
    ~Clear() { words.clear(); }
  } clear{pending_};
  backend_->write_words(pending_);
  ++flushes_;
  words_flushed_ += static_cast<std::int64_t>(out);
}

}  // namespace decode_bench
