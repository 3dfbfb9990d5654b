// The state a serving step keeps from step to step instead of rebuilding it, checked against a
// rebuild from scratch after every step of seeded random operation sequences:
//   - TraceBatchLayoutBuilder (sweeps/trace_prefix_layout.hpp): its stamped page -> group table
//     and reused vectors against the map-based rebuild the layout was defined by;
//   - shared_prefix_metadata (kernels/shared_prefix_metadata.hpp): the image written in place into
//     a reused buffer against one assembled from per-region vectors;
//   - PagedPool: the running sum behind stats().logical_tokens and the reused batch view (its
//     CSR, lengths and host lengths) against the host mirror, through admits, appends, forks,
//     shared-prefix admits and releases;
//   - DeferredWords: the in-place (destination, order) sort against a model of the last write of
//     each word;
//   - TraceStepHost over a real scheduler: batch order, positions and page counts against the
//     pool's mirror, every step of a trace with system prompts under page pressure.
#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/shared_prefix_metadata.hpp"
#include "pools/deferred_words.hpp"
#include "pools/paged_pool.hpp"
#include "pools/radix_cache.hpp"
#include "pools/trace_scheduler.hpp"
#include "sweeps/trace_prefix_layout.hpp"
#include "sweeps/trace_step_host.hpp"

