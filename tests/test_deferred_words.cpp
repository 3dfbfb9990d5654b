// Deferred metadata writes (pools/deferred_words.hpp): pending words reach pool memory only at a
// flush, the last write of a word wins, and a pool that defers them hands out views whose
// pool-memory block tables, indptr and lengths equal those of a pool that writes at once, after
// the same seeded random operations (host backend: pool memory is readable host memory).
#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "pools/contiguous_pool.hpp"
#include "pools/deferred_words.hpp"
#include "pools/paged_pool.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

TEST(DeferredWords, ImmediateWritesLandAtOnceDeferredOnesAtTheFlush) {
  auto backend = make_host_backend();
  PoolBuffer words(*backend, 4 * sizeof(std::int32_t));
  std::int32_t* w = words.as<std::int32_t>();
  std::fill(w, w + 4, -1);
  DeferredWords d(*backend);
  d.put(w + 0, 10);
  EXPECT_EQ(w[0], 10) << "not deferred: written at once";
  EXPECT_EQ(d.pending(), 0u);

  d.set_deferred(true);
  d.put(w + 1, 1);
  d.put(w + 2, 2);
  d.put(w + 1, 11);  // the last write of word 1 wins
  d.put(w + 3, 3);
  d.put(w + 1, 21);
  EXPECT_EQ(w[1], -1);
  EXPECT_EQ(w[2], -1);
  EXPECT_EQ(d.pending(), 5u);
  d.flush();
  EXPECT_EQ(w[1], 21);
  EXPECT_EQ(w[2], 2);
  EXPECT_EQ(w[3], 3);
  EXPECT_EQ(d.pending(), 0u);
  EXPECT_EQ(d.flushes(), 1);
  EXPECT_EQ(d.words_flushed(), 3) << "three distinct words";
  d.flush();
  EXPECT_EQ(d.flushes(), 1) << "nothing pending, nothing to do";

  d.put(w + 2, 42);
  d.set_deferred(false);  // turning deferral off flushes
  EXPECT_EQ(w[2], 42);
  EXPECT_FALSE(d.deferred());
}

// Flushes of very different sizes one after another (the table sized for a large one, then
// reused by small ones, then grown): each sets every word it holds to its last value and nothing
// else, and counts its distinct words, against a plain replay of the puts. Destinations crowd a
// few ranges (collisions in the table, long runs of repeats).
TEST(DeferredWords, EveryFlushSetsTheLastValueOfEachWordItHolds) {
  auto backend = make_host_backend();
  constexpr int kWords = 4096;
  PoolBuffer words(*backend, kWords * sizeof(std::int32_t));
  std::int32_t* w = words.as<std::int32_t>();
  std::fill(w, w + kWords, -1);
  std::vector<std::int32_t> expect(kWords, -1);
  DeferredWords d(*backend);
  d.set_deferred(true);
  std::mt19937 rng(5);
  std::int64_t distinct_total = 0;
  for (const int puts : {3000, 1, 17, 2, 900, 5000, 64, 1}) {
    std::vector<bool> touched(kWords, false);
    std::int64_t distinct = 0;
    for (int i = 0; i < puts; ++i) {
      const int range = static_cast<int>(rng() % 4);
      const int at = range * 1024 + static_cast<int>(rng() % (puts < 100 ? 8 : 700));
      const auto value = static_cast<std::int32_t>(rng() % 100000);
      d.put(w + at, value);
      expect[at] = value;
      distinct += touched[at] ? 0 : 1;
      touched[at] = true;
    }
    d.flush();
    distinct_total += distinct;
    EXPECT_EQ(d.words_flushed(), distinct_total) << "after the flush of " << puts << " puts";
    for (int i = 0; i < kWords; ++i) ASSERT_EQ(w[i], expect[i]) << "word " << i << " after " << puts << " puts";
  }
}

TEST(DeferredWords, TheAccountingBackendCollectsNothing) {
  auto backend = make_accounting_backend();
  DeferredWords d(*backend);
  d.set_deferred(true);
  std::int32_t word = 7;
  d.put(&word, 1);
  EXPECT_EQ(d.pending(), 0u);
  d.flush();
  EXPECT_EQ(word, 7);
}

PagedPoolConfig small_paged() {
  return {.layout = {1, 2, DType::fp32}, .page_size = 4, .num_pages = 40, .max_seq_len = 48, .max_seqs = 10};
}

// The pool-memory rows the views read: per live sequence its block-table row (accessor), and the
// batch CSR and lengths gathered from them.
struct PagedMemory {
  std::vector<std::vector<std::int32_t>> rows;
  std::vector<std::int32_t> indptr, pages, lengths;
  bool operator==(const PagedMemory&) const = default;
};

PagedMemory read_memory(const PagedPool& pool, const std::vector<SequenceHandle>& live) {
  PagedMemory m;
  for (SequenceHandle h : live) {
    const auto kv = pool.accessor<float>(h);
    m.rows.emplace_back(kv.page_indices, kv.page_indices + kv.indptr[1]);
  }
  if (live.empty()) return m;
  const auto b = pool.batch<float>(live);
  m.indptr.assign(b.kv.indptr, b.kv.indptr + live.size() + 1);
  m.pages.assign(b.kv.page_indices, b.kv.page_indices + m.indptr.back());
  m.lengths.assign(b.seq_lens_device, b.seq_lens_device + live.size());
  return m;
}

