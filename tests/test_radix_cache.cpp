// The radix prefix cache over a PagedPool: closed-form cases (match, split, refcounts, LRU
// eviction, locks, refusals), then long seeded random sequences of request / finish / match /
// evict against a simple model (a map from every cached whole-page prefix to its last use),
// with the pool's accounting invariant checked after every operation.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "pools/radix_cache.hpp"
#include "tests/pool_test_support.hpp"

namespace decode_bench {
namespace {

using Tokens = std::vector<std::int32_t>;

PagedPoolConfig small_config(int page_size, std::int32_t pages, std::int32_t max_seqs = 16) {
  PagedPoolConfig c;
  c.layout = KVLayout{1, 2, DType::fp32};
  c.page_size = page_size;
  c.num_pages = pages;
  c.max_seq_len = 256;
  c.max_seqs = max_seqs;
  return c;
}

Tokens iota_tokens(std::int32_t first, std::size_t n) {
  Tokens t(n);
  for (std::size_t i = 0; i < n; ++i) t[i] = first + static_cast<std::int32_t>(i);
  return t;
}

// A sequence holding `tokens` (reserved, no data) whose table then holds their pages.
SequenceHandle admit_tokens(PagedPool& pool, const Tokens& tokens) {
  return pool.admit(nullptr, nullptr, static_cast<std::int64_t>(tokens.size()));
}

std::vector<std::int32_t> table_of(const PagedPool& pool, SequenceHandle h) {
  const auto t = pool.block_table(h);
  return {t.begin(), t.end()};
}

TEST(RadixCache, EmptyTreeMatchesNothing) {
  PagedPool pool(small_config(4, 8), make_accounting_backend());
  RadixCache cache(pool);
  const Tokens q = iota_tokens(0, 9);
  EXPECT_EQ(cache.match_length(q), 0);
  auto lease = cache.acquire(q);
  EXPECT_TRUE(lease.active());
  EXPECT_EQ(lease.tokens(), 0);
  EXPECT_TRUE(lease.pages().empty());
  cache.release(lease);
  EXPECT_FALSE(lease.active());
  EXPECT_EQ(cache.stats().nodes, 0);
}

TEST(RadixCache, InsertCachesWholePagesAndMatchesLongestPrefix) {
  PagedPool pool(small_config(4, 8), make_accounting_backend());
  RadixCache cache(pool);
  const Tokens a = iota_tokens(100, 14);  // 3 whole pages + 2 tokens
  const auto h = admit_tokens(pool, a);
  const auto pages = table_of(pool, h);
  ASSERT_EQ(pages.size(), 4u);
  EXPECT_EQ(cache.insert(a, pages), 3);  // the partial fourth page is not cached
  EXPECT_EQ(cache.stats().cached_pages, 3);
  EXPECT_EQ(cache.match_length(a), 12);
  Tokens b = a;
  b[9] = -1;  // differs inside the third page
  EXPECT_EQ(cache.match_length(b), 8);
  Tokens c = a;
  c[0] = -1;  // differs inside the first page
  EXPECT_EQ(cache.match_length(c), 0);
  EXPECT_EQ(cache.match_length(Tokens(a.begin(), a.begin() + 7)), 4);  // a query shorter than the edge
  // Tree + sequence hold the three whole pages; the sequence alone its tail.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(pool.pages().refcount(pages[i]), 2) << i;
  EXPECT_EQ(pool.pages().refcount(pages[3]), 1);
  // Re-inserting what is cached takes nothing.
  EXPECT_EQ(cache.insert(a, pages), 0);
  EXPECT_EQ(pool.pages().refcount(pages[0]), 2);
}

TEST(RadixCache, DivergingPromptSplitsTheEdge) {
  PagedPool pool(small_config(4, 16), make_accounting_backend());
  RadixCache cache(pool);
  const Tokens a = iota_tokens(0, 12);
  Tokens b = a;
  b[5] = 99;  // shares page 0, diverges inside page 1
  const auto ha = admit_tokens(pool, a), hb = admit_tokens(pool, b);
  const auto pa = table_of(pool, ha), pb = table_of(pool, hb);
  cache.insert(a, pa);
  EXPECT_EQ(cache.insert(b, pb), 2);  // b's pages 1 and 2; page 0 is a's, already cached
  const auto s = cache.stats();
  EXPECT_EQ(s.splits, 1);
  EXPECT_EQ(s.nodes, 3);  // [0,4) above [4,12) of a and [4,12) of b
  EXPECT_EQ(s.cached_pages, 5);
  EXPECT_EQ(pool.pages().refcount(pa[0]), 2);
  EXPECT_EQ(pool.pages().refcount(pb[0]), 1);  // b's own copy of the shared page stays b's alone
  EXPECT_EQ(pool.pages().refcount(pb[1]), 2);
  const auto paths = cache.paths();
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[0].tokens, Tokens(a.begin(), a.begin() + 4));
  EXPECT_EQ(paths[0].pages, std::vector<std::int32_t>{pa[0]});
  // A lease of b's full prompt names the tree's pages: a's first page, then b's.
  auto lease = cache.acquire(b);
  EXPECT_EQ(lease.tokens(), 12);
  EXPECT_EQ(lease.pages(), (std::vector<std::int32_t>{pa[0], pb[1], pb[2]}));
  cache.release(lease);
}

TEST(RadixCache, AcquireSplitsAtTheMatchAndLocksOnlyThePrefix) {
  PagedPool pool(small_config(2, 16), make_accounting_backend());
  RadixCache cache(pool);
  const Tokens a = iota_tokens(0, 8);
  const auto h = admit_tokens(pool, a);
  cache.insert(a, table_of(pool, h));
  pool.release(h);
  Tokens q(a.begin(), a.begin() + 4);
  q.push_back(-7);
  q.push_back(-8);
  auto lease = cache.acquire(q);
  EXPECT_EQ(lease.tokens(), 4);
  const auto s = cache.stats();
  EXPECT_EQ(s.splits, 1);
  EXPECT_EQ(s.locked_pages, 2);
  EXPECT_EQ(s.evictable_pages, 2);
  // Eviction takes the unlocked lower half only, then stops: the locked upper half is not a leaf candidate.
  EXPECT_EQ(cache.evict(100), 2);
  EXPECT_EQ(cache.match_length(a), 4);
  cache.release(lease);
  EXPECT_EQ(cache.evict(100), 2);
  EXPECT_EQ(cache.stats().nodes, 0);
  EXPECT_EQ(pool.pages().free_count(), 16);
}

TEST(RadixCache, AdmitWithPrefixSharesTheLeasedPages) {
  PagedPool pool(small_config(4, 16), make_accounting_backend());
  RadixCache cache(pool);
  const Tokens sys = iota_tokens(0, 8);
  const auto h0 = admit_tokens(pool, sys);
  cache.insert(sys, table_of(pool, h0));
  pool.release(h0);
  Tokens req = sys;
  for (int i = 0; i < 5; ++i) req.push_back(1000 + i);
  auto lease = cache.acquire(req);
  ASSERT_EQ(lease.tokens(), 8);
  const auto h = pool.admit_with_prefix(lease.pages(), nullptr, nullptr, 5);
  EXPECT_EQ(pool.length(h), 13);
  const auto t = table_of(pool, h);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(std::vector<std::int32_t>(t.begin(), t.begin() + 2), lease.pages());
  for (std::int32_t p : lease.pages()) EXPECT_EQ(pool.pages().refcount(p), 2);  // tree + the sequence
  EXPECT_EQ(pool.pages().used_count(), 4);
  // Eviction under the lease frees nothing; after the sequence and lease go, everything.
  EXPECT_EQ(cache.evict(16), 0);
  pool.release(h);
  cache.release(lease);
  EXPECT_EQ(pool.pages().used_count(), 2);
  EXPECT_EQ(cache.evict(1), 2);
  EXPECT_EQ(pool.pages().used_count(), 0);
}

TEST(RadixCache, EvictsLeastRecentlyUsedLeafFirst) {
  PagedPool pool(small_config(2, 12), make_accounting_backend());
  RadixCache cache(pool);
  std::vector<Tokens> prompts = {iota_tokens(0, 4), iota_tokens(100, 4), iota_tokens(200, 4)};
  for (const auto& p : prompts) {
    const auto h = admit_tokens(pool, p);
    cache.insert(p, table_of(pool, h));
    pool.release(h);
  }
  auto touch = cache.acquire(prompts[0]);  // prompts[0] is now the most recent; prompts[1] the oldest
  cache.release(touch);
  EXPECT_EQ(cache.evict(1), 2);  // one whole leaf (2 pages)
  EXPECT_EQ(cache.match_length(prompts[1]), 0);
  EXPECT_EQ(cache.match_length(prompts[0]), 4);
  EXPECT_EQ(cache.match_length(prompts[2]), 4);
  EXPECT_EQ(cache.evict(1), 2);
  EXPECT_EQ(cache.match_length(prompts[2]), 0);
  EXPECT_EQ(cache.match_length(prompts[0]), 4);
}

TEST(RadixCache, EvictionReachesParentsAndFreesOnlyUnreadPages) {
  PagedPool pool(small_config(2, 16), make_accounting_backend());
  RadixCache cache(pool);
  const Tokens a = iota_tokens(0, 6);
  Tokens b = a;
  b[4] = 50;  // shares two pages, then one of its own
  const auto ha = admit_tokens(pool, a), hb = admit_tokens(pool, b);
  cache.insert(a, table_of(pool, ha));
  cache.insert(b, table_of(pool, hb));
  pool.release(ha);  // b's sequence still reads b's pages; a's are the tree's alone now
  EXPECT_EQ(cache.stats().cached_pages, 4);
  EXPECT_EQ(cache.make_room(16), false);  // b's own page cannot be freed while its sequence lives
  EXPECT_EQ(cache.stats().nodes, 0);      // but every node went
  EXPECT_EQ(pool.pages().used_count(), 3);
  pool.release(hb);
  EXPECT_EQ(pool.pages().used_count(), 0);
}

TEST(RadixCache, RefusalsChangeNothing) {
  PagedPool pool(small_config(4, 8), make_accounting_backend());
  RadixCache cache(pool);
  const Tokens a = iota_tokens(0, 8);
  const auto h = admit_tokens(pool, a);
  const auto pages = table_of(pool, h);
  const auto before = testing::snapshot(pool, {h});
  EXPECT_THROW(cache.insert(a, std::span<const std::int32_t>(pages).first(1)), PoolError);  // too few pages
  const std::vector<std::int32_t> free_page = {7};
  EXPECT_THROW(cache.insert(iota_tokens(0, 4), free_page), PoolError);  // a free page
  EXPECT_THROW(pool.retain_pages(free_page), PoolError);
  EXPECT_THROW(pool.release_pages(std::vector<std::int32_t>{pages[0], pages[0]}), PoolError);  // one holder, listed twice
  const auto partial = admit_tokens(pool, iota_tokens(0, 3));
  const std::vector<std::int32_t> partial_page = table_of(pool, partial);
  EXPECT_THROW(pool.admit_with_prefix(partial_page, nullptr, nullptr, 1), PoolError);  // not a whole page
  pool.release(partial);
  EXPECT_THROW(pool.admit_with_prefix(pages, nullptr, nullptr, 256), PoolError);  // too long
  EXPECT_THROW(pool.admit_with_prefix(pages, nullptr, nullptr, 4 * 7), PoolError);  // out of pages
  EXPECT_EQ(testing::snapshot(pool, {h}), before);
  EXPECT_EQ(cache.stats().nodes, 0);
}

// ---- random operations against a model ----

// Every cached whole-page prefix with its last use; leases as (tokens, matched length).
struct Model {
  int ps;
  std::map<Tokens, std::uint64_t> prefixes;
  std::uint64_t clock = 0;