namespace decode_bench::sweeps {
namespace {

// ---- the rebuilds from scratch ----

// The layout as first defined: groups by first page through a map, per-group member lists.
TraceBatchLayout rebuilt_layout(std::span<const TraceSequencePages> seqs, int page_size) {
  std::map<std::int32_t, std::size_t> group_of_page;
  std::vector<std::vector<int>> groups;
  std::vector<int> alone;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const TraceSequencePages& s = seqs[i];
    if (s.prompt_pages < 1 || s.table.empty()) {
      alone.push_back(static_cast<int>(i));
      continue;
    }
    const auto [it, fresh] = group_of_page.try_emplace(s.table[0], groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(static_cast<int>(i));
  }
  TraceBatchLayout out;
  out.layout.page_size = page_size;
  std::vector<int> tail;
  for (const std::vector<int>& g : groups) {
    const TraceSequencePages& head = seqs[static_cast<std::size_t>(g[0])];
    std::int64_t common = head.prompt_pages;
    for (int m : g) {
      const TraceSequencePages& s = seqs[static_cast<std::size_t>(m)];
      std::int64_t k = 0;
      const std::int64_t limit = std::min<std::int64_t>(
          {common, s.prompt_pages, static_cast<std::int64_t>(s.table.size()), (s.length - 1) / page_size});
      while (k < limit && s.table[static_cast<std::size_t>(k)] == head.table[static_cast<std::size_t>(k)]) ++k;
      common = k;
    }
    if (g.size() < 2 || common < 1) {
      tail.insert(tail.end(), g.begin(), g.end());
      continue;
    }
    SharedLevel level;
    level.token_end = common * page_size;
    level.first_seq = static_cast<int>(out.order.size());
    level.num_seqs = static_cast<int>(g.size());
    out.layout.levels.push_back(level);
    for (int m : g) {
      out.order.push_back(m);
      out.layout.suffix_begin.push_back(level.token_end);
      out.layout.lengths.push_back(seqs[static_cast<std::size_t>(m)].length);
    }
  }
  tail.insert(tail.end(), alone.begin(), alone.end());
  std::sort(tail.begin(), tail.end());
  for (int m : tail) {
    out.order.push_back(m);
    out.layout.suffix_begin.push_back(0);
    out.layout.lengths.push_back(seqs[static_cast<std::size_t>(m)].length);
  }
  return out;
}

void expect_same_layout(const TraceBatchLayout& got, const TraceBatchLayout& want, int step) {
  ASSERT_EQ(got.order, want.order) << "step " << step;
  ASSERT_EQ(got.layout.page_size, want.layout.page_size);
  ASSERT_EQ(got.layout.suffix_begin, want.layout.suffix_begin) << "step " << step;
  ASSERT_EQ(got.layout.lengths, want.layout.lengths) << "step " << step;
  ASSERT_EQ(got.layout.levels.size(), want.layout.levels.size()) << "step " << step;
  for (std::size_t l = 0; l < want.layout.levels.size(); ++l) {
    const SharedLevel &a = got.layout.levels[l], &b = want.layout.levels[l];
    ASSERT_EQ(a.depth, b.depth);
    ASSERT_EQ(a.token_begin, b.token_begin);
    ASSERT_EQ(a.token_end, b.token_end) << "step " << step << " level " << l;
    ASSERT_EQ(a.first_seq, b.first_seq);
    ASSERT_EQ(a.num_seqs, b.num_seqs);
  }
}

// The metadata image assembled from per-region vectors, as the shared-prefix plan first did.
std::vector<std::byte> rebuilt_image(const DecodeShape& shape, const SharedPrefixLayout& layout) {
  const int n = layout.num_seqs(), hq = shape.heads_q, group = shape.group(), ps = layout.page_size;
  std::vector<RowAttentionItem> items;
  std::vector<std::int32_t> row_q, merge_rows(static_cast<std::size_t>(layout.max_depth()) * n * hq, -1);
  for (const SharedLevel& level : layout.levels)
    for (int kh = 0; kh < shape.heads_kv; ++kh) {
      const auto base = static_cast<std::int32_t>(row_q.size());
      items.push_back({level.first_seq, kh, base, base + level.num_seqs * group, level.token_begin, level.token_end});
      for (int i = 0; i < level.num_seqs; ++i)
        for (int j = 0; j < group; ++j) {
          const int state = (level.first_seq + i) * hq + kh * group + j;
          merge_rows[static_cast<std::size_t>(level.depth) * n * hq + state] = static_cast<std::int32_t>(row_q.size());
          row_q.push_back(state);
        }
    }
  std::vector<std::int32_t> indptr(n + 1, 0), lens(n), suffix_indptr(n + 1);
  for (int s = 0; s < n; ++s) {
    indptr[s + 1] = static_cast<std::int32_t>(indptr[s] + (layout.lengths[s] + ps - 1) / ps);
    lens[s] = static_cast<std::int32_t>(layout.lengths[s] - layout.suffix_begin[s]);
  }
  for (int s = 0; s < n; ++s) suffix_indptr[s] = static_cast<std::int32_t>(indptr[s] + layout.suffix_begin[s] / ps);
  suffix_indptr[n] = indptr[n];
  std::vector<std::byte> image;
  const auto put = [&image](const void* data, std::size_t bytes) {
    const std::size_t at = image.size();
    image.resize((at + bytes + 255) / 256 * 256, std::byte{0});
    if (bytes > 0) std::memcpy(image.data() + at, data, bytes);
  };
  put(items.data(), items.size() * sizeof(RowAttentionItem));
  put(row_q.data(), row_q.size() * 4);
  put(merge_rows.data(), merge_rows.size() * 4);
  put(suffix_indptr.data(), suffix_indptr.size() * 4);
  put(lens.data(), lens.size() * 4);
  return image;
}

// ---- random batches of a serving step ----

// Sequences of `prompts` system prompts (some evicted and re-admitted onto other pages, some
// without a prompt), random lengths; each step changes a few sequences, as a trace's step does.
struct RandomBatch {
  std::mt19937_64 rng;
  int page_size;
  std::int64_t prompt_pages;
  std::vector<std::vector<std::int32_t>> prompt_copies;  // physical pages of each prompt's copies
  std::vector<std::vector<std::int32_t>> tables;
  std::vector<TraceSequencePages> seqs;
  std::int32_t next_page = 0;

