#pragma once
// Which tokens of which sequences of a batch sit in the same physical pages: the shape the
// composable shared-prefix decode runs over (kernels/shared_prefix.hpp). Built by the pool side
// (pools/shared_prefix_batch.hpp) from how it forked the sequences; plain host data.
//
// A level is a token range [token_begin, token_end) that the sequences [first_seq, first_seq +
// num_seqs) of the batch hold in the same pages. Ranges are page-aligned: the partial last page of
// a prefix is copied on write by every sequence that appends to it, so it belongs to the next
// level or to each sequence's own suffix. Levels of one sequence are disjoint and contiguous from
// token 0; a sequence's own tokens are [suffix_begin, length).
#include <cstdint>
#include <vector>

namespace decode_bench {

struct SharedLevel {
  int depth = 0;                 // 0: shared by the whole batch; 1: by one group of it
  std::int64_t token_begin = 0;  // page-aligned
  std::int64_t token_end = 0;    // page-aligned, > token_begin
  int first_seq = 0;             // batch indices [first_seq, first_seq + num_seqs), num_seqs >= 2
  int num_seqs = 0;
};

struct SharedPrefixLayout {
  int page_size = 16;
  std::vector<SharedLevel> levels;          // depth 0 first, then depth 1 in sequence order
  std::vector<std::int64_t> suffix_begin;   // (num_seqs) page-aligned: where the sequence's own pages start
  std::vector<std::int32_t> lengths;        // (num_seqs) tokens of the whole sequence
  int max_depth() const { return levels.empty() ? 0 : levels.back().depth + 1; }
  int num_seqs() const { return static_cast<int>(lengths.size()); }
};

}  // namespace decode_bench
