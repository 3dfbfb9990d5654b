// The work-list planning of grouped decode on row attention for ragged batches
// (kernels/row_attention_balance.hpp), host-side: every token of every (sequence, KV head) item is
// covered exactly once, no entry streams more than the chunk bound, each item has its own chunk
// count, the partial states of split items are disjoint, dense and within the workspace bound,
// entries come longest first, and empty items get one empty entry.
#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/row_attention_balance.hpp"
#include "pools/length_distribution.hpp"

namespace decode_bench {
namespace {

struct Shape {
  int heads_kv, group, row_blocks, slots, tile;
};

// Checks every invariant of a work list against the lengths it was planned from.
void expect_valid(const RowWorkList& w, const std::vector<std::int32_t>& lens, const Shape& s) {
  ASSERT_GT(w.chunk_bound, 0);
  EXPECT_EQ(w.chunk_bound % s.tile, 0);
  EXPECT_GE(w.chunk_bound, 2 * s.tile);
  const int items = static_cast<int>(lens.size()) * s.heads_kv;
  std::map<int, std::vector<RowWorkEntry>> of_item;
  for (const auto& e : w.entries) {
    ASSERT_GE(e.item, 0);
    ASSERT_LT(e.item, items);
    of_item[e.item].push_back(e);
  }
  ASSERT_EQ(static_cast<int>(of_item.size()), items) << "every item has an entry (empty ones write the empty state)";
  std::int64_t states = 0;
  int max_chunks = 1;
  std::vector<std::pair<std::int64_t, std::int64_t>> partial_ranges;
  for (auto& [item, entries] : of_item) {
    const std::int64_t len = lens[static_cast<std::size_t>(item / s.heads_kv)];
    const std::int64_t n = std::max<std::int64_t>(1, (len + w.chunk_bound - 1) / w.chunk_bound);
    ASSERT_EQ(static_cast<std::int64_t>(entries.size()), n) << "item " << item << " of " << len << " tokens";
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.chunk < b.chunk; });
    std::int64_t next = 0;  // the chunks tile [0, len) in order, without gap or overlap
    for (int c = 0; c < n; ++c) {
      const RowWorkEntry& e = entries[static_cast<std::size_t>(c)];
      EXPECT_EQ(e.chunk, c) << "item " << item;
      EXPECT_EQ(e.num_chunks, n) << "item " << item;
      EXPECT_EQ(e.token_begin, 0) << "item " << item;
      EXPECT_EQ(e.token_end, len) << "item " << item;
      const TokenRange r = row_chunk_range(len, c, static_cast<int>(n), s.tile);
      EXPECT_EQ(r.begin, next) << "item " << item << " chunk " << c;
      EXPECT_LE(r.end - r.begin, w.chunk_bound) << "item " << item << " chunk " << c;
      if (len > 0) {
        EXPECT_GT(r.end, r.begin) << "no empty chunk of a non-empty item";
      }
      if (c + 1 < n) {
        EXPECT_EQ((r.end - r.begin) % s.tile, 0) << "only the last chunk has a partial tile";
      }
      EXPECT_EQ(e.partial_base, entries[0].partial_base) << "one partial base per item";
      next = r.end;
    }
    EXPECT_EQ(next, len) << "item " << item;
    max_chunks = std::max<int>(max_chunks, static_cast<int>(n));
    if (n > 1) {
      states += n * s.group;
      partial_ranges.push_back({entries[0].partial_base, entries[0].partial_base + n * s.group});
    } else {
      EXPECT_EQ(entries[0].partial_base, 0);
    }
  }
  EXPECT_EQ(w.partial_states, states);
  EXPECT_EQ(w.max_chunks, max_chunks);
  // The split items' state runs are disjoint and fill [0, partial_states).
  std::sort(partial_ranges.begin(), partial_ranges.end());
  std::int64_t at = 0;
  for (const auto& [b, e] : partial_ranges) {
    EXPECT_EQ(b, at);
    at = e;
  }
  EXPECT_EQ(at, w.partial_states);
  // The workspace bound of row_attention_balance.hpp: 4 x slots x group / row_blocks states.
  EXPECT_LE(w.partial_states * s.row_blocks, 4LL * s.slots * s.group);
  // Longest first (by an item's share ceil(L / n)); the KV heads of one chunk adjacent, in order.
  std::vector<std::int64_t> work;
  for (const auto& e : w.entries) {
    const std::int64_t len = lens[static_cast<std::size_t>(e.item / s.heads_kv)];
    work.push_back((len + e.num_chunks - 1) / e.num_chunks);
  }
  EXPECT_TRUE(std::is_sorted(work.rbegin(), work.rend())) << "entries must come longest first";
  for (std::size_t i = 0; i < w.entries.size(); i += static_cast<std::size_t>(s.heads_kv))
    for (int h = 0; h < s.heads_kv; ++h) {
      const RowWorkEntry& e = w.entries[i + static_cast<std::size_t>(h)];
      EXPECT_EQ(e.item % s.heads_kv, h);
      EXPECT_EQ(e.item / s.heads_kv, w.entries[i].item / s.heads_kv);
      EXPECT_EQ(e.chunk, w.entries[i].chunk);
    }
  // The per-sequence chunks it expands: one per (sequence, chunk), H_kv entries each.
  EXPECT_EQ(w.seq_items.size() * static_cast<std::size_t>(s.heads_kv), w.entries.size());
}

