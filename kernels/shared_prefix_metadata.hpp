#pragma once
// The host half of a shared-prefix plan (kernels/shared_prefix.hpp): from a batch's layout, the
// prefix phase's items and query rows, the merge's level rows, and the suffix phase's offset
// indptr and lengths, laid out as the image init_shared_prefix_workspace uploads. Pure host code,
// no CUDA call, so a serving step's planning cost is measurable and testable without a GPU.
//
// Image: [items (RowAttentionItem) | row_q | merge_rows (max_depth x num_seqs x H_q, -1: no level
// at that depth) | suffix indptr (num_seqs + 1) | suffix lengths (num_seqs)], each region starting
// on 256 bytes. `out` is reused: a serving loop that plans every step keeps its capacity.
//
// A sliding window (window > 0: sequence b of L_b tokens sees positions [L_b - window, L_b)) cuts
// each level per sequence at lo_b = max(level start, L_b - window). The sequences of a level that
// share one lo_b share its items (one per KV head, tokens [lo_b, level end), read once for all of
// their rows); a sequence whose window starts at or past the level's end has no row there and its
// merge entry stays -1 (the merge skips it: nothing of that level reaches its output). Groups come
// in ascending lo_b, each in sequence order, so window 0 (one group a level, every sequence from
// the level's start) lays out the image it always did.
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
  int num_items = 0;  // item groups x H_kv (window 0: levels x H_kv)
  int num_rows = 0;   // sum over item groups of sequences x H_q (window 0: over levels)
  std::int64_t prefix_tokens = 0;      // sum over levels of the tokens any of its items reads
  std::int64_t prefix_row_tokens = 0;  // sum over item groups of tokens x sequences
  std::int64_t suffix_tokens = 0;      // sum over sequences of length - suffix_begin
  std::int64_t suffix_read_tokens = 0; // the same within each sequence's window (window 0: suffix_tokens)
  std::int64_t max_suffix_len = 0;
  std::int64_t max_item_tokens = 0;
  int max_item_rows = 0;
  std::size_t items_offset = 0, row_q_offset = 0, merge_rows_offset = 0, suffix_indptr_offset = 0,
              suffix_lens_offset = 0;
  std::vector<std::byte> image;  // image.size(): the metadata region's bytes (a multiple of 256)
  std::vector<std::int32_t> order;  // window > 0: scratch (a level's sequences by lo_b), kept like image
};

// Fills `out` for `layout` (checked by shared_prefix_unsupported_reason beforehand); window 0: full
// attention.
void shared_prefix_metadata(const DecodeShape& shape, const SharedPrefixLayout& layout, SharedPrefixMetadata* out,
                            std::int64_t window = 0);

// Where sequence `seq`'s window starts inside `level` (window > 0), clamped to the level's start;
// >= level.token_end: the level is wholly outside the window.
inline std::int64_t level_window_start(const SharedPrefixLayout& layout, const SharedLevel& level, int seq,
                                       std::int64_t window) {
  if (window <= 0) return level.token_begin;
  const std::int64_t lo = layout.lengths[seq] - window;
  return lo > level.token_begin ? lo : level.token_begin;
}

}  // namespace decode_bench
