#pragma once
// The metadata words a pool writes into its memory (block-table entries, indptr and length words),
// either uploaded at once (the default: device memory always matches the host mirror) or, when
// deferred, collected and set together by flush() with one MemoryBackend::write_words call. A
// serving step appends a token to every running sequence; written at once, that is one small
// pageable copy per sequence per step, which costs the host more than the step's decode.
//
// Deferred, pool memory is behind the host mirror until flush(): a pool flushes before it hands
// out any view of that memory (batch, accessor, slot_span), so what a kernel reads is current.
// A word written twice before a flush is set once, to its last value.
#include <cstdint>
#include <vector>

#include "pools/memory_backend.hpp"

namespace decode_bench {

class DeferredWords {
 public:
  explicit DeferredWords(MemoryBackend& backend) : backend_(&backend) {}

  bool deferred() const { return deferred_; }
  // Turning deferral off flushes what is pending.
  void set_deferred(bool on);
  void put(std::int32_t* dst, std::int32_t value);
  // Sets every pending word (the last value of each) and empties the list.
  void flush();
  std::size_t pending() const { return pending_.size(); }
  // Flushes so far, and words they set (tests, the trace's host-phase accounting).
  std::int64_t flushes() const { return flushes_; }
  std::int64_t words_flushed() const { return words_flushed_; }

 private:
  // A pending word and when it was put (the last put of a word wins).
  struct Pending {
    std::int32_t* dst;
    std::int32_t value;
    std::uint32_t order;
  };
  MemoryBackend* backend_;
  bool deferred_ = false;
  std::vector<Pending> pending_;
  std::vector<WordWrite> out_;  // the flush's distinct words (kept: a serving loop flushes every step)
  std::int64_t flushes_ = 0, words_flushed_ = 0;
};

}  // namespace decode_bench
