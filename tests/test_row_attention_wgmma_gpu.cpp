// The warpgroup-MMA row-attention kernel (kernels/row_attention_wgmma.cuh) against the float64
// reference: FP16 at the head dims it serves (128 and 64, and 96 and 48 on those kernels with the
// tail dims zero), blocks of one and two warpgroups, row counts around 64 and 128 (padding rows,
// padding warpgroups, a second row block); BF16 (the packed split) in blocks of 32 rows, up to ten
// row blocks an item; ranges not a multiple of the 64-token tile, starting
// past 0, shorter than one tile, empty, one and three splits (the fused merge), contiguous and
// over shuffled pages of 16 and 7; grouped decodes through plan_decode (the automatic choice: at
// d 128 at any batch, at d 64 BF16 at any batch, about two blocks an SM). Outputs
// poisoned first (row_attention_case.hpp). Skipped with the reason where no GPU exists or the GPU
// is not compute capability 9.0.
#include <gtest/gtest.h>

#include <sstream>
#include <utility>
#include <string>

#include "kernels/tuning_policy.hpp"
#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/row_attention_case.hpp"

namespace decode_bench {
namespace {

using testing::RowCase;

std::string describe(const RowCase& c, int block_rows, DType dtype = DType::fp16) {
  std::ostringstream s;
  s << dtype_name(dtype) << " D=" << c.shape.head_dim << " page=" << c.page_size << " splits=" << c.splits << " block rows " << block_rows
    << " items";
  for (const auto& it : c.items) s << " (rows " << it.rows << ",[" << it.token_begin << "," << it.token_end << "))";
  return s.str();
}

TEST(RowAttentionWgmmaGpu, RowsRangesSplitsAndPages) {
  DB_REQUIRE_WGMMA();
  std::uint64_t seed = 9100;
  // BF16's blocks are 32 rows whatever the knob: the packed split's one warpgroup.
  for (const auto& [dtype, block_rows] : {std::pair{DType::fp16, 64}, std::pair{DType::fp16, 128}, std::pair{DType::bf16, 32}}) {
    for (int d : {128, 96, 64, 48})
      for (int rows : {1, 17, 64, 65, 129, 300}) {
        RowCase c;
        c.shape = {8, 2, d};
        const int len = rows > 128 ? 2100 : 700;
        c.lengths = std::vector<std::int32_t>(40, 3);
        c.lengths[0] = len;
        c.page_size = rows % 2 == 0 ? 16 : rows % 3 == 0 ? 7 : 0;
        c.splits = rows % 3 == 0 ? 3 : 1;
        c.path = RowAttentionPath::tensor_core;
        c.tiling = RowAttentionTiling::wgmma;
        c.tuning.row_wgmma_rows = dtype == DType::fp16 ? block_rows : 0;
        c.seed = ++seed;
        // A long item starting past 0, a short one under a tile, an empty one.
        c.items = {{0, 0, rows, 3, len}, {0, 1, 5, 0, 41}, {1, 1, 9, 2, 2}};
        const std::string what = describe(c, block_rows, dtype);
        const auto r = testing::run_row_case_as(dtype, c);
        ASSERT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
        EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
        EXPECT_TRUE(r.plan.wgmma) << what;
        EXPECT_FALSE(r.plan.wide) << what;
        EXPECT_FALSE(r.plan.packed) << what;  // the mma.sync kernel's packed split, not this one's
        EXPECT_EQ(r.plan.rows_per_block, block_rows) << what;
      }
  }
}

// The automatic choice: FP16 items at head dims 64 and 128 of more than 64 rows take it (128-row
// blocks), and of 33-64 rows over at least 128 tiles (64-row blocks); shorter 64-row items, items
// of at most 32 rows and BF16 do not.
TEST(RowAttentionWgmmaGpu, AutomaticChoice) {
  DB_REQUIRE_WGMMA();
  struct Want {
    DType dtype;
    int d, rows, tokens;
    bool wgmma;
    int block_rows;
  };
  for (const Want& w : {Want{DType::fp16, 128, 256, 3000, true, 128}, Want{DType::fp16, 128, 65, 700, true, 128},
                        Want{DType::fp16, 128, 64, 8192, true, 64}, Want{DType::fp16, 128, 33, 8200, true, 64},
                        Want{DType::fp16, 128, 64, 8128, false, 0}, Want{DType::fp16, 128, 32, 9000, false, 0},
                        Want{DType::bf16, 128, 256, 3000, false, 0}, Want{DType::fp16, 64, 71, 3000, true, 128},
                        Want{DType::fp16, 64, 64, 8192, true, 64}, Want{DType::fp16, 64, 32, 9000, false, 0},
                        Want{DType::bf16, 64, 71, 3000, false, 0}}) {
    RowCase c;
    c.shape = {8, 2, w.d};
    c.lengths = {w.tokens, 3};
    c.page_size = 16;
    c.seed = 9200 + w.rows + w.tokens;
    c.items = {{0, 0, w.rows, 0, w.tokens}};
    const std::string what = std::string(dtype_name(w.dtype)) + " D " + std::to_string(w.d) + " rows " +
                             std::to_string(w.rows) + " tokens " + std::to_string(w.tokens);
    const auto r = testing::run_row_case_as(w.dtype, c);
    ASSERT_EQ(r.status, cudaSuccess) << what;
    EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
    EXPECT_EQ(r.plan.wgmma, w.wgmma) << what;
    if (w.wgmma) {
      EXPECT_EQ(r.plan.rows_per_block, w.block_rows) << what;
    }
  }
}

// Grouped decodes (kernels/row_attention_launch.cuh, wgmma_grouped_decode): FP16 and BF16 at d 128,
// groups 4, 7, 8 and 16, as many sequences as make at least one (sequence, KV head) item an SM,
// ragged lengths of 0-160 tokens and one of 700 (past the short path's 128), contiguous and over
// pages of 16, with host lengths (the work list) and without (the uniform grid); equal host lengths
// (the uniform grid on the host-length twin, unsplit and split); and two sequences of 5000 and 3000
// tokens (split items): the warpgroup-MMA kernel in one-warpgroup blocks (FP16 64 rows, BF16 32),
// verified against the float64 reference. FP16 at d 64 and DECODE_BENCH_ROW_TILING=narrow keep
// mma.sync.
TEST(RowAttentionWgmmaGpu, GroupedDecodes) {
  DB_REQUIRE_WGMMA();
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  std::uint64_t seed = 9400;
  for (const DType dtype : {DType::fp16, DType::bf16}) {
    for (const DecodeShape shape :
         {DecodeShape{32, 8, 128}, DecodeShape{28, 4, 128}, DecodeShape{64, 8, 128}, DecodeShape{128, 8, 128}}) {
      const int seqs = (sms + shape.heads_kv - 1) / shape.heads_kv;
      std::vector<std::int32_t> lengths(static_cast<std::size_t>(seqs));
      for (int s = 0; s < seqs; ++s) lengths[s] = (s * 37) % 161;
      lengths[1] = 700;
      for (int page : {0, 16})
        for (bool host : {false, true}) {
          testing::DecodeCase c;
          c.shape = shape;
          c.lengths = lengths;
          c.page_size = page;
          c.host_lengths = host;
          c.launches = 2;
          c.seed = ++seed;
          const std::string what = std::string(dtype_name(dtype)) + " " + std::to_string(shape.heads_q) + "/" +
                                   std::to_string(shape.heads_kv) + " x " + std::to_string(seqs) + " page " +
                                   std::to_string(page) + (host ? " host lengths" : "");
          const auto r = testing::run_decode_case_as(dtype, c);
          ASSERT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
          EXPECT_EQ(r.plan.path, DecodePath::tensor_core) << what;
          EXPECT_TRUE(r.plan.rows.wgmma) << what;
          EXPECT_EQ(r.plan.rows.rows_per_block, dtype == DType::fp16 ? 64 : 32) << what;
          EXPECT_EQ(r.plan.rows.work_entries.empty(), !host) << what;
          EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
        }
      const std::string shape_name =
          std::string(dtype_name(dtype)) + " " + std::to_string(shape.heads_q) + "/" + std::to_string(shape.heads_kv);
      // Equal host lengths: the uniform grid on the host-length twin (RowAttentionPlan::uniform_len),
      // unsplit (a sequence an item) and split (two sequences), launched twice on one plan.
      for (const std::vector<std::int32_t>& equal : {std::vector<std::int32_t>(static_cast<std::size_t>(seqs), 333),
                                                     std::vector<std::int32_t>{4099, 4099}})
        for (bool paged : {false, true}) {
          testing::DecodeCase uniform;
          uniform.shape = shape;
          uniform.lengths = equal;
          uniform.page_size = paged ? 16 : 0;
          uniform.host_lengths = true;
          uniform.launches = 2;
          uniform.seed = ++seed;
          const std::string what = shape_name + " " + std::to_string(equal.size()) + " x " + std::to_string(equal[0]) +
                                   (paged ? " paged" : "") + " host lengths";
          const auto u = testing::run_decode_case_as(dtype, uniform);
          ASSERT_EQ(u.status, cudaSuccess) << what;
          EXPECT_TRUE(u.plan.rows.wgmma) << what;
          EXPECT_EQ(u.plan.rows.uniform_len, equal[0]) << what;
          EXPECT_TRUE(u.verification.passed) << what << ": " << u.verification.summary();
        }
      for (bool paged : {false, true}) {
        testing::DecodeCase two;
        two.shape = shape;
        two.lengths = {5000, 3000};
        two.page_size = paged ? 16 : 0;
        two.seed = ++seed;
        const auto t = testing::run_decode_case_as(dtype, two);
        ASSERT_EQ(t.status, cudaSuccess) << shape_name << " two sequences";
        EXPECT_TRUE(t.plan.rows.wgmma) << shape_name << " two sequences";
        EXPECT_GT(t.plan.rows.splits, 1) << shape_name << " two sequences";
        EXPECT_TRUE(t.verification.passed) << shape_name << " two sequences: " << t.verification.summary();
      }
      testing::DecodeCase narrow;
      narrow.shape = shape;
      narrow.lengths = lengths;
      narrow.seed = ++seed;
      narrow.tuning.row_tiling = RowAttentionTiling::narrow;
      const auto n = testing::run_decode_case_as(dtype, narrow);
      ASSERT_EQ(n.status, cudaSuccess);
      EXPECT_FALSE(n.plan.rows.wgmma) << shape_name << " DECODE_BENCH_ROW_TILING=narrow";
      EXPECT_TRUE(n.verification.passed) << shape_name << " narrow: " << n.verification.summary();
    }
  }
  // At d 64 BF16 only, at any batch; with fewer items than SMs split about two blocks an SM; with
  // the (equal) host lengths given, on the host-length twin.
  for (const DType dtype : {DType::fp16, DType::bf16})
    for (int seqs : {(sms + 7) / 8, (sms + 7) / 8 - 1})
      for (int page : {0, 16}) {
        testing::DecodeCase d64;
        d64.shape = {64, 8, 64};
        d64.lengths.assign(static_cast<std::size_t>(seqs), 300);
        d64.page_size = page;
        d64.host_lengths = page == 16;
        d64.seed = ++seed;
        const std::string what = std::string(dtype_name(dtype)) + " d 64 x " + std::to_string(seqs) + " page " +
                                 std::to_string(page) + (d64.host_lengths ? " host lengths" : "");
        const auto r64 = testing::run_decode_case_as(dtype, d64);
        ASSERT_EQ(r64.status, cudaSuccess) << what;
        EXPECT_EQ(r64.plan.rows.wgmma, dtype == DType::bf16) << what;
        EXPECT_EQ(r64.plan.rows.uniform_len, dtype == DType::bf16 && d64.host_lengths ? 300 : 0) << what;
        if (dtype == DType::bf16 && seqs * 8 < sms) {
          const std::int64_t blocks = static_cast<std::int64_t>(r64.plan.rows.splits) * seqs * 8;
          EXPECT_GT(blocks, sms) << what;
          EXPECT_LE(blocks, 2 * sms) << what;
        }
        EXPECT_TRUE(r64.verification.passed) << what << ": " << r64.verification.summary();
      }
}

// Small enough for compute-sanitizer memcheck and racecheck: both block sizes and head dims, three
// splits, pages, and BF16's 32-row blocks; a grouped decode's work list in FP16 and BF16, and its
// equal host lengths on the host-length twins (FP16 and BF16 at d 128, BF16 at d 64).
TEST(RowAttentionWgmmaGpu, Small) {
  DB_REQUIRE_WGMMA();
  for (int d : {128, 64})
    for (int block_rows : {64, 128, 32}) {
      const DType dtype = block_rows == 32 ? DType::bf16 : DType::fp16;
      RowCase c;
      c.tuning.row_wgmma_rows = dtype == DType::fp16 ? block_rows : 0;
      c.shape = {8, 2, d};
      c.lengths = {300, 3};
      c.page_size = 16;
      c.splits = 3;
      c.path = RowAttentionPath::tensor_core;
      c.tiling = RowAttentionTiling::wgmma;
      c.seed = 9300 + block_rows + d;
      c.items = {{0, 0, 100, 5, 300}, {0, 1, 7, 0, 63}};
      const auto r = testing::run_row_case_as(dtype, c);
      ASSERT_EQ(r.status, cudaSuccess) << describe(c, block_rows, dtype);
      EXPECT_TRUE(r.verification.passed) << describe(c, block_rows, dtype) << ": " << r.verification.summary();
      EXPECT_TRUE(r.plan.wgmma);
      EXPECT_EQ(r.plan.rows_per_block, block_rows);
    }
  // A grouped decode's work list on one-warpgroup blocks (the tiling pinned: a few items), an empty
  // sequence.
  for (const DType dtype : {DType::fp16, DType::bf16}) {
    testing::DecodeCase grouped;
    grouped.shape = {16, 4, 128};
    grouped.lengths = {300, 0, 65, 129};
    grouped.page_size = 16;
    grouped.host_lengths = true;
    grouped.tuning.row_tiling = RowAttentionTiling::wgmma;
    grouped.seed = 9390;
    const auto g = testing::run_decode_case_as(dtype, grouped);
    ASSERT_EQ(g.status, cudaSuccess) << dtype_name(dtype);
    EXPECT_TRUE(g.plan.rows.wgmma) << dtype_name(dtype);
    EXPECT_FALSE(g.plan.rows.work_entries.empty()) << dtype_name(dtype);
    EXPECT_TRUE(g.verification.passed) << dtype_name(dtype) << ": " << g.verification.summary();
  }
  for (const DType dtype : {DType::fp16, DType::bf16})
    for (const DecodeShape shape : {DecodeShape{16, 4, 128}, DecodeShape{16, 2, 64}}) {
      if (dtype == DType::fp16 && shape.head_dim == 64) continue;  // FP16 at d 64: mma.sync
      testing::DecodeCase uniform;
      uniform.shape = shape;
      uniform.lengths = {300, 300};
      uniform.page_size = 16;
      uniform.host_lengths = true;
      uniform.tuning.row_tiling = RowAttentionTiling::wgmma;
      uniform.seed = 9391;
      const std::string what = std::string(dtype_name(dtype)) + " d " + std::to_string(shape.head_dim) + " twin";
      const auto u = testing::run_decode_case_as(dtype, uniform);
      ASSERT_EQ(u.status, cudaSuccess) << what;
      EXPECT_TRUE(u.plan.rows.wgmma) << what;
      EXPECT_EQ(u.plan.rows.uniform_len, 300) << what;
      EXPECT_TRUE(u.verification.passed) << what << ": " << u.verification.summary();
    }
}

}  // namespace
}  // namespace decode_bench
