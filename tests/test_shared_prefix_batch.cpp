// Shared-prefix batches in a host-backend paged pool: the level layout against hand-computed
// cases, every sequence's tokens read back (prefix | group prefix | suffix), the pages each level
// shares, and the pool's accounting after the build and after every release.
#include <set>

#include "pools/shared_prefix_batch.hpp"
#include "sweeps/shared_prefix_fill.hpp"
#include "tests/pool_test_support.hpp"

namespace decode_bench {
namespace {

TEST(SharedPrefixSpec, GroupSizesDifferByAtMostOneLargestFirst) {
  SharedPrefixSpec s{.batch = 7, .prefix_len = 10, .group_prefix_len = 5, .groups = 3, .suffix_len = 1};
  EXPECT_EQ(s.group_sizes(), (std::vector<int>{3, 2, 2}));
  s.groups = 7;
  EXPECT_EQ(s.group_sizes(), std::vector<int>(7, 1));
  s.group_prefix_len = 0;  // no group level: one group whatever `groups` says
  EXPECT_EQ(s.group_sizes(), std::vector<int>{7});
}

TEST(SharedPrefixSpec, InvalidSpecsNameTheField) {
  const auto reason = [](SharedPrefixSpec s) { return s.invalid_reason(); };
  EXPECT_NE(reason({.batch = 0, .prefix_len = 1}).find("batch"), std::string::npos);
  EXPECT_NE(reason({.batch = 2, .prefix_len = 0}).find("prefix_len"), std::string::npos);
  EXPECT_NE(reason({.batch = 2, .prefix_len = 4, .suffix_len = 0}).find("suffix_len"), std::string::npos);
  EXPECT_NE(reason({.batch = 2, .prefix_len = 4, .group_prefix_len = 3, .groups = 3}).find("groups"), std::string::npos);
  EXPECT_EQ(reason({.batch = 2, .prefix_len = 4, .group_prefix_len = 3, .groups = 2}), "");
}

TEST(SharedPrefixLayout, LevelsArePageAlignedAndSharedByAtLeastTwo) {
  // One level, prefix 40 with pages of 16: pages 0-1 shared, the partial page 2 is each suffix's copy.
  auto l = shared_prefix_layout({.batch = 4, .prefix_len = 40, .suffix_len = 5}, 16);
  ASSERT_EQ(l.levels.size(), 1u);
  EXPECT_EQ(l.levels[0].token_begin, 0);
  EXPECT_EQ(l.levels[0].token_end, 32);
  EXPECT_EQ(l.levels[0].num_seqs, 4);
  EXPECT_EQ(l.suffix_begin, std::vector<std::int64_t>(4, 32));
  EXPECT_EQ(l.lengths, std::vector<std::int32_t>(4, 45));
  // A prefix shorter than a page shares nothing; N = 1 shares nothing.
  EXPECT_TRUE(shared_prefix_layout({.batch = 4, .prefix_len = 10, .suffix_len = 5}, 16).levels.empty());
  l = shared_prefix_layout({.batch = 1, .prefix_len = 64, .suffix_len = 5}, 16);
  EXPECT_TRUE(l.levels.empty());
  EXPECT_EQ(l.suffix_begin, std::vector<std::int64_t>{0});
  // Two levels, 7 sequences in 3 groups of 3/2/2: the group prefix ends at 60, its pages to 48 shared.
  l = shared_prefix_layout({.batch = 7, .prefix_len = 40, .group_prefix_len = 20, .groups = 3, .suffix_len = 1}, 16);
  ASSERT_EQ(l.levels.size(), 4u);
  EXPECT_EQ(l.levels[1].depth, 1);
  EXPECT_EQ(l.levels[1].token_begin, 32);
  EXPECT_EQ(l.levels[1].token_end, 48);
  EXPECT_EQ(l.levels[1].first_seq, 0);
  EXPECT_EQ(l.levels[1].num_seqs, 3);
  EXPECT_EQ(l.levels[3].first_seq, 5);
  EXPECT_EQ(l.suffix_begin, std::vector<std::int64_t>(7, 48));
  // A group of one has no group level: that sequence reads its group prefix as its own suffix.
  l = shared_prefix_layout({.batch = 3, .prefix_len = 32, .group_prefix_len = 32, .groups = 2, .suffix_len = 1}, 16);
  ASSERT_EQ(l.levels.size(), 2u);
  EXPECT_EQ(l.suffix_begin, (std::vector<std::int64_t>{64, 64, 32}));
}

// Distinct data per segment: value = segment code + index + position, so a read-back names the
// segment a token came from.
struct Recorded {
  std::map<std::pair<int, int>, testing::TokenRows> segments;  // (kind, index) -> rows
};

SharedSegmentFill recording_fill(const KVLayout& layout, Recorded& rec, std::mt19937_64& rng) {
  return [&layout, &rec, &rng](SharedSegment kind, int index, std::int64_t len, void* k, void* v) {
    auto rows = testing::random_tokens(layout, len, rng);
    const auto kh = testing::to_hnd(rows.k, layout), vh = testing::to_hnd(rows.v, layout);
    std::copy(kh.begin(), kh.end(), static_cast<float*>(k));
    std::copy(vh.begin(), vh.end(), static_cast<float*>(v));
    rec.segments[{static_cast<int>(kind), index}] = std::move(rows);
  };
}

testing::TokenRows concat(std::initializer_list<const testing::TokenRows*> parts) {
  testing::TokenRows out;
  for (const auto* p : parts) {
    out.k.insert(out.k.end(), p->k.begin(), p->k.end());
    out.v.insert(out.v.end(), p->v.begin(), p->v.end());
  }
  return out;
}

void expect_accounting(const PagedPool& pool, const std::vector<SequenceHandle>& live) {
  std::vector<std::int32_t> refs(pool.pages().total(), 0);
  for (auto h : live)
    for (std::int32_t p : pool.block_table(h)) ++refs[p];
  std::int64_t stored = 0;
  for (std::int32_t p = 0; p < pool.pages().total(); ++p) {
    ASSERT_EQ(pool.pages().refcount(p), refs[p]) << "page " << p;
    if (refs[p] > 0) stored += pool.pages().fill(p);
  }
  const std::set<std::int32_t> free_set(pool.pages().free_list().begin(), pool.pages().free_list().end());
  ASSERT_EQ(free_set.size(), pool.pages().free_list().size());
  ASSERT_EQ(pool.pages().free_count() + pool.pages().used_count(), pool.pages().total());
  const auto st = pool.stats();
  ASSERT_EQ(st.sequences, static_cast<std::int64_t>(live.size()));
  ASSERT_EQ(st.stored_tokens, stored);
  ASSERT_EQ(st.units_used, pool.pages().used_count());
}

struct BuildCase {
  SharedPrefixSpec spec;
  int page_size;
};

class SharedPrefixBuild : public ::testing::TestWithParam<BuildCase> {};

TEST_P(SharedPrefixBuild, EverySequenceReadsItsSegmentsAndLevelsSharePages) {
  const auto [spec, ps] = GetParam();
  const KVLayout layout{2, 4, DType::fp32};
  const PagedPoolConfig cfg{.layout = layout, .page_size = ps,
                            .num_pages = static_cast<std::int32_t>(shared_prefix_pages(spec, ps)),
                            .max_seq_len = spec.length(),
                            .max_seqs = spec.batch + static_cast<std::int32_t>(spec.group_sizes().size()) + 1,
                            .page_order = PageOrder::shuffled, .order_seed = 3};
  PagedPool pool(cfg, make_host_backend());
  Recorded rec;
  std::mt19937_64 rng(11);
  PagedPool* pools[] = {&pool};
  const auto handles = build_shared_prefix_batch(pools, spec, recording_fill(layout, rec, rng)).at(0);
  ASSERT_EQ(static_cast<int>(handles.size()), spec.batch);
  expect_accounting(pool, handles);

  const auto sizes = spec.group_sizes();
  const testing::TokenRows none;
  for (int s = 0, g = 0, first = 0; s < spec.batch; ++s) {
    if (s == first + sizes[g]) first += sizes[g++];
    const auto& prefix = rec.segments.at({0, 0});
    const auto& group = spec.group_prefix_len > 0 ? rec.segments.at({1, g}) : none;
    const auto& suffix = rec.segments.at({2, s});
    EXPECT_TRUE(testing::reads_back(pool, handles[s], concat({&prefix, &group, &suffix}))) << "sequence " << s;
  }
  // Every level's sequences hold the same physical pages over its tokens; the whole batch holds
  // exactly one copy of each shared page (refcounts add up to the sharers).
  const auto layout_of = shared_prefix_layout(spec, ps);
  for (const auto& level : layout_of.levels) {
    const auto a = pool.block_table(handles[level.first_seq]);
    for (int s = level.first_seq; s < level.first_seq + level.num_seqs; ++s) {
      const auto b = pool.block_table(handles[s]);
      for (std::int64_t p = level.token_begin / ps; p < level.token_end / ps; ++p) {
        EXPECT_EQ(a[p], b[p]) << "sequence " << s << " page " << p;
        EXPECT_EQ(pool.pages().refcount(b[p]), level.num_seqs) << "page " << p;
      }
    }
  }
  // Own pages are private.
  for (int s = 0; s < spec.batch; ++s) {
    const auto t = pool.block_table(handles[s]);
    for (std::size_t p = layout_of.suffix_begin[s] / ps; p < t.size(); ++p) EXPECT_EQ(pool.pages().refcount(t[p]), 1);
  }
  // Releasing sequence after sequence keeps the accounting exact and ends with an empty pool.
  std::vector<SequenceHandle> live = handles;
  while (!live.empty()) {
    pool.release(live.back());
    live.pop_back();
    expect_accounting(pool, live);
  }
  EXPECT_EQ(pool.pages().used_count(), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SharedPrefixBuild,
    ::testing::Values(BuildCase{{.batch = 5, .prefix_len = 40, .suffix_len = 7}, 16},   // partial prefix page
                      BuildCase{{.batch = 4, .prefix_len = 32, .suffix_len = 16}, 16},  // page-aligned
                      BuildCase{{.batch = 3, .prefix_len = 5, .suffix_len = 1}, 16},    // prefix < one page
                      BuildCase{{.batch = 1, .prefix_len = 20, .suffix_len = 3}, 4},    // nothing to share
                      BuildCase{{.batch = 7, .prefix_len = 18, .group_prefix_len = 9, .groups = 3, .suffix_len = 2}, 4},
                      BuildCase{{.batch = 5, .prefix_len = 8, .group_prefix_len = 8, .groups = 5, .suffix_len = 1}, 4}));

TEST(SharedPrefixBuild, TooSmallAPoolIsRefusedWithOutOfPages) {
  const SharedPrefixSpec spec{.batch = 4, .prefix_len = 40, .suffix_len = 7};
  const PagedPoolConfig cfg{.layout = {1, 4, DType::fp32}, .page_size = 16, .num_pages = 5, .max_seq_len = 47,
                            .max_seqs = 8};
  PagedPool pool(cfg, make_host_backend());
  PagedPool* pools[] = {&pool};
  try {
    build_shared_prefix_batch(pools, spec, [](SharedSegment, int, std::int64_t, void*, void*) {});
    FAIL() << "expected OutOfPages";
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolErrorKind::OutOfPages) << e.what();
  }
}

// The device fill's ownership rule: a sequence writes from the end of the last level it shares
// without being that level's first sequence. P = 37, Pg = 21, page 16, groups of 3, 2, 2: the
// whole batch shares [0, 32), each group [32, 48) (the copied page holding the prefix's tail and
// the group prefix's head).
TEST(SharedPrefixFill, EachSharedPageHasOneWriter) {
  const SharedPrefixSpec spec{.batch = 7, .prefix_len = 37, .group_prefix_len = 21, .groups = 3, .suffix_len = 11};
  const SharedPrefixLayout layout = shared_prefix_layout(spec, 16);
  EXPECT_EQ(sweeps::shared_prefix_write_from(layout), (std::vector<std::int64_t>{0, 48, 48, 32, 48, 32, 48}));
  // One level: sequence 0 writes it, the others start at its end; one sequence: no levels at all.
  const SharedPrefixSpec one{.batch = 3, .prefix_len = 40, .suffix_len = 5};
  EXPECT_EQ(sweeps::shared_prefix_write_from(shared_prefix_layout(one, 16)), (std::vector<std::int64_t>{0, 32, 32}));
  const SharedPrefixSpec single{.batch = 1, .prefix_len = 40, .suffix_len = 5};
  EXPECT_EQ(sweeps::shared_prefix_write_from(shared_prefix_layout(single, 16)), (std::vector<std::int64_t>{0}));
  // Segment codes: distinct per (kind, index).
  EXPECT_NE(sweeps::shared_segment_code(SharedSegment::prefix, 0), sweeps::shared_segment_code(SharedSegment::suffix, 0));
  EXPECT_NE(sweeps::shared_segment_code(SharedSegment::group_prefix, 1),
            sweeps::shared_segment_code(SharedSegment::suffix, 1));
}

}  // namespace
}  // namespace decode_bench
