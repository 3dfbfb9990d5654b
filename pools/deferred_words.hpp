#pragma once
// The metadata words a pool writes into its memory (block-table entries, indptr and length words),
// either uploaded at once (the default: device memory always matches the host mirror) or, when
// deferred, collected and set together by flush() with one MemoryBackend::write_words call. A
// serving step appends a token to every running sequence; written at once, that is one small
// pageable copy per sequence per step, which costs the host more than the step's decode.
//
// Deferred, pool memory is behind the host mirror until flush(): a pool flushes before it hands
// out any view of that memory (batch, accessor, slot_span), so what a kernel reads is current.
// A word written twice before a flush is set once, to its last value (found through a hash table
// kept from flush to flush, not a sort: docs/pools.md).
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
  MemoryBackend* backend_;
  bool deferred_ = false;
  std::vector<WordWrite> pending_;  // in the order put
  std::vector<WordWrite> out_;      // the flush's distinct words (kept: a serving loop flushes every step)
  // The flush's open-addressing table, destination -> index of its last put (-1: empty), a power
  // of two of at least twice the pending words; kept between flushes, cleared where it was used.
  std::vector<std::int32_t> last_;
  std::vector<std::uint32_t> at_;  // each pending word's slot in last_
  std::int64_t flushes_ = 0, words_flushed_ = 0;
};

}  // namespace decode_bench