TEST(RowAttentionBalance, ChunkBoundIsThePerSlotShareOfAllItemsAndRowBlocks) {
  // 8 KV heads x 1 row block, 264 slots x 2 shares: total 100000 + 1 + 50 + 0 = 100051 tokens per
  // item; share = ceil(8 x 100051 / 528) = 1516 -> 1536 (whole 64-token tiles).
  const std::vector<std::int32_t> lens{0, 1, 100000, 50};
  const Shape s{8, 4, 1, 264, 64};
  const RowWorkList w = balance_row_work(lens, s.heads_kv, s.group, s.row_blocks, s.slots, s.tile);
  EXPECT_EQ(w.chunk_bound, 1536);
  expect_valid(w, lens, s);
  EXPECT_EQ(w.max_chunks, 66);  // ceil(100000 / 1536)
  EXPECT_EQ(w.entries.size(), (66u + 3u) * 8u);
  EXPECT_EQ(w.partial_states, 66 * 8 * 4);  // only the long sequence is split
  EXPECT_EQ(w.entries.front().item / 8, 2);  // its chunks first
  // Two row blocks per item (MQA with 128 query heads) double the work per chunk bound.
  // (1 KV head x 2 row blocks: ceil(2 x 100051 / 528) = 379 -> 384.)
  const RowWorkList two = balance_row_work(lens, 1, 128, 2, 264, 64);
  EXPECT_EQ(two.chunk_bound, 384);
  expect_valid(two, lens, {1, 128, 2, 264, 64});
}

TEST(RowAttentionBalance, ZipfBatchesOfTheIssueAtGqaGroupsAndMqa) {
  for (std::uint64_t seed : {0u, 1u, 2u}) {
    LengthSampler sampler(LengthDistribution::zipf(1024, 1.2), seed);
    std::vector<std::int32_t> lens;
    for (int b = 0; b < 64; ++b) lens.push_back(static_cast<std::int32_t>(sampler.next()));
    lens.insert(lens.begin() + 7, {0, 1});
    for (const Shape& s : {Shape{8, 4, 1, 264, 64}, Shape{8, 3, 1, 264, 64}, Shape{2, 8, 1, 132, 64},
                           Shape{1, 64, 1, 132, 64}, Shape{1, 128, 2, 132, 64}}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + " H_kv " + std::to_string(s.heads_kv) + " group " +
                   std::to_string(s.group));
      const RowWorkList w = balance_row_work(lens, s.heads_kv, s.group, s.row_blocks, s.slots, s.tile);
      expect_valid(w, lens, s);
      // The longest sequence is cut into many chunks (one split count per batch would give it one).
      EXPECT_GT(w.max_chunks, 4);
    }
  }
}

