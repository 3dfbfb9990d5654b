#include "kernels/row_attention_balance.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace decode_bench {

RowWorkList balance_row_work(std::span<const std::int32_t> seq_lens, int heads_kv, int group, int row_blocks,
                             int slots, int tile) {
  if (heads_kv < 1 || group < 1 || row_blocks < 1)
    throw std::invalid_argument("balance_row_work: heads_kv, group and row_blocks must be >= 1");
  // Validates the lengths, slots and tile too (negative lengths, no sequences).
  BalancedWork seq = balance_decode_work(seq_lens, heads_kv * row_blocks, slots, tile);
  RowWorkList w;
  w.chunk_bound = seq.chunk_bound;
  w.max_chunks = seq.max_splits;
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  const std::int64_t entries = static_cast<std::int64_t>(seq.items.size()) * heads_kv;
  const std::int64_t states = seq.partial_splits * heads_kv * group;
  if (entries * row_blocks > kMax || states > kMax)
    throw std::invalid_argument("balance_row_work: " + std::to_string(entries) + " entries and " +
                                std::to_string(states) + " partial states do not fit 32-bit indices");
  w.partial_states = states;
  // Sized once and written in place: a serving loop plans every step, over thousands of entries.
  w.entries.resize(static_cast<std::size_t>(entries));
  RowWorkEntry* out = w.entries.data();
  // A split sequence's states start at partial_base x H_kv x group (balance_decode_work's base
  // counts the chunks of earlier split sequences); its KV head h's item, num_chunks x group
  // states, follows the h items before it.
  for (const DecodeWorkItem& it : seq.items) {
    const std::int32_t len = seq_lens[static_cast<std::size_t>(it.seq)];
    const bool split = it.num_splits > 1;
    const std::int64_t base = static_cast<std::int64_t>(it.partial_base) * heads_kv * group;
    const std::int64_t per_head = static_cast<std::int64_t>(it.num_splits) * group;
    for (int h = 0; h < heads_kv; ++h, ++out) {
      out->item = it.seq * heads_kv + h;
      out->chunk = it.split;
      out->num_chunks = it.num_splits;
      out->partial_base = split ? static_cast<std::int32_t>(base + h * per_head) : 0;
      out->token_begin = 0;
      out->token_end = len;
      out->reserved[0] = out->reserved[1] = 0;
    }
  }
  w.seq_items = std::move(seq.items);
  return w;
}

}  // namespace decode_bench
