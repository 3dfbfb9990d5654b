#include "kernels/decode_balance.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>

namespace decode_bench {
namespace {

std::int64_t round_up(std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; }

}  // namespace

bool lengths_are_ragged(std::span<const std::int32_t> lengths) {
  return !lengths.empty() && std::any_of(lengths.begin(), lengths.end(), [&](std::int32_t l) { return l != lengths[0]; });
}

BalancedWork balance_decode_work(std::span<const std::int32_t> lengths, int head_blocks, int slots, int tile) {
  if (lengths.empty()) throw std::invalid_argument("balance_decode_work: no sequences");
  if (static_cast<std::int64_t>(lengths.size()) > kMaxWorkItems)
    throw std::invalid_argument("balance_decode_work: " + std::to_string(lengths.size()) +
                                " sequences, more than the grid's " + std::to_string(kMaxWorkItems) + " item rows");
  if (head_blocks < 1 || slots < 1 || tile < 1)
    throw std::invalid_argument("balance_decode_work: head_blocks, slots and tile must be >= 1");
  std::int64_t total = 0;
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    if (lengths[b] < 0)
      throw std::invalid_argument("balance_decode_work: length " + std::to_string(lengths[b]) + " of sequence " +
                                  std::to_string(b) + " is negative");
    total += lengths[b];
  }
  const std::int64_t shares = static_cast<std::int64_t>(slots) * kBalanceSharesPerSlot;
  const std::int64_t share = (total * head_blocks + shares - 1) / shares;
  BalancedWork w;
  w.chunk_bound = round_up(std::max<std::int64_t>(share, 2 * static_cast<std::int64_t>(tile)), tile);
  const auto splits_of = [&](std::int32_t len) {
    return std::max<std::int64_t>(1, (len + w.chunk_bound - 1) / w.chunk_bound);
  };
  const auto count_items = [&] {
    std::int64_t n = 0;
    for (auto len : lengths) n += splits_of(len);
    return n;
  };
  while (count_items() > kMaxWorkItems) w.chunk_bound *= 2;

  // Items in sequence order with their partial bases, then ordered by work (tokens of one KV head
  // per item, the longest first; ties keep sequence order). A stable radix sort on the work below
  // the longest (one byte a pass, only the bytes the works' range needs: two passes for works of
  // a few thousand tokens), not a comparison sort (a serving loop plans every step, over hundreds
  // of items).
  const auto item_count = static_cast<std::size_t>(count_items());
  w.items.reserve(item_count);
  std::vector<std::uint32_t> work;
  work.reserve(item_count);
  std::uint32_t longest = 0, shortest = UINT32_MAX;
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    const std::int64_t n = splits_of(lengths[b]);
    const auto item_work = static_cast<std::uint32_t>((lengths[b] + n - 1) / n);  // < 2^31
    longest = std::max(longest, item_work);
    shortest = std::min(shortest, item_work);
    for (std::int64_t s = 0; s < n; ++s) {
      work.push_back(item_work);
      w.items.push_back({static_cast<std::int32_t>(b), static_cast<std::int32_t>(s), static_cast<std::int32_t>(n),
                         static_cast<std::int32_t>(n > 1 ? w.partial_splits : 0)});
    }
    if (n > 1) w.partial_splits += n;
    w.max_splits = std::max(w.max_splits, static_cast<int>(n));
  }
  std::vector<std::uint32_t> order(item_count), next(item_count);
  std::iota(order.begin(), order.end(), 0u);
  const std::uint32_t range = longest - shortest;
  for (int shift = 0; shift < 32 && (range >> shift) != 0; shift += 8) {
    std::uint32_t start[257] = {};
    const auto digit = [&](std::uint32_t i) { return ((longest - work[i]) >> shift) & 0xffu; };
    for (const std::uint32_t i : order) ++start[digit(i) + 1];
    for (int d = 0; d < 256; ++d) start[d + 1] += start[d];
    for (const std::uint32_t i : order) next[start[digit(i)]++] = i;
    order.swap(next);
  }
  std::vector<DecodeWorkItem> sorted;
  sorted.reserve(item_count);
  for (const std::uint32_t i : order) sorted.push_back(w.items[i]);
  w.items = std::move(sorted);
  return w;
}

namespace {

// A uniform batch (past the caller's ragged check) whose standard blocks fill a wave, each at most
// kShortWideBusMaxTiles standard tiles, on a wide bus: the short tiling's reach there, group 1's
// masked head dims and group 2 alike.
bool within_wide_bus_reach(const TilingQuery& q) {
  return q.standard_tile >= 1 && q.wide_bus && q.head_blocks >= q.standard_slots &&
         q.max_len <= static_cast<std::int64_t>(kShortWideBusMaxTiles) * q.standard_tile;
}

// choose_decode_tiling's short_batch rule at group 1, past its pin check.
bool short_tiling_fits(const TilingQuery& q) {
  if (q.standard_tile < 1) return false;
  const std::int64_t short_len = 2 * static_cast<std::int64_t>(q.standard_tile);
  if (lengths_are_ragged(q.lengths)) {
    if (q.paged) return false;
    const auto short_seqs = std::count_if(q.lengths.begin(), q.lengths.end(), [&](std::int32_t l) { return l <= short_len; });
    return 2 * static_cast<std::int64_t>(short_seqs) >= static_cast<std::int64_t>(q.lengths.size());
  }
  if (q.head_blocks < q.standard_slots) return false;
  if (q.max_len <= short_len) return true;
  return q.masked_head_dim && within_wide_bus_reach(q);
}

}  // namespace

DecodeTiling choose_decode_tiling(const TilingQuery& q) {
  if (q.pinned) return DecodeTiling::standard;
  if (q.group == 2)
    return !lengths_are_ragged(q.lengths) && within_wide_bus_reach(q) ? DecodeTiling::short_batch : DecodeTiling::standard;
  if (q.group != 1) return DecodeTiling::standard;
  if (short_tiling_fits(q)) return DecodeTiling::short_batch;
  if (q.paged && q.masked_head_dim && q.wide_bus && !lengths_are_ragged(q.lengths)) return DecodeTiling::deep;
  return DecodeTiling::standard;
}

}  // namespace decode_bench