TEST(DeferredWords, APagedPoolThatDefersShowsTheSameMemoryAsOneThatDoesNot) {
  PagedPool immediate(small_paged(), make_host_backend()), deferred(small_paged(), make_host_backend());
  deferred.defer_metadata_writes(true);
  std::mt19937_64 rng(77);
  std::vector<SequenceHandle> a, b;  // the same sequences in each pool
  int flushes = 0, refused = 0;
  for (int op = 0; op < 4000; ++op) {
    const int kind = static_cast<int>(rng() % 100);
    try {
      if (kind < 20 || a.empty()) {
        const auto len = static_cast<std::int64_t>(rng() % 20);
        const auto ha = immediate.admit(nullptr, nullptr, len);
        a.push_back(ha);
        b.push_back(deferred.admit(nullptr, nullptr, len));
      } else if (kind < 70) {
        const std::size_t i = rng() % a.size();
        const auto n = static_cast<std::int64_t>(rng() % 3);
        immediate.extend(a[i], n);
        deferred.extend(b[i], n);
      } else if (kind < 80) {
        const std::size_t i = rng() % a.size();
        const auto ha = immediate.fork(a[i]);
        a.push_back(ha);
        b.push_back(deferred.fork(b[i]));
      } else {
        const std::size_t i = rng() % a.size();
        immediate.release(a[i]);
        deferred.release(b[i]);
        a.erase(a.begin() + static_cast<std::ptrdiff_t>(i));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } catch (const PoolError&) {
      ++refused;  // the deferred pool refuses the same operation (same host state), before changing anything
    }
    ASSERT_EQ(a.size(), b.size());
    // Views now and then: words pile up (admits, appends, a slot released and taken again) between.
    if (rng() % 9 == 0) {
      ++flushes;
      ASSERT_EQ(read_memory(deferred, b), read_memory(immediate, a)) << "after operation " << op;
      ASSERT_EQ(deferred.metadata_writes().pending(), 0u);
    }
  }
  EXPECT_GT(flushes, 300);
  EXPECT_GT(refused, 20);
  EXPECT_GT(deferred.metadata_writes().words_flushed(), 1000);
  EXPECT_EQ(immediate.metadata_writes().flushes(), 0);
}

TEST(DeferredWords, AContiguousPoolThatDefersShowsTheSameLengths) {
  ContiguousPoolConfig c;
  c.layout = {1, 2, DType::fp32};
  c.max_seq_len = 32;
  c.max_seqs = 6;
  ContiguousPool immediate(c, make_host_backend()), deferred(c, make_host_backend());
  deferred.defer_metadata_writes(true);
  std::mt19937_64 rng(5);
  std::vector<SequenceHandle> a, b;
  for (int op = 0; op < 2000; ++op) {
    const int kind = static_cast<int>(rng() % 10);
    try {
      if (kind < 3 || a.empty()) {
        const auto len = static_cast<std::int64_t>(rng() % 8);
        const auto ha = immediate.admit(nullptr, nullptr, len);
        a.push_back(ha);
        b.push_back(deferred.admit(nullptr, nullptr, len));
      } else if (kind < 8) {
        const std::size_t i = rng() % a.size();
        immediate.extend(a[i], 1);
        deferred.extend(b[i], 1);
      } else {
        const std::size_t i = rng() % a.size();
        immediate.release(a[i]);
        deferred.release(b[i]);
        a.erase(a.begin() + static_cast<std::ptrdiff_t>(i));
        b.erase(b.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } catch (const PoolError&) {
    }
    if (rng() % 5 == 0) {
      // Every slot, free ones included (a released slot reads as empty).
      const auto sa = immediate.slot_span<float>(0, c.max_seqs), sb = deferred.slot_span<float>(0, c.max_seqs);
      ASSERT_TRUE(std::equal(sa.seq_lens_device, sa.seq_lens_device + c.max_seqs, sb.seq_lens_device))
          << "after operation " << op;
    }
  }
  EXPECT_GT(deferred.metadata_writes().flushes(), 100);
}

// The device backend's staged path: one pinned copy and one scatter launch per flush, the staging
// reused and grown across flushes; every word lands, the last write of each.
TEST(DeferredWordsGpu, TheDeviceBackendSetsEveryWordOfEachFlush) {
  DB_REQUIRE_GPU();
  auto backend = make_device_backend();
  const std::size_t n = 5000;
  PoolBuffer words(*backend, n * sizeof(std::int32_t));
  std::vector<std::int32_t> want(n, 0), got(n);
  backend->upload(words.data(), n * 4, want.data(), n * 4, n * 4, 1);
  DeferredWords d(*backend);
  d.set_deferred(true);
  std::mt19937_64 rng(9);
  for (int flush = 0; flush < 20; ++flush) {
    const std::size_t count = 1 + rng() % (flush < 10 ? 100 : 4000);  // later flushes grow the staging
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t at = rng() % n;
      const auto value = static_cast<std::int32_t>(rng());
      d.put(words.as<std::int32_t>() + at, value);
      want[at] = value;
    }
    d.flush();
    backend->download(got.data(), n * 4, words.data(), n * 4, n * 4, 1);
    ASSERT_EQ(got, want) << "after flush " << flush;
  }
}

}  // namespace
}  // namespace decode_bench
