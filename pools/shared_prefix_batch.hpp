#pragma once
// A shared-prefix batch in a PagedPool: N sequences forked from one prefix of P tokens, then
// (optionally) a group prefix of Pg tokens shared within each of `groups` groups, then a unique
// suffix of S tokens each:
//   sequence s = prefix (all N) | group prefix of its group (Pg) | its own suffix (S)
// Group g holds sequences [offset_g, offset_g + size_g); sizes differ by at most one (the first
// N % groups groups take one more). One physical copy of every shared page (refcounts), a partial
// last page copied on write by each appender (PagedPool's rules), intermediate handles released
// once forked, so the pool ends holding exactly the N sequences.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kernels/shared_prefix_layout.hpp"
#include "pools/paged_pool.hpp"

namespace decode_bench {

struct SharedPrefixSpec {
  int batch = 1;                      // N
  std::int64_t prefix_len = 0;        // P >= 1
  std::int64_t group_prefix_len = 0;  // Pg >= 0 (0: one level)
  int groups = 1;                     // 1 .. N (only with Pg > 0)
  std::int64_t suffix_len = 1;        // S >= 1

  std::int64_t length() const { return prefix_len + group_prefix_len + suffix_len; }
  // (groups) sizes summing to batch, the first batch % groups one larger.
  std::vector<int> group_sizes() const;
  // Empty when valid, otherwise the reason naming the field.
  std::string invalid_reason() const;
};

// Which pages the batch's sequences share, from the spec alone (levels shared by one sequence are
// not levels: that sequence reads those tokens as part of its own suffix).
SharedPrefixLayout shared_prefix_layout(const SharedPrefixSpec& spec, int page_size);

// Pages the build needs at its peak (every fork's copied tail page counted before the parents'
// tails are freed); an upper bound on what the finished batch holds.
std::int64_t shared_prefix_pages(const SharedPrefixSpec& spec, int page_size);

enum class SharedSegment { prefix, group_prefix, suffix };
// Fills k and v, each (H_kv, len, D) of the pool's dtype (already sized: len * token_bytes bytes),
// for segment `index` (group index for group_prefix, sequence index for suffix, 0 for prefix).
using SharedSegmentFill =
    std::function<void(SharedSegment segment, int index, std::int64_t len, void* k, void* v)>;

// Builds the batch in every pool of `pools` (same operations, same data: e.g. a device pool and
// the host pool the reference reads) and returns each pool's handles in sequence order. An empty
// `fill` reserves the pages only (the data is then written in place, sweeps/shared_prefix_fill.hpp).
// Throws PoolError when a pool is too small.
std::vector<std::vector<SequenceHandle>> build_shared_prefix_batch(std::span<PagedPool* const> pools,
                                                                   const SharedPrefixSpec& spec,
                                                                   const SharedSegmentFill& fill);

}  // namespace decode_bench
