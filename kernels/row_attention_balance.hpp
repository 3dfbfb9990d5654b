#pragma once
// Host-side work-list planning of grouped decode on row attention for ragged batches (pure
// functions, no CUDA calls, so host tests check every choice).
//
// The uniform row-attention plan gives every item (sequence, KV head) the same split count, chosen
// from the longest item: a zipf batch (one sequence of 24K tokens among many of ~10) gets one split,
// and the few blocks of the longest sequence stream it alone while the GPU idles. The work list
// instead cuts each sequence by one chunk bound C (FlashInfer's load-balanced scheduler, arXiv 2501.01005,
// Algorithm 1; the same cut as the CUDA-core flash-decode's, balance_decode_work in
// kernels/decode_balance.hpp): n_b = ceil(L_b / C) chunks per sequence, one entry per (chunk, KV
// head), each launched as row_blocks blocks, longest work first. An item of one chunk writes its
// output directly; an item of n > 1 chunks writes n partial states per row and the last of its
// chunks to finish (per row block) merges them by LSE. Partial states exist only for split items.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/decode_balance.hpp"
#include "kernels/host_device.hpp"

namespace decode_bench {

// One block row of a row-attention work list: chunk `chunk` of `num_chunks` of decode item `item`
// (sequence item / H_kv, KV head item % H_kv) whose tokens are [token_begin, token_end) of that
// sequence (the whole item: the chunk is row_chunk_range's cut of it, computed on the device by
// the same split_range as the uniform grid's). num_chunks > 1: the item's rows write partial
// states; row r of the item (rows [row_begin, row_end)) and chunk c is state partial_base +
// (r - row_begin) * num_chunks + c of the partials, so the states of one row are adjacent and the
// item's rows are one contiguous run.
struct RowWorkEntry {
  std::int32_t item;
  std::int32_t chunk;
  std::int32_t num_chunks;
  std::int32_t partial_base;
  std::int32_t token_begin;  // the item's range (decode items: 0 .. the sequence's length)
  std::int32_t token_end;
  std::int32_t reserved[2];  // 32 bytes: one sector, read as two 16-byte loads
};
static_assert(sizeof(RowWorkEntry) == 32, "uploaded as-is into the workspace");

struct RowWorkList {
  std::int64_t chunk_bound = 0;          // C: tokens of one item per entry at most (whole tiles)
  std::vector<RowWorkEntry> entries;     // longest work first; the KV heads of a chunk adjacent
  std::vector<DecodeWorkItem> seq_items; // the per-sequence chunks they expand (balance_decode_work)
  std::int64_t partial_states = 0;       // partial (o, lse) states of the split items
  int max_chunks = 1;                    // the largest num_chunks
};

// seq_lens: tokens per sequence (>= 0), items (seq, kv_head) of `group` rows each.
// row_blocks: blocks per item along its rows; slots: blocks the GPU holds at once; tile: tokens
// per block iteration. C is balance_decode_work's with head_blocks = H_kv x row_blocks, at least
// the share (H_kv x row_blocks x sum L) / (2 x slots), so sum n_b <= num_seqs + 2 slots /
// (H_kv x row_blocks) and, as n_b <= 2 L_b / C for a split sequence, the partial states (sum over
// split sequences of n_b x H_kv x group) are at most 4 x slots x group / row_blocks whatever the
// batch: the workspace stays bounded by the GPU's size, not the lengths.
// Throws std::invalid_argument for a negative length, no sequences, non-positive sizes, or a plan
// whose entries or partial states do not fit 32-bit indices.
RowWorkList balance_row_work(std::span<const std::int32_t> seq_lens, int heads_kv, int group, int row_blocks,
                             int slots, int tile);

struct TokenRange {
  std::int64_t begin, end;
};
// Tokens of each chunk of row_chunk_range's cut (the last may hold fewer): ceil(len / num_chunks)
// rounded up to whole tiles.
DB_HD std::int64_t row_chunk_size(std::int64_t len, int num_chunks, int tile) {
  const std::int64_t size = (len + num_chunks - 1) / num_chunks;
  return (size + tile - 1) / tile * tile;
}
// The tokens chunk c of n of an item of `len` tokens takes, relative to its first: equal cuts
// rounded up to whole tiles, so only the last chunk has a partial tile (later chunks may be empty);
// every chunk non-empty and at most C when n = ceil(len / C) and C is whole tiles. The one
// definition of the cut: the kernels' split_range (kernels/row_attention_common.cuh) calls it.
DB_HD TokenRange row_chunk_range(std::int64_t len, int chunk, int num_chunks, int tile) {
  len = len > 0 ? len : 0;
  const std::int64_t size = row_chunk_size(len, num_chunks, tile);
  const std::int64_t at = static_cast<std::int64_t>(chunk) * size;
  const std::int64_t begin = at < len ? at : len;
  return {begin, begin + size < len ? begin + size : len};
}

// How many of row_chunk_range's num_chunks chunks of `len` tokens hold a token (at least 1): the
// chunks before that count are all non-empty, the ones from it on all empty. Rounding the cut up to
// whole tiles can leave the last chunks empty: 32,768 tokens in 33 chunks of 64-token tiles are 32
// chunks of 1,024 tokens and one of none.
DB_HD int nonempty_chunks(std::int64_t len, int num_chunks, int tile) {
  if (len <= 0 || num_chunks <= 1) return 1;
  const std::int64_t size = row_chunk_size(len, num_chunks, tile);
  return static_cast<int>((len + size - 1) / size);
}

}  // namespace decode_bench