  std::int64_t match(const Tokens& t) const {
    std::int64_t m = 0;
    for (std::size_t n = ps; n <= t.size(); n += ps) {
      if (!prefixes.count(Tokens(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(n)))) break;
      m = static_cast<std::int64_t>(n);
    }
    return m;
  }
  void touch(const Tokens& t, std::int64_t len, bool add) {
    ++clock;
    for (std::int64_t n = ps; n <= len; n += ps) {
      Tokens p(t.begin(), t.begin() + n);
      if (add || prefixes.count(p)) prefixes[p] = clock;
    }
  }
  bool locked(const Tokens& p, const std::vector<std::pair<Tokens, std::int64_t>>& leases) const {
    for (const auto& [t, len] : leases)
      if (len >= static_cast<std::int64_t>(p.size()) && std::equal(p.begin(), p.end(), t.begin())) return true;
    return false;
  }
  // Drops `pages` prefixes, one page at a time, oldest unlocked leaf first.
  void evict(std::int64_t pages, const std::vector<std::pair<Tokens, std::int64_t>>& leases) {
    for (; pages > 0; --pages) {
      const Tokens* best = nullptr;
      for (const auto& [p, use] : prefixes) {
        bool leaf = true;
        for (auto it = prefixes.upper_bound(p); it != prefixes.end() && it->first.size() > p.size() &&
                                                std::equal(p.begin(), p.end(), it->first.begin());
             ++it) {
          leaf = false;
          break;
        }
        if (!leaf || locked(p, leases)) continue;
        if (!best || use < prefixes.at(*best)) best = &p;
      }
      ASSERT_NE(best, nullptr) << "the tree evicted more than the model can";
      prefixes.erase(*best);
    }
  }
};

struct Request {
  SequenceHandle handle;
  Tokens tokens;
  RadixCache::Lease lease;
};

void check_accounting(const PagedPool& pool, const RadixCache& cache, const std::vector<Request>& running,
                      const Model& model) {
  const auto& pages = pool.pages();
  ASSERT_EQ(pages.used_count() + pages.free_count(), pages.total());
  const auto paths = cache.paths();
  // Tree-held pages: each node's pages once (a path's pages extend its parent's).
  std::map<Tokens, const RadixCache::Path*> by_tokens;
  for (const auto& p : paths) by_tokens[p.tokens] = &p;
  std::vector<std::int32_t> holders(pages.total(), 0);
  std::int64_t tree_pages = 0;
  std::set<Tokens> tree_prefixes;
  for (const auto& p : paths) {
    std::size_t parent_len = 0;
    for (const auto& q : paths)
      if (q.tokens.size() < p.tokens.size() && q.tokens.size() > parent_len &&
          std::equal(q.tokens.begin(), q.tokens.end(), p.tokens.begin()))
        parent_len = q.tokens.size();
    for (std::size_t i = parent_len / model.ps; i < p.pages.size(); ++i) {
      ++holders.at(p.pages[i]);
      ++tree_pages;
    }
    for (std::size_t n = parent_len + model.ps; n <= p.tokens.size(); n += model.ps)
      tree_prefixes.insert(Tokens(p.tokens.begin(), p.tokens.begin() + static_cast<std::ptrdiff_t>(n)));
    // LRU state and locks, per node.
    ASSERT_EQ(p.last_use, model.prefixes.at(p.tokens));
    std::int32_t locks = 0;
    for (const auto& r : running)
      locks += r.lease.tokens() >= static_cast<std::int64_t>(p.tokens.size()) &&
               std::equal(p.tokens.begin(), p.tokens.end(), r.tokens.begin());
    ASSERT_EQ(p.locks, locks);
  }
  ASSERT_EQ(cache.stats().cached_pages, tree_pages);
  ASSERT_EQ(cache.stats().leases, static_cast<std::int64_t>(running.size()));
  std::set<Tokens> model_prefixes;
  for (const auto& [p, use] : model.prefixes) model_prefixes.insert(p);
  ASSERT_EQ(tree_prefixes, model_prefixes);
  for (const auto& r : running)
    for (std::int32_t p : pool.block_table(r.handle)) ++holders.at(p);
  const std::set<std::int32_t> free_set(pages.free_list().begin(), pages.free_list().end());
  ASSERT_EQ(free_set.size(), pages.free_list().size());
  for (std::int32_t p = 0; p < pages.total(); ++p) {
    ASSERT_EQ(pages.refcount(p), holders[p]) << "page " << p;
    ASSERT_EQ(free_set.count(p) == 1, holders[p] == 0) << "page " << p;
  }
  // Each lease names the tree's pages of its prefix.
  for (const auto& r : running) {
    if (r.lease.tokens() == 0) continue;
    const auto it = by_tokens.find(Tokens(r.tokens.begin(), r.tokens.begin() + r.lease.tokens()));
    ASSERT_NE(it, by_tokens.end());
    ASSERT_EQ(it->second->pages, r.lease.pages());
  }
}

class RadixCacheRandomOps : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(RadixCacheRandomOps, MatchesTheModelAndKeepsTheAccounting) {
  const int ps = 4;
  PagedPool pool(small_config(ps, 48, 10), make_accounting_backend());
  RadixCache cache(pool);
  Model model{ps, {}, 0};
  std::mt19937_64 rng(GetParam());
  // A few long stems (shared system prompts) and short random tails over a small alphabet, so
  // prompts share prefixes and diverge inside pages and edges.
  std::vector<Tokens> stems(4);
  for (auto& s : stems)
    for (int i = 0; i < 40; ++i) s.push_back(static_cast<std::int32_t>(rng() % 10));
  auto random_prompt = [&] {
    const auto& s = stems[rng() % stems.size()];
    Tokens t(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(rng() % (s.size() + 1)));
    const int tail = static_cast<int>(rng() % 17);
    for (int i = 0; i < tail; ++i) t.push_back(static_cast<std::int32_t>(100 + rng() % 2));
    if (t.empty()) t.push_back(7);
    return t;
  };
  std::vector<Request> running;
  std::vector<std::pair<Tokens, std::int64_t>> leases;  // the model's view of the locks
  auto sync_leases = [&] {
    leases.clear();
    for (const auto& r : running) leases.emplace_back(r.tokens, r.lease.tokens());
  };
  int admitted = 0, refused = 0, evictions = 0;
  for (int op = 0; op < 2500; ++op) {
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 4) {  // a request arrives
      const Tokens t = random_prompt();
      const std::int64_t want = model.match(t);
      ASSERT_EQ(cache.match_length(t), want);
      Request r{{}, t, cache.acquire(t)};
      ASSERT_EQ(r.lease.tokens(), want);
      model.touch(t, want, false);
      leases.emplace_back(t, want);
      const std::int64_t suffix = static_cast<std::int64_t>(t.size()) - want;
      const std::int64_t need = (suffix + ps - 1) / ps;
      const std::int64_t evicted_before = cache.stats().evicted_pages;
      const bool room = cache.make_room(need);
      model.evict(cache.stats().evicted_pages - evicted_before, leases);
      if (!room || pool.stats().sequences == pool.config().max_seqs) {
        std::vector<SequenceHandle> live;
        for (const auto& x : running) live.push_back(x.handle);
        const auto before = testing::snapshot(pool, live);
        EXPECT_THROW(pool.admit_with_prefix(r.lease.pages(), nullptr, nullptr, suffix), PoolError);
        ASSERT_EQ(testing::snapshot(pool, live), before);
        cache.release(r.lease);
        sync_leases();
        ++refused;
      } else {
        r.handle = pool.admit_with_prefix(r.lease.pages(), nullptr, nullptr, suffix);
        cache.insert(t, pool.block_table(r.handle));
        model.touch(t, static_cast<std::int64_t>(t.size()) / ps * ps, true);
        // The running request now holds its whole cached prompt.
        cache.release(r.lease);
        r.lease = cache.acquire(t);
        ASSERT_EQ(r.lease.tokens(), static_cast<std::int64_t>(t.size()) / ps * ps);
        model.touch(t, r.lease.tokens(), false);
        running.push_back(std::move(r));
        sync_leases();
        ++admitted;
      }
    } else if (kind < 7 && !running.empty()) {  // a request finishes
      const std::size_t i = rng() % running.size();
      pool.release(running[i].handle);
      cache.release(running[i].lease);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      sync_leases();
    } else if (kind < 9) {  // a lookup only
      const Tokens t = random_prompt();
      ASSERT_EQ(cache.match_length(t), model.match(t));
    } else {  // explicit eviction
      const std::int64_t free_before = pool.pages().free_count();
      const std::int64_t evicted_before = cache.stats().evicted_pages;
      const std::int64_t want = 1 + static_cast<std::int64_t>(rng() % 8);
      const std::int64_t freed = cache.evict(want);
      ASSERT_EQ(pool.pages().free_count() - free_before, freed);
      model.evict(cache.stats().evicted_pages - evicted_before, leases);
      if (freed < want) {
        ASSERT_EQ(cache.stats().evictable_pages, 0) << "stopped short with leaves left";
      }
      ++evictions;
    }
    check_accounting(pool, cache, running, model);
    if (::testing::Test::HasFatalFailure()) FAIL() << "after operation " << op;
  }
  // The sequence exercised every path.
  EXPECT_GT(admitted, 100);
  EXPECT_GT(refused, 0);
  EXPECT_GT(evictions, 100);
  EXPECT_GT(cache.stats().splits, 10);
  for (auto& r : running) {
    pool.release(r.handle);
    cache.release(r.lease);
  }
  cache.evict(pool.pages().total());
  EXPECT_EQ(pool.pages().free_count(), pool.pages().total());
}

INSTANTIATE_TEST_SUITE_P(Seeds, RadixCacheRandomOps, ::testing::Values(1u, 2u, 3u, 20261126u));

}  // namespace
}  // namespace decode_bench
