// The shared-prefix prefix phase's items under a sliding window (kernels/shared_prefix_metadata.hpp),
// read back from the metadata image: for every level, sequence and query head, exactly one row when
// the sequence's window reaches into the level (its item's KV head, tokens [max(level start,
// L - window), level end)) and no row otherwise (merge entry -1); items tile the rows; the counts
// the planner sizes from. Windows of 1, page - 1, page, starting inside the prefix, at a level
// boundary, before the prefix (full) and past it; one level and two with unequal groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "kernels/shared_prefix_metadata.hpp"
#include "pools/shared_prefix_batch.hpp"

namespace decode_bench {
namespace {

template <class V>
V load(const SharedPrefixMetadata& m, std::size_t offset, std::size_t index) {
  V v;
  std::memcpy(&v, m.image.data() + offset + index * sizeof(V), sizeof(V));
  return v;
}

// A layout from a spec, then `extra[s]` more tokens in sequence s's own suffix (unequal lengths).
SharedPrefixLayout with_extra(const SharedPrefixSpec& spec, int page_size, const std::vector<int>& extra) {
  SharedPrefixLayout l = shared_prefix_layout(spec, page_size);
  for (std::size_t s = 0; s < extra.size(); ++s) l.lengths[s] += extra[s];
  return l;
}

// Checks the image against the window's definition; returns the number of item groups (items / H_kv).
int check_items(const DecodeShape& shape, const SharedPrefixLayout& layout, std::int64_t window) {
  SharedPrefixMetadata m;
  shared_prefix_metadata(shape, layout, &m, window);
  const int n = layout.num_seqs(), hq = shape.heads_q, group = shape.group();
  EXPECT_EQ(m.num_items % shape.heads_kv, 0);
  // Items tile the rows [0, num_rows) in order, each at most max_item_rows / max_item_tokens.
  std::int32_t next_row = 0;
  std::vector<RowAttentionItem> items;
  for (int i = 0; i < m.num_items; ++i) {
    const auto it = load<RowAttentionItem>(m, m.items_offset, i);
    EXPECT_EQ(it.row_begin, next_row) << "item " << i;
    EXPECT_GT(it.row_end, it.row_begin);
    EXPECT_EQ((it.row_end - it.row_begin) % group, 0);
    EXPECT_LE(it.row_end - it.row_begin, m.max_item_rows);
    EXPECT_GT(it.token_end, it.token_begin);
    EXPECT_LE(it.token_end - it.token_begin, m.max_item_tokens);
    next_row = it.row_end;
    items.push_back(it);
  }
  EXPECT_EQ(next_row, m.num_rows);
  const auto item_of_row = [&](std::int32_t r) {
    for (const auto& it : items)
      if (r >= it.row_begin && r < it.row_end) return it;
    ADD_FAILURE() << "row " << r << " in no item";
    return RowAttentionItem{};
  };
  std::int64_t row_tokens = 0, tokens = 0;
  std::set<std::int32_t> rows_seen;
  for (const SharedLevel& level : layout.levels) {
    std::int64_t level_lo = level.token_end;
    for (int s = 0; s < n; ++s) {
      const bool member = s >= level.first_seq && s < level.first_seq + level.num_seqs;
      const std::int64_t lo = window > 0 ? std::max<std::int64_t>(level.token_begin, layout.lengths[s] - window)
                                         : level.token_begin;
      const bool visible = member && lo < level.token_end;
      if (visible) {
        level_lo = std::min(level_lo, lo);
        row_tokens += level.token_end - lo;
      }
      for (int h = 0; h < hq; ++h) {
        const std::int32_t state = s * hq + h;
        const auto row = load<std::int32_t>(m, m.merge_rows_offset, static_cast<std::size_t>(level.depth) * n * hq + state);
        if (!member) continue;  // another level of this depth may hold it
        if (!visible) {
          EXPECT_EQ(row, -1) << "sequence " << s << " head " << h << " sees none of level [" << level.token_begin
                             << ", " << level.token_end << ") with window " << window;
          continue;
        }
        EXPECT_GE(row, 0) << "sequence " << s << " head " << h;
        if (row < 0) continue;
        EXPECT_TRUE(rows_seen.insert(row).second) << "row " << row << " used twice";
        EXPECT_EQ(load<std::int32_t>(m, m.row_q_offset, row), state);
        const RowAttentionItem it = item_of_row(row);
        EXPECT_EQ(it.kv_head, h / group);
        EXPECT_EQ(it.token_begin, lo) << "sequence " << s << " window " << window;
        EXPECT_EQ(it.token_end, level.token_end);
        EXPECT_GE(it.kv_seq, level.first_seq);  // a sequence holding the level's pages
        EXPECT_LT(it.kv_seq, level.first_seq + level.num_seqs);
      }
    }
    if (level_lo < level.token_end) tokens += level.token_end - level_lo;
  }
  EXPECT_EQ(static_cast<std::int32_t>(rows_seen.size()), m.num_rows) << "rows no state merges";
  EXPECT_EQ(m.prefix_row_tokens, row_tokens);
  EXPECT_EQ(m.prefix_tokens, tokens);
  std::int64_t read = 0;
  for (int s = 0; s < n; ++s) {
    const std::int64_t own = layout.lengths[s] - layout.suffix_begin[s];
    read += window > 0 ? std::min(own, window) : own;
  }
  EXPECT_EQ(m.suffix_read_tokens, read);
  return m.num_items / shape.heads_kv;
}

const DecodeShape kShape{8, 2, 128};  // group 4

TEST(SharedPrefixWindowItems, OneLevelWindowsOfEveryKind) {
  // Prefix 100 tokens in pages of 16: level [0, 96); suffixes from 96; lengths 120 + extra.
  const SharedPrefixSpec spec{.batch = 5, .prefix_len = 100, .suffix_len = 20};
  const std::vector<int> extra{0, 3, 7, 16, 21};
  const SharedPrefixLayout layout = with_extra(spec, 16, extra);
  ASSERT_EQ(layout.levels.size(), 1u);
  ASSERT_EQ(layout.levels[0].token_end, 96);
  // Window 0 and windows covering every sequence: one group of everyone from token 0.
  EXPECT_EQ(check_items(kShape, layout, 0), 1);
  EXPECT_EQ(check_items(kShape, layout, 141), 1);  // sequence 4 (141 tokens) from token 0 exactly
  EXPECT_EQ(check_items(kShape, layout, 1000), 1);
  // 1, page - 1, page: inside every suffix (they are 24 tokens or more): no prefix row at all.
  for (std::int64_t w : {1, 15, 16}) EXPECT_EQ(check_items(kShape, layout, w), 0) << "window " << w;
  // Starting inside the prefix for everyone (120 - 50 = 70 ... 141 - 50 = 91): one group each.
  EXPECT_EQ(check_items(kShape, layout, 50), 5);
  // Window 40 starts at 80, 83, 87 (inside), 96 (the level's end: no row) and 101 (past it).
  EXPECT_EQ(check_items(kShape, layout, 40), 3);
  // Equal lengths share their item: sequences 0..4 all of length 120.
  EXPECT_EQ(check_items(kShape, with_extra(spec, 16, {}), 50), 1);
}

TEST(SharedPrefixWindowItems, TwoLevelsWithUnequalGroups) {
  // Level 0 [0, 48) for all 10; level 1 [48, 80) for each of groups 4, 3, 3; suffixes from 80.
  const SharedPrefixSpec spec{.batch = 10, .prefix_len = 50, .group_prefix_len = 40, .groups = 3, .suffix_len = 9};
  const std::vector<int> extra{0, 1, 2, 30, 0, 5, 40, 0, 16, 17};
  const SharedPrefixLayout layout = with_extra(spec, 16, extra);
  ASSERT_EQ(layout.max_depth(), 2);
  for (std::int64_t w : {0, 1, 15, 16, 17, 20, 40, 50, 55, 60, 70, 99, 100, 139, 500}) {
    SCOPED_TRACE("window " + std::to_string(w));
    check_items(kShape, layout, w);
  }
  // Window 51 on length 99 (sequences 0, 4, 7) starts at 48, level 1's start: level 0 unseen by them.
  check_items(kShape, layout, 51);
  // MHA and MQA: the rows per item follow the group.
  check_items({8, 8, 64}, layout, 40);
  check_items({8, 1, 64}, layout, 40);
  // A page of one token: levels end anywhere.
  const SharedPrefixLayout ones = with_extra(spec, 1, extra);
  for (std::int64_t w : {1, 2, 9, 10, 11, 50, 90}) check_items(kShape, ones, w);
}

TEST(SharedPrefixWindowItems, WindowZeroKeepsTheFullLevelImage) {
  const SharedPrefixSpec spec{.batch = 7, .prefix_len = 33, .group_prefix_len = 31, .groups = 3, .suffix_len = 1};
  const SharedPrefixLayout layout = shared_prefix_layout(spec, 8);
  SharedPrefixMetadata full, windowed;
  shared_prefix_metadata(kShape, layout, &full);
  // A window wider than every sequence is full attention: the same image, byte for byte.
  shared_prefix_metadata(kShape, layout, &windowed, spec.length());
  EXPECT_EQ(full.image, windowed.image);
  EXPECT_EQ(full.num_items, static_cast<int>(layout.levels.size()) * kShape.heads_kv);
  // The reused buffers: a windowed plan then a full one gives the full image again.
  shared_prefix_metadata(kShape, layout, &windowed, 5);
  shared_prefix_metadata(kShape, layout, &windowed, 0);
  EXPECT_EQ(full.image, windowed.image);
}

}  // namespace
}  // namespace decode_bench
