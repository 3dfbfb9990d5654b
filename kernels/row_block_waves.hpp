#pragma once
// The row-block size of a grouped decode of more than 64 rows an item (MQA: Falcon-7B's 71 query
// heads on one KV head) on the wide tensor-core tiling (plan_row_attention, a pure function here
// so host tests check it).
//
// Short items (under 32 tiles) take 64-row blocks: a 256-row block's fixed costs outweighed a few
// tiles in the shared-prefix phase. An item of 65-128 rows then needs two row blocks, the second
// mostly padding (71 rows: 64 + 7, each block streaming the item's whole K/V), and twice the
// blocks: 128 sequences x 2 row blocks at one block per SM are two waves, where one 128-row block
// per item is one. Two waves cost the second wave's ramp (its first tiles wait behind the running
// blocks' requests: docs/history/kernel-notes.md, "Where the grouped decode's time goes") and
// the same rows are computed either way (71 rows in warps of 32: 96 rows of math per item in one
// 128-row block or in 64 + 32). So the longer block is taken when it needs fewer waves.
#include <cstdint>

namespace decode_bench {

// Blocks of `items` items at row_blocks blocks each, over `slots` resident blocks.
constexpr std::int64_t row_block_waves(std::int64_t items, std::int64_t row_blocks, std::int64_t slots) {
  return slots > 0 ? (items * row_blocks + slots - 1) / slots : 0;
}

// Whether long_rows-row blocks (long_slots resident) run the items in fewer waves than
// short_rows-row blocks (short_slots resident), for items of `rows` rows.
constexpr bool longer_row_blocks_take_fewer_waves(std::int64_t items, int rows, int short_rows, std::int64_t short_slots,
                                                   int long_rows, std::int64_t long_slots) {
  if (items <= 0 || rows <= short_rows || short_rows <= 0 || long_rows <= short_rows) return false;
  const std::int64_t short_blocks = (rows + short_rows - 1) / short_rows;
  const std::int64_t long_blocks = (rows + long_rows - 1) / long_rows;
  return row_block_waves(items, long_blocks, long_slots) < row_block_waves(items, short_blocks, short_slots);
}

}  // namespace decode_bench