TEST(RowAttentionBalance, EmptyAndUniformBatches) {
  const Shape s{4, 4, 1, 132, 64};
  // All empty: one empty entry per item, nothing split, no partial states.
  const std::vector<std::int32_t> empty(5, 0);
  const RowWorkList e = balance_row_work(empty, s.heads_kv, s.group, s.row_blocks, s.slots, s.tile);
  expect_valid(e, empty, s);
  EXPECT_EQ(e.entries.size(), 20u);
  EXPECT_EQ(e.partial_states, 0);
  for (const auto& x : e.entries) EXPECT_EQ(x.token_end, 0);
  // Uniform batches are not ragged: the planner keeps the uniform grid for them
  // (plan_row_attention plans a work list only when lengths_are_ragged).
  EXPECT_FALSE(lengths_are_ragged(std::vector<std::int32_t>(64, 1024)));
  EXPECT_FALSE(lengths_are_ragged(std::vector<std::int32_t>{65536}));
  EXPECT_TRUE(lengths_are_ragged(std::vector<std::int32_t>{1024, 1024, 0}));
}

TEST(RowAttentionBalance, ChunkRangesAreEqualCutsInWholeTiles) {
  // 130 tokens in 2 chunks of 64-token tiles: ceil(130 / 2) = 65 -> 128, so [0, 128) and [128, 130).
  EXPECT_EQ(row_chunk_range(130, 0, 2, 64).begin, 0);
  EXPECT_EQ(row_chunk_range(130, 0, 2, 64).end, 128);
  EXPECT_EQ(row_chunk_range(130, 1, 2, 64).begin, 128);
  EXPECT_EQ(row_chunk_range(130, 1, 2, 64).end, 130);
  EXPECT_EQ(row_chunk_range(0, 0, 1, 64).end, 0);
  EXPECT_EQ(row_chunk_range(1, 0, 1, 64).end, 1);
}

// nonempty_chunks against row_chunk_range itself: over lengths, counts and tiles, the chunks before
// the count hold a token and the ones from it on hold none, and the non-empty ones cover the item.
TEST(RowAttentionBalance, NonemptyChunksCountsTheChunksThatHoldAToken) {
  EXPECT_EQ(nonempty_chunks(32768, 33, 64), 32);  // 993 tokens a chunk rounded up to 1,024
  EXPECT_EQ(nonempty_chunks(32768, 16, 64), 16);
  EXPECT_EQ(nonempty_chunks(130, 2, 64), 2);
  EXPECT_EQ(nonempty_chunks(100, 3, 64), 2);  // 34 -> 64: [0, 64), [64, 100), empty
  EXPECT_EQ(nonempty_chunks(0, 8, 64), 1);
  EXPECT_EQ(nonempty_chunks(5, 1, 64), 1);
  for (const int tile : {16, 64, 128})
    for (const std::int64_t len : {std::int64_t{1}, std::int64_t{63}, std::int64_t{64}, std::int64_t{65},
                                   std::int64_t{1000}, std::int64_t{4096}, std::int64_t{32768}, std::int64_t{100003}})
      for (int n = 1; n <= 140; ++n) {
        const int k = nonempty_chunks(len, n, tile);
        ASSERT_GE(k, 1);
        ASSERT_LE(k, n);
        std::int64_t covered = 0;
        for (int c = 0; c < n; ++c) {
          const TokenRange r = row_chunk_range(len, c, n, tile);
          EXPECT_EQ(r.end > r.begin, c < k) << len << " tokens, " << n << " chunks of " << tile << "-token tiles, chunk " << c;
          covered += r.end - r.begin;
        }
        EXPECT_EQ(covered, len);
      }
}

TEST(RowAttentionBalance, BadInputIsRefusedWithTheReason) {
  const std::vector<std::int32_t> neg{5, -1};
  try {
    (void)balance_row_work(neg, 8, 4, 1, 132, 64);
    FAIL() << "a negative length must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("-1"), std::string::npos) << e.what();
  }
  const std::vector<std::int32_t> one{5};
  EXPECT_THROW((void)balance_row_work({}, 8, 4, 1, 132, 64), std::invalid_argument);
  EXPECT_THROW((void)balance_row_work(one, 0, 4, 1, 132, 64), std::invalid_argument);
  EXPECT_THROW((void)balance_row_work(one, 8, 0, 1, 132, 64), std::invalid_argument);
  EXPECT_THROW((void)balance_row_work(one, 8, 4, 0, 132, 64), std::invalid_argument);
  EXPECT_THROW((void)balance_row_work(one, 8, 4, 1, 0, 64), std::invalid_argument);
  EXPECT_THROW((void)balance_row_work(one, 8, 4, 1, 132, 0), std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench
