// Thousands of seeded random admit / append / fork / release operations on host-backend pools,
// checked after every step against a simple model (each sequence = the list of rows written):
// page accounting, refcounts, block tables (host mirror, pool-memory rows and batch CSR), fills,
// and every token read back. Refused operations must leave the pool exactly as it was.
#include <algorithm>
#include <map>
#include <set>

#include "tests/pool_test_support.hpp"

namespace decode_bench {
namespace {

using testing::random_row;
using testing::random_tokens;
using testing::TokenRows;

struct LiveSeq {
  SequenceHandle handle;
  TokenRows rows;
};

// Refcount of every page as implied by the live block tables alone.
std::vector<std::int32_t> implied_refcounts(const PagedPool& pool, const std::vector<LiveSeq>& live) {
  std::vector<std::int32_t> refs(pool.pages().total(), 0);
  for (const auto& s : live)
    for (std::int32_t p : pool.block_table(s.handle)) ++refs.at(p);
  return refs;
}

void check_paged_invariants(const PagedPool& pool, const std::vector<LiveSeq>& live) {
  const auto& pages = pool.pages();
  const int ps = pool.config().page_size;
  ASSERT_EQ(pages.free_count() + pages.used_count(), pages.total());
  // Free list: no duplicates, only unreferenced pages.
  std::set<std::int32_t> free_set(pages.free_list().begin(), pages.free_list().end());
  ASSERT_EQ(free_set.size(), pages.free_list().size()) << "a page is on the free list twice";
  const auto refs = implied_refcounts(pool, live);
  std::int64_t stored = 0;
  for (std::int32_t p = 0; p < pages.total(); ++p) {
    ASSERT_EQ(pages.refcount(p), refs[p]) << "page " << p;
    ASSERT_EQ(free_set.count(p) == 1, refs[p] == 0) << "page " << p << " free-list membership";
    if (refs[p] > 0) stored += pages.fill(p);
  }
  std::int64_t logical = 0;
  for (const auto& s : live) {
    const auto table = pool.block_table(s.handle);
    const std::int64_t len = s.rows.size();
    logical += len;
    ASSERT_EQ(static_cast<std::int64_t>(table.size()), (len + ps - 1) / ps) << s.handle.describe();
    for (std::size_t i = 0; i < table.size(); ++i)  // every sharer sees the same fill
      ASSERT_EQ(pages.fill(table[i]), std::min<std::int64_t>(ps, len - static_cast<std::int64_t>(i) * ps));
    // The pool-memory row behind the one-sequence accessor equals the host mirror.
    const auto kv = pool.accessor<float>(s.handle);
    ASSERT_EQ(kv.indptr[0], 0);
    ASSERT_EQ(kv.indptr[1], static_cast<std::int32_t>(table.size()));
    ASSERT_TRUE(std::equal(table.begin(), table.end(), kv.page_indices));
    ASSERT_TRUE(testing::reads_back(pool, s.handle, s.rows));
  }
  const auto st = pool.stats();
  ASSERT_EQ(st.sequences, static_cast<std::int64_t>(live.size()));
  ASSERT_EQ(st.logical_tokens, logical);
  ASSERT_EQ(st.stored_tokens, stored);
  ASSERT_EQ(st.units_used, pages.used_count());
  ASSERT_EQ(st.bytes_reserved, 2ull * pages.used_count() * pool.config().page_bytes());
  // The batch CSR of all live sequences, gathered in pool memory, equals the mirrors.
  if (live.empty()) return;
  std::vector<SequenceHandle> handles;
  for (const auto& s : live) handles.push_back(s.handle);
  const auto batch = pool.batch<float>(handles);
  ASSERT_EQ(batch.num_seqs, static_cast<int>(live.size()));
  for (std::size_t i = 0; i < live.size(); ++i) {
    const auto table = pool.block_table(live[i].handle);
    ASSERT_EQ(batch.kv.indptr[i + 1] - batch.kv.indptr[i], static_cast<std::int32_t>(table.size()));
    ASSERT_TRUE(std::equal(table.begin(), table.end(), batch.kv.page_indices + batch.kv.indptr[i]));
    ASSERT_EQ(batch.seq_lens_device[i], live[i].rows.size());
    ASSERT_EQ(batch.lengths_host[i], live[i].rows.size());
  }
}

class PagedRandomOps : public ::testing::TestWithParam<PageOrder> {};

TEST_P(PagedRandomOps, MatchTheModelAfterEveryStep) {
  const PagedPoolConfig c{.layout = {2, 3, DType::fp32}, .page_size = 4, .num_pages = 48, .max_seq_len = 40,
                          .max_seqs = 12, .page_order = GetParam(), .order_seed = 7};
  PagedPool pool(c, make_host_backend());
  std::mt19937_64 rng(2024 + static_cast<int>(GetParam()));
  std::vector<LiveSeq> live;
  std::vector<SequenceHandle> released;
  int refused = 0, forks = 0, cows = 0, bulk = 0;

  for (int step = 0; step < 3000; ++step) {
    const int op = static_cast<int>(rng() % 100);
    const auto before = testing::snapshot(pool, [&] {
      std::vector<SequenceHandle> hs;
      for (const auto& s : live) hs.push_back(s.handle);
      return hs;
    }());
    try {
      if (op < 20 || live.empty()) {  // admit
        const auto len = static_cast<std::int64_t>(rng() % 30);
        auto rows = random_tokens(c.layout, len, rng);
        const auto h = testing::admit_rows(pool, rows);
        live.push_back({h, std::move(rows)});
      } else if (op < 55) {  // bulk append (append_tokens) of 0..6 tokens to a random live sequence
        auto& s = live[rng() % live.size()];
        const auto n = static_cast<std::int64_t>(rng() % 7);
        auto rows = random_tokens(c.layout, n, rng);
        const auto k = testing::to_hnd(rows.k, c.layout), v = testing::to_hnd(rows.v, c.layout);
        const auto table = pool.block_table(s.handle);
        const bool will_copy = n > 0 && s.rows.size() % c.page_size != 0 && pool.pages().refcount(table.back()) > 1;
        pool.append_tokens(s.handle, std::span<const float>(k), std::span<const float>(v), n);
        s.rows.k.insert(s.rows.k.end(), rows.k.begin(), rows.k.end());
        s.rows.v.insert(s.rows.v.end(), rows.v.begin(), rows.v.end());
        cows += will_copy;
        bulk += n > 0;
      } else if (op < 65) {  // append to a random live sequence
        auto& s = live[rng() % live.size()];
        const auto k = random_row(c.layout, rng), v = random_row(c.layout, rng);
        const auto table = pool.block_table(s.handle);
        const bool will_copy = s.rows.size() % c.page_size != 0 && pool.pages().refcount(table.back()) > 1;
        pool.append_token(s.handle, std::span<const float>(k), std::span<const float>(v));
        s.rows.k.push_back(k);
        s.rows.v.push_back(v);
        cows += will_copy;
      } else if (op < 78) {  // fork
        const auto& parent = live[rng() % live.size()];
        const auto h = pool.fork(parent.handle);
        const auto pt = pool.block_table(parent.handle), ct = pool.block_table(h);
        ASSERT_TRUE(std::equal(pt.begin(), pt.end(), ct.begin(), ct.end())) << "a fork shares every page";
        live.push_back({h, parent.rows});
        ++forks;
      } else if (op < 95) {  // release
        const std::size_t i = rng() % live.size();
        pool.release(live[i].handle);
        released.push_back(live[i].handle);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      } else {  // misuse: a released handle must be refused
        if (released.empty()) continue;
        const auto h = released[rng() % released.size()];
        const float row[6] = {};
        EXPECT_THROW(pool.append_token(h, row, row), PoolError);
        EXPECT_THROW(pool.release(h), PoolError);
        EXPECT_THROW(pool.fork(h), PoolError);
        ASSERT_EQ(testing::snapshot(pool, [&] {
                    std::vector<SequenceHandle> hs;
                    for (const auto& s : live) hs.push_back(s.handle);
                    return hs;
                  }()),
                  before);
      }
    } catch (const PoolError& e) {
      ++refused;
      const auto kind = e.kind();
      ASSERT_TRUE(kind == PoolErrorKind::OutOfPages || kind == PoolErrorKind::OutOfSlots ||
                  kind == PoolErrorKind::SequenceTooLong)
          << e.what();
      std::vector<SequenceHandle> hs;
      for (const auto& s : live) hs.push_back(s.handle);
      ASSERT_EQ(testing::snapshot(pool, hs), before) << "a refused operation changed the pool: " << e.what();
    }
    check_paged_invariants(pool, live);
    if (::testing::Test::HasFatalFailure()) FAIL() << "at step " << step;
  }
  // The run must have exercised every path it claims to test.
  EXPECT_GT(refused, 20);
  EXPECT_GT(forks, 100);
  EXPECT_GT(cows, 20);
  EXPECT_GT(bulk, 100);
}

INSTANTIATE_TEST_SUITE_P(PageOrders, PagedRandomOps,
                         ::testing::Values(PageOrder::sequential, PageOrder::shuffled, PageOrder::churned),
                         [](const auto& info) { return std::string(page_order_name(info.param)); });

TEST(ContiguousRandomOps, MatchTheModelAfterEveryStep) {
  ContiguousPoolConfig c{{2, 3, DType::fp32}, 24, 8};
  ContiguousPool pool(c, make_host_backend());
  std::mt19937_64 rng(99);
  std::vector<LiveSeq> live;
  int refused = 0;
  for (int step = 0; step < 3000; ++step) {
    const int op = static_cast<int>(rng() % 100);
    const auto stats_before = pool.stats();
    try {
      if (op < 25 || live.empty()) {
        auto rows = random_tokens(c.layout, static_cast<std::int64_t>(rng() % 30), rng);  // may exceed 24
        const auto h = testing::admit_rows(pool, rows);
        live.push_back({h, std::move(rows)});
      } else if (op < 70) {
        auto& s = live[rng() % live.size()];
        const auto k = random_row(c.layout, rng), v = random_row(c.layout, rng);
        pool.append_token(s.handle, std::span<const float>(k), std::span<const float>(v));
        s.rows.k.push_back(k);
        s.rows.v.push_back(v);
      } else if (op < 80) {
        const auto& parent = live[rng() % live.size()];
        live.push_back({pool.fork(parent.handle), parent.rows});
      } else {
        const std::size_t i = rng() % live.size();
        pool.release(live[i].handle);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } catch (const PoolError& e) {
      ++refused;
      ASSERT_TRUE(e.kind() == PoolErrorKind::OutOfSlots || e.kind() == PoolErrorKind::SequenceTooLong) << e.what();
      const auto after = pool.stats();
      ASSERT_EQ(after.sequences, stats_before.sequences);
      ASSERT_EQ(after.logical_tokens, stats_before.logical_tokens);
    }
    const auto st = pool.stats();
    ASSERT_EQ(st.units_used + st.units_free, st.units_total);
    ASSERT_EQ(st.sequences, static_cast<std::int64_t>(live.size()));
    ASSERT_EQ(st.bytes_reserved, 2ull * live.size() * c.slab_bytes());
    std::set<std::int32_t> slots;
    for (const auto& s : live) {
      ASSERT_TRUE(slots.insert(pool.slot_of(s.handle)).second);
      ASSERT_TRUE(testing::reads_back(pool, s.handle, s.rows)) << "step " << step;
      // The one-sequence accessor points at the sequence's own slab.
      const auto kv = pool.accessor<float>(s.handle);
      if (s.rows.size() > 0) {
        ASSERT_EQ(kv.k[kv.row_offset(0, 1, 0)], s.rows.k[0][c.layout.head_dim]);
      }
    }
  }
  EXPECT_GT(refused, 20);
}

}  // namespace
}  // namespace decode_bench
