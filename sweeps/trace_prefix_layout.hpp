#pragma once
// A serving step's batch as the shared-prefix decode takes it (kernels/shared_prefix_layout.hpp):
// which running sequences read the same system-prompt pages, put next to each other.
//
// Sequences of one system prompt admitted through the radix cache list the same physical pages
// for its whole pages; after an eviction a later request may hold its own copy, and one whose
// system prompt was never cached holds only its own. So groups are formed from the block tables,
// not from the prompt ids: sequences whose first page is the same physical page form a group, and
// the group's level is the pages all of them list (the longest common page prefix, at most the
// system prompt's whole pages). Each group of two or more is one level (depth 0: the kernels take
// levels of any sequence range, one merge depth, two phases: prefix + per-sequence suffix); the
// other sequences have no level and decode their whole length in the suffix phase. Several
// distinct prompts are several depth-0 levels over disjoint sequence ranges. Groups keep the
// order of their first sequence; sequences without a level follow in running order.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/shared_prefix_layout.hpp"

namespace decode_bench::sweeps {

struct TraceSequencePages {
  std::span<const std::int32_t> table;  // its block table
  std::int64_t prompt_pages = 0;        // whole pages of its system prompt (0: none)
  std::int32_t length = 0;              // tokens
};

struct TraceBatchLayout {
  std::vector<int> order;     // order[b] = the running index at batch position b
  SharedPrefixLayout layout;  // in batch order
  std::int64_t shared_sequences() const;  // sequences that read a level
};

TraceBatchLayout trace_batch_layout(std::span<const TraceSequencePages> seqs, int page_size);

// The same layout, built into storage kept from build to build (a serving loop builds one every
// step): groups through a page -> group table that is stamped per build instead of cleared, batch
// positions by one counting pass, no per-group lists and no allocation once the vectors have
// grown. A sequence with prompt pages whose first page is a released one (< 0) is refused
// (std::invalid_argument); the trace never releases pages behind a window.
class TraceBatchLayoutBuilder {
 public:
  const TraceBatchLayout& build(std::span<const TraceSequencePages> seqs, int page_size);
  const TraceBatchLayout& result() const { return out_; }

 private:
  TraceBatchLayout out_;
  std::vector<std::uint32_t> page_stamp_;  // page -> the build that last set page_group_
  std::vector<int> page_group_;            // page -> group of this build (where stamped)
  std::uint32_t stamp_ = 0;
  std::vector<int> group_;                 // sequence -> group, -1: no prompt pages
  std::vector<int> head_, members_, next_; // group -> first sequence, members, next batch position
  std::vector<std::int64_t> common_;       // group -> pages every member lists
};

}  // namespace decode_bench::sweeps