  RandomBatch(std::uint64_t seed, int ps, std::int64_t pp, int prompts) : rng(seed), page_size(ps), prompt_pages(pp) {
    for (int p = 0; p < prompts; ++p) prompt_copies.push_back(fresh_pages(pp));
  }
  std::vector<std::int32_t> fresh_pages(std::int64_t n) {
    std::vector<std::int32_t> pages;
    for (std::int64_t i = 0; i < n; ++i) pages.push_back(next_page++);
    return pages;
  }
  // A new sequence: a prompt's current copy (or a new copy of it: an eviction), a partial copy
  // (a prefix cut by an eviction), or no prompt; then its own pages.
  void add() {
    std::vector<std::int32_t> table;
    std::int64_t pp = prompt_pages;
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 6) {
      table = prompt_copies[rng() % prompt_copies.size()];
    } else if (kind < 7) {
      std::vector<std::int32_t>& copy = prompt_copies[rng() % prompt_copies.size()];
      copy = fresh_pages(prompt_pages);
      table = copy;
    } else if (kind < 8) {
      table = prompt_copies[rng() % prompt_copies.size()];
      const std::int64_t keep = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(prompt_pages));
      table.resize(static_cast<std::size_t>(keep));
      const auto rest = fresh_pages(prompt_pages - keep);
      table.insert(table.end(), rest.begin(), rest.end());
    } else {
      pp = 0;
      table = fresh_pages(prompt_pages);
    }
    const auto own = fresh_pages(static_cast<std::int64_t>(rng() % 4));
    table.insert(table.end(), own.begin(), own.end());
    tables.push_back(std::move(table));
    seqs.push_back({{}, pp, 0});
    grow(seqs.size() - 1, 0);
  }
  // Length within the table's pages (at least one token), sometimes short of the prompt.
  void grow(std::size_t i, int by) {
    const std::int64_t cap = static_cast<std::int64_t>(tables[i].size()) * page_size;
    std::int64_t len = seqs[i].length + by;
    if (by == 0)
      len = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(std::max<std::int64_t>(cap, 1)));
    if (len > cap) {
      const auto more = fresh_pages(1);
      tables[i].push_back(more[0]);
    }
    seqs[i].length = static_cast<std::int32_t>(std::max<std::int64_t>(len, 1));
  }
  void step() {
    for (std::size_t i = 0; i < seqs.size(); ++i) grow(i, 1);
    const int arrivals = static_cast<int>(rng() % 4), finishes = static_cast<int>(rng() % 4);
    for (int f = 0; f < finishes && !seqs.empty(); ++f) {
      const std::size_t i = rng() % seqs.size();
      seqs.erase(seqs.begin() + static_cast<std::ptrdiff_t>(i));
      tables.erase(tables.begin() + static_cast<std::ptrdiff_t>(i));
    }
    for (int a = 0; a < arrivals; ++a) add();
    for (std::size_t i = 0; i < seqs.size(); ++i) seqs[i].table = tables[i];
  }
};

TEST(TraceHostState, LayoutBuilderEqualsTheRebuildEveryStep) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    for (int prompts : {1, 3, 8}) {
      RandomBatch batch(seed * 31 + static_cast<std::uint64_t>(prompts), 4, 3, prompts);
      for (int i = 0; i < 12; ++i) batch.add();
      TraceBatchLayoutBuilder builder;  // one builder for the whole run: its stamps carry over
      int with_levels = 0;
      for (int step = 0; step < 300; ++step) {
        batch.step();
        const TraceBatchLayout want = rebuilt_layout(batch.seqs, 4);
        expect_same_layout(builder.build(batch.seqs, 4), want, step);
        expect_same_layout(trace_batch_layout(batch.seqs, 4), want, step);
        with_levels += want.layout.levels.empty() ? 0 : 1;
      }
      EXPECT_GT(with_levels, 100) << "the runs must exercise shared levels";
    }
  }
}

TEST(TraceHostState, LayoutBuilderRefusesAReleasedFirstPage) {
  const std::vector<std::int32_t> t{-1, 4};
  const std::vector<TraceSequencePages> seqs{{t, 1, 6}};
  TraceBatchLayoutBuilder builder;
  EXPECT_THROW(builder.build(seqs, 4), std::invalid_argument);
}

