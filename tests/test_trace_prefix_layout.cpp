// A serving step's batch mapped onto the shared-prefix decode's layout
// (sweeps/trace_prefix_layout.hpp), in closed form: groups by shared first page, the level is the
// pages every member lists, sequences without one follow in running order.
#include <gtest/gtest.h>

#include "sweeps/trace_prefix_layout.hpp"

namespace decode_bench::sweeps {
namespace {

TEST(TraceBatchLayout, GroupsSequencesThatListTheSamePromptPages) {
  // Page size 4, a 10-token system prompt: 2 whole pages. Prompt A's pages {7, 8}, prompt B's
  // {20, 21}; sequence 3 holds its own copy of A after an eviction split ({7, 30}); sequence 5 has
  // no system prompt.
  const std::vector<std::int32_t> t0{7, 8, 1}, t1{20, 21, 2}, t2{7, 8, 3, 4}, t3{7, 30, 5}, t4{20, 21, 6},
      t5{9, 10}, t6{40, 41, 11};
  const std::vector<TraceSequencePages> seqs{{t0, 2, 12}, {t1, 2, 11}, {t2, 2, 14}, {t3, 2, 12},
                                             {t4, 2, 12}, {t5, 0, 8},  {t6, 2, 12}};
  const TraceBatchLayout b = trace_batch_layout(seqs, 4);
  // Group of page 7: sequences 0, 2, 3 share one page (3 lists 30 second); page 20: 1 and 4 share
  // two; 6 is alone in its group; 5 has no system prompt.
  EXPECT_EQ(b.order, std::vector<int>({0, 2, 3, 1, 4, 5, 6}));
  ASSERT_EQ(b.layout.levels.size(), 2u);
  EXPECT_EQ(b.layout.levels[0].first_seq, 0);
  EXPECT_EQ(b.layout.levels[0].num_seqs, 3);
  EXPECT_EQ(b.layout.levels[0].token_end, 4);
  EXPECT_EQ(b.layout.levels[1].first_seq, 3);
  EXPECT_EQ(b.layout.levels[1].num_seqs, 2);
  EXPECT_EQ(b.layout.levels[1].token_end, 8);
  for (const SharedLevel& l : b.layout.levels) {
    EXPECT_EQ(l.depth, 0);
    EXPECT_EQ(l.token_begin, 0);
  }
  EXPECT_EQ(b.layout.suffix_begin, std::vector<std::int64_t>({4, 4, 4, 8, 8, 0, 0}));
  EXPECT_EQ(b.layout.lengths, std::vector<std::int32_t>({12, 14, 12, 11, 12, 8, 12}));
  EXPECT_EQ(b.layout.max_depth(), 1);
  EXPECT_EQ(b.shared_sequences(), 5);
}

TEST(TraceBatchLayout, EverySuffixKeepsAToken) {
  // Two sequences of exactly the prompt's two whole pages + 1 token, and one at 8 tokens (its
  // suffix would be empty at 2 pages): the level stops at one page.
  const std::vector<std::int32_t> a{3, 4, 5}, c{3, 4};
  const std::vector<TraceSequencePages> seqs{{a, 2, 9}, {c, 2, 8}};
  const TraceBatchLayout b = trace_batch_layout(seqs, 4);
  ASSERT_EQ(b.layout.levels.size(), 1u);
  EXPECT_EQ(b.layout.levels[0].token_end, 4);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_LT(b.layout.suffix_begin[i], b.layout.lengths[i]);
}

TEST(TraceBatchLayout, NoSharingNoLevels) {
  const std::vector<std::int32_t> a{1, 2}, c{3, 4};
  const std::vector<TraceSequencePages> seqs{{a, 0, 8}, {c, 0, 8}};
  const TraceBatchLayout b = trace_batch_layout(seqs, 4);
  EXPECT_TRUE(b.layout.levels.empty());
  EXPECT_EQ(b.order, std::vector<int>({0, 1}));
  EXPECT_EQ(b.layout.suffix_begin, std::vector<std::int64_t>({0, 0}));
}

}  // namespace
}  // namespace decode_bench::sweeps
