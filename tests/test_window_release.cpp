// Windowed paged points on a pool released behind the window (sweeps/window_release.hpp): the
// first-kept rule for q_len query tokens against visible_range, the pages a release leaves, the
// window_release axis (where it exists, its ids, its refusals), the plan a point's backend gets and
// the pool block a point records, which the results reader checks.
#include <gtest/gtest.h>

#include <string>

#include "harness/results_schema.hpp"
#include "kernels/attention_variant.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "pools/windowed_pages.hpp"
#include "sweeps/window_release.hpp"
#include "tests/sweep_test_support.hpp"

namespace decode_bench {
namespace {

using nlohmann::json;

// The rule is the first query token's window: equal to visible_range(L, q_len, 0, w).begin and to
// read_range, never after any query token's own window, and q_len 1's old form max(0, L - w).
TEST(WindowRelease, FirstKeptIsTheFirstQueryTokensWindow) {
  for (std::int64_t len = 1; len <= 200; ++len)
    for (int q_len = 1; q_len <= kMaxQueryLen && q_len <= len; ++q_len)
      for (std::int64_t w : {0L, 1L, 2L, 7L, 15L, 16L, 17L, 64L, len - 1, len, len + 5}) {
        if (w < 0) continue;
        const std::int64_t first = window_first_kept(len, w, q_len);
        const AttentionVariant v{.q_len = q_len, .window = w};
        ASSERT_EQ(first, visible_range(len, q_len, 0, w).begin) << len << " " << q_len << " " << w;
        ASSERT_EQ(first, read_range(len, v).begin) << len << " " << q_len << " " << w;
        for (int i = 0; i < q_len; ++i) ASSERT_GE(visible_range(len, q_len, i, w).begin, first);
        if (q_len == 1) {
          ASSERT_EQ(first, w == 0 ? 0 : std::max<std::int64_t>(0, len - w));
        }
      }
  // Closed values: L 100, window 10: one token from 90, four from 87 (token 0 at 96 sees 87..96).
  EXPECT_EQ(window_first_kept(100, 10, 1), 90);
  EXPECT_EQ(window_first_kept(100, 10, 4), 87);
  EXPECT_EQ(window_first_kept(100, 1, 4), 96);
  EXPECT_EQ(window_first_kept(100, 0, 4), 0);
  EXPECT_EQ(window_first_kept(5, 10, 4), 0);
}

// A host pool filled as a point's is, then released with q_len: the entries before the first kept
// page are kReleasedPage, every page holding a position some query token sees is kept, and the pages
// go back to the free list.
TEST(WindowRelease, ReleaseKeepsEveryPageAQueryTokenSees) {
  for (int page : {1, 7, 16})
    for (int q_len : {1, 4})
      for (std::int64_t w : {std::int64_t{1}, std::int64_t{page - 1}, std::int64_t{page}, std::int64_t{page + 1},
                             std::int64_t{99}, std::int64_t{299}}) {
        if (w < 1) continue;
        SCOPED_TRACE("page " + std::to_string(page) + " q_len " + std::to_string(q_len) + " window " + std::to_string(w));
        const std::int64_t len = 300;
        PagedPoolConfig c;
        c.layout = {2, 16, DType::fp16};
        c.page_size = page;
        c.num_pages = static_cast<std::int32_t>(2 * ((len + page - 1) / page));
        c.max_seq_len = len;
        c.max_seqs = 2;
        PagedPool pool(c, make_host_backend());
        const SequenceHandle a = pool.admit(nullptr, nullptr, len), b = pool.admit(nullptr, nullptr, len);
        const std::vector<std::int32_t> before(pool.block_table(a).begin(), pool.block_table(a).end());
        const std::int64_t used = pool.pages().used_count();
        const std::int64_t released = release_behind_window(pool, a, w, q_len);
        const std::int64_t first = window_first_kept(len, w, q_len);
        EXPECT_EQ(released, first / page);
        EXPECT_EQ(pool.released_pages(a), released);
        EXPECT_EQ(pool.released_pages(b), 0);
        EXPECT_EQ(pool.pages().used_count(), used - released);
        const auto table = pool.block_table(a);
        for (std::int64_t i = 0; i < static_cast<std::int64_t>(table.size()); ++i) {
          // Entry i holds positions [i x page, (i + 1) x page): seen by some query token iff its last
          // position reaches the first token's window.
          bool seen = false;
          for (int t = 0; t < q_len; ++t) {
            const VisibleRange r = visible_range(len, q_len, t, w);
            seen = seen || (r.begin < (i + 1) * page && i * page < r.end);
          }
          if (seen) {
            EXPECT_EQ(table[i], before[i]) << "entry " << i << " holds a visible position";
          } else {
            EXPECT_EQ(table[i], PagedPool::kReleasedPage) << "entry " << i;
          }
        }
        EXPECT_EQ(release_behind_window(pool, a, w, q_len), 0) << "a second release finds nothing more";
      }
}

// The plan a point's pool follows: release on paged windowed points of decode-bench's kernels,
// the reason otherwise (another backend, a shared-prefix batch); nothing applies to contiguous,
// window-0, MLA, trace or CPU-reference points.
TEST(WindowRelease, PlanReleasesForDecodeBenchAndSaysWhyNotElsewhere) {
  const json paged = {{"kernel", "flash_decode"}, {"layout", "paged"}, {"window", 128}, {"backend", "decode-bench"}};
  const sweeps::WindowReleasePlan on = sweeps::window_release_plan(paged);
  EXPECT_TRUE(on.applies);
  EXPECT_TRUE(on.release);
  EXPECT_TRUE(on.reason.empty());

  json off = paged;
  off["window_release"] = false;
  const sweeps::WindowReleasePlan kept = sweeps::window_release_plan(off);
  EXPECT_TRUE(kept.applies);
  EXPECT_FALSE(kept.release);
  EXPECT_NE(kept.reason.find("window_release false"), std::string::npos) << kept.reason;

  json fi = paged;
  fi["backend"] = "flashinfer";
  const sweeps::WindowReleasePlan full = sweeps::window_release_plan(fi);
  EXPECT_TRUE(full.applies);
  EXPECT_FALSE(full.release);
  EXPECT_NE(full.reason.find("backend flashinfer keeps the full pool"), std::string::npos) << full.reason;
  EXPECT_NE(full.reason.find("kv_indices"), std::string::npos) << full.reason;
  EXPECT_FALSE(sweeps::window_release_relevant(fi));

  // A shared-prefix batch records its pool and why it keeps it, but has no axis to set.
  json shared = paged;
  shared["prefix_len"] = 64;
  const sweeps::WindowReleasePlan prefix = sweeps::window_release_plan(shared);
  EXPECT_TRUE(prefix.applies);
  EXPECT_FALSE(prefix.release);
  EXPECT_NE(prefix.reason.find("shared-prefix batch keeps the full pool"), std::string::npos) << prefix.reason;
  EXPECT_FALSE(sweeps::window_release_relevant(shared));

  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{{"layout", "contiguous"},
                                                                            {"window", 0},
                                                                            {"attention", "mla"},
                                                                            {"kernel", "trace"},
                                                                            {"kernel", "cpu_reference"}}) {
    json p = paged;
    p[key] = value;
    EXPECT_FALSE(sweeps::window_release_plan(p).applies) << key << " " << value.dump();
    EXPECT_FALSE(sweeps::window_release_relevant(p)) << key << " " << value.dump();
  }
}

// The axis: on paged windowed points of decode-bench only (at its default there, out of the id),
// absent elsewhere; false is in the id, so both can be swept side by side.
TEST(WindowRelease, AxisExistsWherePagesCanBeReleased) {
  using sweeps::testing::one_experiment;
  using sweeps::testing::plan_of;
  const json common = {{"kernel", "flash_decode"}, {"T", 1000}, {"heads_q", 8}, {"heads_kv", 8}};
  const auto plan = plan_of(one_experiment({{"layout", {"contiguous", "paged"}}, {"window", {0, 128}}}, common));
  ASSERT_EQ(plan.points.size(), 4u);
  for (const auto& p : plan.points) {
    const bool windowed_paged = p.parameters["layout"] == "paged" && p.parameters.value("window", 0) > 0;
    EXPECT_EQ(p.parameters.contains("window_release"), windowed_paged) << p.id;
    if (windowed_paged) {
      EXPECT_EQ(p.parameters["window_release"], true);
      EXPECT_EQ(p.id, "e/kernel=flash_decode/layout=paged/dtype=fp16/heads_q=8/heads_kv=8/T=1000/window=128/page_size=16");
    }
  }
  const auto both = plan_of(one_experiment({{"window_release", {false, true}}},
                                           {{"kernel", "flash_decode"}, {"layout", "paged"}, {"window", 128}}));
  ASSERT_EQ(both.points.size(), 2u);
  EXPECT_EQ(both.points[0].id, "e/kernel=flash_decode/layout=paged/dtype=fp16/T=4096/window=128/window_release=false/page_size=16");
  EXPECT_EQ(both.points[1].id, "e/kernel=flash_decode/layout=paged/dtype=fp16/T=4096/window=128/page_size=16");
}

TEST(WindowRelease, GivenTrueWhereNothingCanBeReleasedIsRefused) {
  using sweeps::testing::one_experiment;
  using sweeps::testing::plan_errors;
  const json common = {{"kernel", "flash_decode"}, {"T", 1000}, {"window", 128}, {"window_release", true}};
  {
    const auto errors = plan_errors(one_experiment({{"layout", {"contiguous"}}}, common));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].message.find("window_release true with layout contiguous"), std::string::npos)
        << errors[0].message;
    EXPECT_NE(errors[0].path.find("window_release"), std::string::npos) << errors[0].path;
  }
  {
    json c = common;
    c["window"] = 0;
    const auto errors = plan_errors(one_experiment({{"layout", {"paged"}}}, c));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].message.find("window_release true with window 0"), std::string::npos) << errors[0].message;
  }
  {
    const auto errors = plan_errors(one_experiment({{"layout", {"paged"}}, {"backend", {"flashinfer"}}}, common));
    ASSERT_EQ(errors.size(), 1u);
    EXPECT_NE(errors[0].message.find("window_release true cannot be honoured: backend flashinfer"), std::string::npos)
        << errors[0].message;
  }
  // Swept over points where it cannot act: those points refuse it (set it in the experiment that
  // holds only paged windowed points).
  {
    json c = common;
    c.erase("window_release");
    for (const json& values : {json{false, true}, json{true, false}}) {
      const auto errors = plan_errors(one_experiment({{"layout", {"contiguous", "paged"}}, {"window_release", values}}, c));
      ASSERT_EQ(errors.size(), 1u) << values.dump();
      EXPECT_NE(errors[0].message.find("window_release true with layout contiguous"), std::string::npos)
          << errors[0].message;
    }
  }
  // false anywhere, and true where it acts, are fine.
  json c = common;
  c["window_release"] = false;
  EXPECT_TRUE(plan_errors(one_experiment({{"layout", {"contiguous", "paged"}}}, c)).empty());
  EXPECT_TRUE(plan_errors(one_experiment({{"layout", {"paged"}}}, common)).empty());
}