TEST(TraceHostState, MetadataImageEqualsTheRebuildEveryStep) {
  const DecodeShape shape{32, 8, 128};
  RandomBatch batch(9, 16, 32, 4);
  for (int i = 0; i < 40; ++i) batch.add();
  TraceBatchLayoutBuilder builder;
  SharedPrefixMetadata m;  // reused: its image buffer carries over
  int with_levels = 0;
  for (int step = 0; step < 200; ++step) {
    batch.step();
    if (batch.seqs.empty()) batch.add();
    const SharedPrefixLayout& layout = builder.build(batch.seqs, 16).layout;
    shared_prefix_metadata(shape, layout, &m);
    ASSERT_EQ(m.image, rebuilt_image(shape, layout)) << "step " << step;
    std::int64_t suffix = 0, rows = 0;
    for (int s = 0; s < layout.num_seqs(); ++s) suffix += layout.lengths[s] - layout.suffix_begin[s];
    for (const SharedLevel& l : layout.levels) rows += static_cast<std::int64_t>(l.num_seqs) * shape.heads_q;
    EXPECT_EQ(m.suffix_tokens, suffix);
    EXPECT_EQ(m.num_rows, rows);
    EXPECT_EQ(m.num_items, static_cast<int>(layout.levels.size()) * shape.heads_kv);
    EXPECT_EQ(m.num_seqs, layout.num_seqs());
    with_levels += layout.levels.empty() ? 0 : 1;
  }
  EXPECT_GT(with_levels, 100);
}

// ---- the pool's kept state ----

