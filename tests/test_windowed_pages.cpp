// The paged pool for sliding-window layers (pools/windowed_pages.hpp, PagedPool::release_pages_before):
// seeded random admits, appends with release behind the window, explicit releases and sequence
// releases at page sizes 1, 3, 7 and 16 and windows around a page, checked after every step
// against a model that knows only each sequence's length and how many leading pages are gone;
// forks; refusals; and the sliding-window capacity (pools/window_capacity.hpp) in closed form.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <set>

#include <unistd.h>

#include "harness/json_file.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "pools/pool_error.hpp"
#include "pools/window_capacity.hpp"
#include "pools/windowed_pages.hpp"
#include "tests/cli_runner.hpp"

namespace decode_bench {
namespace {

PagedPool accounting_pool(int page_size, std::int32_t num_pages, std::int64_t max_seq_len, std::int32_t max_seqs) {
  PagedPoolConfig c;
  c.layout = {2, 64, DType::bf16};
  c.page_size = page_size;
  c.num_pages = num_pages;
  c.max_seq_len = max_seq_len;
  c.max_seqs = max_seqs;
  return PagedPool(c, make_accounting_backend());
}

// What the model knows of a sequence: its length, its window and its released leading pages.
struct ModelSeq {
  std::int64_t length = 0;
  std::int64_t window = 0;
  std::int64_t released = 0;
  bool past_window = false;  // an explicit release went past what the window lets go
};

std::int64_t pages_of(std::int64_t tokens, int ps) { return (tokens + ps - 1) / ps; }

// The pool's accounting against the model: pages used = live pages of the model (each table
// entry past the released ones its own page, held once), released entries marked, nothing free
// referenced, fills adding up to the tokens kept.
void check_against_model(const PagedPool& pool, const std::map<std::int32_t, std::pair<SequenceHandle, ModelSeq>>& live) {
  const auto& pages = pool.pages();
  const int ps = pool.config().page_size;
  ASSERT_EQ(pages.free_count() + pages.used_count(), pages.total());
  std::int64_t live_pages = 0, kept_tokens = 0;
  std::set<std::int32_t> held;
  for (const auto& [slot, entry] : live) {
    const auto& [h, m] = entry;
    const auto table = pool.block_table(h);
    ASSERT_EQ(pool.length(h), m.length);
    ASSERT_EQ(static_cast<std::int64_t>(table.size()), pages_of(m.length, ps));
    ASSERT_EQ(pool.released_pages(h), m.released);
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(table.size()); ++i) {
      if (i < m.released) {
        ASSERT_EQ(table[i], PagedPool::kReleasedPage) << "slot " << slot << " entry " << i;
        continue;
      }
      ASSERT_GE(table[i], 0);
      ASSERT_TRUE(held.insert(table[i]).second) << "page " << table[i] << " in two tables";
      ASSERT_EQ(pages.refcount(table[i]), 1);
    }
    live_pages += pages_of(m.length, ps) - m.released;
    kept_tokens += m.length - m.released * ps;
  }
  ASSERT_EQ(pages.used_count(), live_pages);
  for (std::int32_t p : pages.free_list()) ASSERT_EQ(pages.refcount(p), 0) << "free page " << p << " is held";
  ASSERT_EQ(pool.stats().stored_tokens, kept_tokens);
}

TEST(WindowedPages, RandomOperationsAgainstTheLivePageModel) {
  for (int ps : {1, 3, 7, 16}) {
    std::mt19937_64 rng(1000 + ps);
    PagedPool pool = accounting_pool(ps, 48, 300, 6);
    std::map<std::int32_t, std::pair<SequenceHandle, ModelSeq>> live;
    const std::int64_t windows[] = {1, std::max(1, ps - 1), ps, ps + 1, 5, 33};
    const auto pick = [&](auto n) { return std::uniform_int_distribution<std::int64_t>(0, n - 1)(rng); };
    for (int step = 0; step < 3000; ++step) {
      const int op = static_cast<int>(pick(10));
      if (op < 2 || live.empty()) {  // admit, then release behind its window
        ModelSeq m;
        m.length = pick(60);
        m.window = windows[pick(6)];
        try {
          const SequenceHandle h = pool.admit(nullptr, nullptr, m.length);
          const std::int64_t gone = release_behind_window(pool, h, m.window);
          m.released = window_first_kept(m.length, m.window) / ps;
          ASSERT_EQ(gone, m.released);
          live[h.slot] = {h, m};
        } catch (const PoolError& e) {
          ASSERT_TRUE(e.kind() == PoolErrorKind::OutOfPages || e.kind() == PoolErrorKind::OutOfSlots) << e.what();
        }
      } else {
        auto it = live.begin();
        std::advance(it, pick(live.size()));
        auto& [h, m] = it->second;
        if (op < 7) {  // append n tokens, then release behind the window
          const std::int64_t n = 1 + pick(12);
          try {
            pool.extend(h, n);
            m.length += n;
          } catch (const PoolError& e) {
            ASSERT_TRUE(e.kind() == PoolErrorKind::OutOfPages || e.kind() == PoolErrorKind::SequenceTooLong) << e.what();
          }
          const std::int64_t now = std::max(m.released, window_first_kept(m.length, m.window) / ps);
          ASSERT_EQ(release_behind_window(pool, h, m.window), now - m.released);
          m.released = now;
          // Every page wholly behind the window is gone; nothing the newest token sees is, unless
          // an explicit release took it.
          ASSERT_GT((m.released + 1) * ps, m.length - m.window);
          if (!m.past_window) {
            ASSERT_LE(m.released * ps, std::max<std::int64_t>(0, m.length - m.window));
          }
        } else if (op < 9) {  // an explicit release point anywhere in [0, length]
          const std::int64_t first_kept = pick(m.length + 1);
          const std::int64_t now = std::max(m.released, first_kept / ps);
          ASSERT_EQ(pool.release_pages_before(h, first_kept), now - m.released);
          m.released = now;
          m.past_window = m.past_window || first_kept > window_first_kept(m.length, m.window);
        } else {
          pool.release(h);
          live.erase(it);
        }
      }
      check_against_model(pool, live);
      if (::testing::Test::HasFatalFailure()) FAIL() << "page " << ps << " step " << step;
    }
  }
}

// A fork shares the parent's live pages and copies its released entries; releasing behind the
// window in one of them drops only its holder, so a shared page goes back when both let it go.
TEST(WindowedPages, AForkKeepsSharedPagesUntilBothRelease) {
  PagedPool pool = accounting_pool(4, 32, 100, 4);
  const SequenceHandle a = pool.admit(nullptr, nullptr, 20);  // pages 0..4
  EXPECT_EQ(pool.release_pages_before(a, 9), 2);             // tokens 0..7: pages 0 and 1
  const SequenceHandle b = pool.fork(a);
  EXPECT_EQ(pool.released_pages(b), 2);
  EXPECT_EQ(pool.block_table(b)[0], PagedPool::kReleasedPage);
  EXPECT_EQ(pool.pages().used_count(), 3);
  EXPECT_EQ(pool.release_pages_before(b, 16), 2);  // pages 2 and 3: a still holds them
  EXPECT_EQ(pool.pages().used_count(), 3);
  EXPECT_EQ(pool.release_pages_before(a, 12), 1);  // page 2 goes back
  EXPECT_EQ(pool.pages().used_count(), 2);
  pool.extend(b, 1);  // b's tail (shared, 4 of 4 tokens) stays; a new page
  EXPECT_EQ(pool.pages().used_count(), 3);
  pool.release(a);  // page 3 (b released it) goes back; page 4 is b's alone now
  EXPECT_EQ(pool.pages().used_count(), 2);
  EXPECT_EQ(pool.pages().refcount(pool.block_table(b)[4]), 1);
  pool.release(b);
  EXPECT_EQ(pool.pages().used_count(), 0);
  EXPECT_EQ(pool.pages().free_count(), 32);
}

TEST(WindowedPages, RefusalsNameTheValue) {
  PagedPool pool = accounting_pool(16, 8, 100, 2);
  const SequenceHandle h = pool.admit(nullptr, nullptr, 40);
  for (std::int64_t bad : {std::int64_t{-1}, std::int64_t{41}}) {
    try {
      pool.release_pages_before(h, bad);
      FAIL() << bad;
    } catch (const PoolError& e) {
      EXPECT_EQ(e.kind(), PoolErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("first_kept " + std::to_string(bad) + " is outside [0, 40]"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(pool.pages().used_count(), 3);
  pool.release_pages_before(h, 40);  // every whole page: two of 16; the tail of 8 stays
  EXPECT_EQ(pool.pages().used_count(), 1);
  std::byte row[256];
  try {
    pool.read_token(h, 3, row, row);
    FAIL();
  } catch (const PoolError& e) {
    EXPECT_NE(std::string(e.what()).find("released behind the window"), std::string::npos) << e.what();
  }
  // Its pages are no prefix to share: the released entry is refused by name.
  const std::int32_t gone[] = {PagedPool::kReleasedPage};
  EXPECT_THROW(pool.admit_with_prefix(gone, nullptr, nullptr, 1), PoolError);
}

// The closed forms of windowed_pages.hpp against brute force over every length.
TEST(WindowedPages, LivePagesAndTheirPeakInClosedForm) {
  for (std::int64_t ps : {1, 3, 7, 16})
    for (std::int64_t w : {1, 2, 5, 15, 16, 17, 128}) {
      std::int64_t peak = 0;
      for (std::int64_t len = 1; len <= w + 3 * ps + 40; ++len) {
        std::int64_t live = 0;  // pages holding a position in [len - w, len)
        for (std::int64_t page = 0; page * ps < len; ++page) live += (page + 1) * ps > len - w;
        ASSERT_EQ(window_live_pages(len, w, ps), live) << ps << " " << w << " " << len;
        peak = std::max(peak, live);
      }
      EXPECT_EQ(window_peak_pages(w, ps), peak) << ps << " " << w;
    }
}

// gpt-oss-120b (18 windowed + 18 full layers, 8 KV heads x 64, BF16: 2 KiB a token and layer) at
// 32K and 128K in 16 GiB, page 16 (32 KiB a layer's page): 2048 and 8192 pages a full layer; a
// window of 128 holds at most 9 pages (8 at a length on a page edge).
TEST(WindowCapacity, GptOss120bInClosedForm) {
  const WindowModel m = sliding_window_models().at(0);
  ASSERT_EQ(m.name, "gpt-oss-120b");
  for (std::int64_t context : {std::int64_t{32768}, std::int64_t{131072}}) {
    WindowCapacityQuery q;
    q.model = m;
    q.context = context;
    const WindowCapacityResult r = measure_window_capacity(q);
    const std::int64_t full = context / 16;
    EXPECT_EQ(r.page_bytes, 32768u);
    EXPECT_EQ(r.full_layer_pages, full);
    EXPECT_EQ(r.window_layer_pages_held, 8);
    EXPECT_EQ(r.window_layer_pages_peak, 9);
    EXPECT_EQ(r.window_layer_pages_released, full - 8);
    EXPECT_EQ(r.bytes_full_layers, 18ull * 2048 * context);
    EXPECT_EQ(r.bytes_window_layers_kept, 18ull * 2048 * context);
    EXPECT_EQ(r.bytes_window_layers_released, 18ull * 9 * 32768);
    EXPECT_EQ(r.budget_pages, 524288);
    EXPECT_EQ(r.sequences_kept, 524288 / (36 * full));
    EXPECT_EQ(r.sequences_released, 524288 / (18 * 9 + 18 * full));
  }
  WindowCapacityQuery q;
  q.model = m;
  EXPECT_EQ(measure_window_capacity(q).sequences_kept, 7);       // 2.25 GiB a sequence
  EXPECT_EQ(measure_window_capacity(q).sequences_released, 14);  // 1.13 GiB
  q.context = 131072;
  EXPECT_EQ(measure_window_capacity(q).sequences_kept, 1);
  EXPECT_EQ(measure_window_capacity(q).sequences_released, 3);
}

// Page sizes 1 and odd, windows shorter than a page and contexts inside the window, for every model.
TEST(WindowCapacity, EveryModelPageAndContextInClosedForm) {
  for (const WindowModel& m : sliding_window_models())
    for (int ps : {1, 7, 16})
      for (std::int64_t context : {std::int64_t{5}, m.window, m.window + 1, std::int64_t{3000}}) {
        WindowCapacityQuery q;
        q.model = m;
        q.page_size = ps;
        q.context = context;
        q.budget_bytes = std::uint64_t{1} << 30;
        const WindowCapacityResult r = measure_window_capacity(q);
        const std::int64_t full = (context + ps - 1) / ps;
        std::int64_t brute = 0;
        for (std::int64_t l = 1; l <= context; ++l) brute = std::max(brute, window_live_pages(l, m.window, ps));
        const std::uint64_t page = m.layer.token_kv_bytes() * static_cast<std::uint64_t>(ps);
        EXPECT_EQ(r.window_layer_pages_peak, brute) << m.name << " " << ps << " " << context;
        if (context >= m.window + ps - 1) {
          EXPECT_EQ(brute, window_peak_pages(m.window, ps));
        }
        EXPECT_EQ(r.window_layer_pages_held, window_live_pages(context, m.window, ps));
        const std::int64_t budget_pages = static_cast<std::int64_t>((std::uint64_t{1} << 30) / page);
        EXPECT_EQ(r.sequences_kept, budget_pages / ((m.window_layers + m.full_layers) * full));
        EXPECT_EQ(r.sequences_released, budget_pages / (m.window_layers * brute + m.full_layers * full));
      }
}

TEST(WindowCapacity, CliPrintsTheModelsAndRefusesGridOptions) {
  const auto path = std::filesystem::temp_directory_path() / ("window_capacity_" + std::to_string(::getpid()) + ".json");
  const auto r = testing::run_decode_bench("capacity --preset sliding-window --budget 16GiB --output " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* model : {"gpt-oss-120b", "gpt-oss-20b", "Gemma-3-27B"})
    EXPECT_NE(r.output.find(model), std::string::npos) << r.output;
  const auto doc = read_json_file(path);
  std::filesystem::remove(path);
  ASSERT_EQ(doc["rows"].size(), 6u);  // three models x 32K and 128K
  EXPECT_EQ(doc["rows"][0]["model"], "gpt-oss-120b");
  EXPECT_EQ(doc["rows"][0]["context"], 32768);
  EXPECT_EQ(doc["rows"][0]["sequences_kept"], 7);
  EXPECT_EQ(doc["rows"][0]["sequences_released"], 14);
  EXPECT_EQ(doc["rows"][1]["context"], 131072);
  const auto bad = testing::run_decode_bench("capacity --preset sliding-window --page-size 8");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--preset sliding-window takes --budget and --output only"), std::string::npos) << bad.output;
  const auto device = testing::run_decode_bench("capacity --preset sliding-window --backend device");
  EXPECT_EQ(device.exit_code, 2) << device.output;
}

}  // namespace
}  // namespace decode_bench
