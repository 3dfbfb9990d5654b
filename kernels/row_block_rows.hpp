#pragma once
// Rows a block of the wide tensor-core tiling (8 warps x 2 row tiles of 16) takes, by the item's
// rows and tiles (plan_row_attention; a pure function here so host tests check it).
//
// - Items of at most 64 rows: 64-row blocks.
// - Decode items of 65-128 rows (MQA: Falcon-7B's 71 query heads on one KV head): one 128-row block
//   an item at any range, its splits filling the GPU. In 64-row blocks such an item is two blocks,
//   the second mostly padding (71 rows: 64 + 7), each streaming the item's whole K/V, for the same
//   96 rows of math (warps of 32 rows).
// - Other items over short ranges (under 32 tiles of 64 tokens; in practice the shared-prefix
//   phase): 64-row blocks, since a 256-row block's fixed costs (Q, epilogue, the split merge)
//   outweighed a few tiles there (docs/kernels/rows_mma.md, "What the planner chooses").
// - Else 128-row blocks up to 128 rows, 256 above.
#include <cstdint>

namespace decode_bench {

inline constexpr std::int64_t kWideShortRangeTiles = 32;

constexpr int wide_row_block_rows(int rows, std::int64_t item_tiles, bool decode_item) {
  if (rows <= 64) return 64;
  if (decode_item && rows <= 128) return 128;
  if (item_tiles < kWideShortRangeTiles) return 64;
  return rows <= 128 ? 128 : 256;
}

}  // namespace decode_bench