TEST(TraceHostState, PagedPoolStatsAndBatchViewEqualTheMirrorAfterEveryOperation) {
  PagedPoolConfig c{.layout = {1, 2, DType::fp32}, .page_size = 4, .num_pages = 60, .max_seq_len = 64, .max_seqs = 12};
  PagedPool pool(c, make_host_backend());
  pool.defer_metadata_writes(true);
  std::mt19937_64 rng(123);
  std::vector<SequenceHandle> live;
  int views = 0;
  for (int op = 0; op < 5000; ++op) {
    const int kind = static_cast<int>(rng() % 100);
    try {
      if (kind < 15 || live.empty()) {
        live.push_back(pool.admit(nullptr, nullptr, static_cast<std::int64_t>(rng() % 20)));
      } else if (kind < 25) {
        // A shared-prefix admit over another sequence's full pages.
        const SequenceHandle from = live[rng() % live.size()];
        const auto table = pool.block_table(from);
        const std::size_t full = static_cast<std::size_t>(pool.length(from) / c.page_size);
        live.push_back(pool.admit_with_prefix(table.first(std::min<std::size_t>(full, rng() % 3)), nullptr, nullptr,
                                              static_cast<std::int64_t>(rng() % 6)));
      } else if (kind < 70) {
        pool.extend(live[rng() % live.size()], static_cast<std::int64_t>(rng() % 3));
      } else if (kind < 78) {
        pool.append_tokens(live[rng() % live.size()], nullptr, nullptr, static_cast<std::int64_t>(rng() % 9));
      } else if (kind < 85) {
        live.push_back(pool.fork(live[rng() % live.size()]));
      } else {
        const std::size_t i = rng() % live.size();
        pool.release(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
    } catch (const PoolError&) {
      // refused before anything changed
    }
    std::int64_t tokens = 0;
    for (SequenceHandle h : live) tokens += pool.length(h);
    ASSERT_EQ(pool.stats().logical_tokens, tokens) << "after operation " << op;
    if (live.empty() || rng() % 3 != 0) continue;
    // A batch of a random subset in random order (sometimes the same as last time: the cache).
    std::vector<SequenceHandle> batch = live;
    std::shuffle(batch.begin(), batch.end(), rng);
    batch.resize(1 + rng() % batch.size());
    const auto view = pool.batch<float>(batch);
    ++views;
    std::int32_t at = 0;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      const auto table = pool.block_table(batch[i]);
      ASSERT_EQ(view.kv.indptr[i], at);
      ASSERT_TRUE(std::equal(table.begin(), table.end(), view.kv.page_indices + at)) << "after operation " << op;
      ASSERT_EQ(view.seq_lens_device[i], pool.length(batch[i]));
      ASSERT_EQ(view.lengths_host[i], pool.length(batch[i]));
      at += static_cast<std::int32_t>(table.size());
    }
    ASSERT_EQ(view.kv.indptr[batch.size()], at);
  }
  EXPECT_GT(views, 1000);
}

TEST(TraceHostState, DeferredWordsSetTheLastWriteOfEachWord) {
  auto backend = make_host_backend();
  PoolBuffer words(*backend, 64 * sizeof(std::int32_t));
  std::int32_t* w = words.as<std::int32_t>();
  std::fill(w, w + 64, 0);
  std::vector<std::int32_t> model(64, 0);
  DeferredWords d(*backend);
  d.set_deferred(true);
  std::mt19937_64 rng(5);
  for (int round = 0; round < 300; ++round) {
    const int puts = static_cast<int>(rng() % 200);
    for (int i = 0; i < puts; ++i) {
      const std::size_t at = rng() % 64;
      const auto value = static_cast<std::int32_t>(rng() % 1000);
      d.put(w + at, value);
      model[at] = value;
    }
    d.flush();
    ASSERT_TRUE(std::equal(model.begin(), model.end(), w)) << "round " << round;
    ASSERT_EQ(d.pending(), 0u);
  }
}

// ---- the step's host batch over a real trace ----

TEST(TraceHostState, StepHostMatchesThePoolEveryStepOfATraceWithSystemPrompts) {
  TraceSpec spec;
  spec.requests = 120;
  spec.arrival = TraceArrival::poisson;
  spec.rate = 2.0;
  spec.prompt.kind = TraceLengths::Kind::uniform;
  spec.prompt.lo = 1;
  spec.prompt.hi = 30;
  spec.output.kind = TraceLengths::Kind::uniform;
  spec.output.lo = 1;
  spec.output.hi = 40;
  spec.system_prompt_len = 13;  // 3 whole pages of 4
  spec.system_prompts = 3;
  spec.seed = 11;
  PagedPoolConfig c{
      .layout = {1, 2, DType::fp32}, .page_size = 4, .num_pages = 220, .max_seq_len = 96, .max_seqs = 120};
  PagedPool pool(c, make_host_backend());
  RadixCache cache(pool);
  SchedulerOptions options;
  options.prefix_cache = &cache;
  TraceScheduler sched(pool, make_trace(spec), options);
  TraceStepHost host(c.page_size, true);
  int steps = 0, leveled = 0;
  std::int64_t preempted = 0;
  while (!sched.done() && steps < 400) {
    sched.step([&](std::span<const SequenceHandle> handles) {
      host.build(sched, pool, handles);
      const auto view = pool.batch<float>(host.batch_handles());
      host.set_view_lengths(view.lengths_host);
      const auto position = host.position();
      // Positions are a permutation that maps each running sequence to its batch slot.
      std::vector<int> seen(handles.size(), 0);
      for (std::size_t i = 0; i < handles.size(); ++i) {
        ASSERT_EQ(host.batch_handles()[static_cast<std::size_t>(position[i])], handles[i]);
        ++seen[static_cast<std::size_t>(position[i])];
      }
      ASSERT_TRUE(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }));
      // Page counts and last-page lengths from the view's lengths, against the block tables.
      for (std::size_t b = 0; b < handles.size(); ++b) {
        const SequenceHandle h = host.batch_handles()[b];
        const auto len = static_cast<std::int32_t>(pool.length(h));
        ASSERT_EQ(host.lengths()[b], len);
        ASSERT_EQ(host.indptr()[b + 1] - host.indptr()[b], static_cast<std::int32_t>(pool.block_table(h).size()));
        ASSERT_EQ(host.last_page_len()[b], (len - 1) % c.page_size + 1);
      }
      if (const SharedPrefixLayout* layout = host.prefix_layout()) {
        ++leveled;
        for (const SharedLevel& level : layout->levels)
          for (int s = level.first_seq; s < level.first_seq + level.num_seqs; ++s) {
            // Every member lists the level's pages: the same physical pages as the first member.
            const auto first = pool.block_table(host.batch_handles()[static_cast<std::size_t>(level.first_seq)]);
            const auto mine = pool.block_table(host.batch_handles()[static_cast<std::size_t>(s)]);
            const std::int64_t pages = level.token_end / c.page_size;
            ASSERT_TRUE(std::equal(first.begin(), first.begin() + pages, mine.begin()));
            ASSERT_LT(level.token_end, layout->lengths[static_cast<std::size_t>(s)]);
          }
      }
    });
    preempted += sched.records().back().preempted;
    ++steps;
  }
  EXPECT_TRUE(sched.done());
  EXPECT_GT(leveled, steps / 2);
  EXPECT_GT(preempted, 0) << "the pool is small enough that sequences are preempted";
}

}  // namespace
}  // namespace decode_bench::sweeps
