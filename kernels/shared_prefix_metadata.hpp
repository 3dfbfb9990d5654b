#pragma once
// The host half of a shared-prefix plan (kernels/shared_prefix.hpp): from a batch's layout, the
// prefix phase's items and query rows, the merge's level rows, and the suffix phase's offset
// indptr and lengths, laid out as the image init_shared_prefix_workspace uploads. Pure host code,
// no CUDA call, so a serving step's planning cost is measurable and testable without a GPU.
//
// Image: [items (RowAttentionItem) | row_q | merge_rows (max_depth x num_seqs x H_q, -1: no level
// at that depth) | suffix indptr (num_seqs + 1) | suffix lengths (num_seqs)], each region starting
// on 256 bytes. `out` is reused: a serving loop that plans every step keeps its capacity.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/decode_shape.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/shared_prefix_layout.hpp"

namespace decode_bench {

struct SharedPrefixMetadata {
  int num_seqs = 0;
  int max_depth = 0;
  int num_items = 0;  // levels x H_kv
  int num_rows = 0;   // sum over levels of num_seqs x H_q
  std::int64_t prefix_tokens = 0;      // sum over levels of the level's tokens
  std::int64_t prefix_row_tokens = 0;  // sum over levels of tokens x sequences
  std::int64_t suffix_tokens = 0;      // sum over sequences of length - suffix_begin
  std::int64_t max_suffix_len = 0;
  std::int64_t max_item_tokens = 0;
  int max_item_rows = 0;
  std::size_t items_offset = 0, row_q_offset = 0, merge_rows_offset = 0, suffix_indptr_offset = 0,
              suffix_lens_offset = 0;
  std::vector<std::byte> image;  // image.size(): the metadata region's bytes (a multiple of 256)
};

// Fills `out` for `layout` (checked by shared_prefix_unsupported_reason beforehand).
void shared_prefix_metadata(const DecodeShape& shape, const SharedPrefixLayout& layout, SharedPrefixMetadata* out);

}  // namespace decode_bench