// The pool block: pages, released, held and their bytes, the reason when nothing was released; the
// results reader takes it and refuses one without its typed fields.
TEST(WindowRelease, PoolBlockRecordsWhatWasReleasedAndTheReaderChecksIt) {
  sweeps::WindowReleasePlan plan{.applies = true, .release = true, .reason = ""};
  const json on = sweeps::window_pool_json(plan, 16, 1000, 930, 4096);
  EXPECT_EQ(on["pages"], 1000);
  EXPECT_EQ(on["pages_released"], 930);
  EXPECT_EQ(on["pages_held"], 70);
  EXPECT_EQ(on["bytes_held"], 70u * 4096u);
  EXPECT_EQ(on["window_release"], true);
  EXPECT_FALSE(on.contains("reason"));
  plan.release = false;
  plan.reason = "why";
  const json off = sweeps::window_pool_json(plan, 16, 1000, 0, 4096);
  EXPECT_EQ(off["pages_held"], 1000);
  EXPECT_EQ(off["window_release"], false);
  EXPECT_EQ(off["reason"], "why");

  json doc = make_results_document(make_meta({}, "t"), sweeps::host_device_info());
  doc["points"].push_back({{"id", "e/x"}, {"parameters", json::object()}, {"status", "skipped"}, {"reason", "r"},
                           {"pool", on}});
  EXPECT_NO_THROW(validate_results(doc));
  doc["points"][0]["pool"].erase("window_release");
  try {
    validate_results(doc);
    ADD_FAILURE() << "a pool block without window_release was accepted";
  } catch (const SchemaError& e) {
    EXPECT_EQ(e.path(), "points[0].pool.window_release");
  }
}

}  // namespace
}  // namespace decode_bench
