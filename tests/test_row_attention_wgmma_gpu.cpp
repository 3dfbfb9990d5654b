// The warpgroup-MMA row-attention kernel (kernels/row_attention_wgmma.cuh) against the float64
// reference: FP16 at the head dims it serves (128 and 64, and 96 and 48 on those kernels with the
// tail dims zero), blocks of one and two warpgroups, row counts around 64 and 128 (padding rows,
// padding warpgroups, a second row block), ranges not a multiple of the 64-token tile, starting
// past 0, shorter than one tile, empty, one and three splits (the fused merge), contiguous and
// over shuffled pages of 16 and 7. Outputs poisoned first (row_attention_case.hpp). Skipped with
// the reason where no GPU exists or the GPU is not compute capability 9.0.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "kernels/tuning_policy.hpp"
#include "kernels/row_attention_wgmma.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/row_attention_case.hpp"

namespace decode_bench {
namespace {

using testing::RowCase;

#define DB_REQUIRE_WGMMA()                                                                      \
  do {                                                                                          \
    DB_REQUIRE_GPU();                                                                           \
    if (!wgmma_row_kernel_runs_on(0))                                                           \
      GTEST_SKIP() << "wgmma test skipped: GPU 0 is not compute capability 9.0 or this build "  \
                      "has no sm_90a kernel";                                                   \
  } while (0)

std::string describe(const RowCase& c, int block_rows) {
  std::ostringstream s;
  s << "D=" << c.shape.head_dim << " page=" << c.page_size << " splits=" << c.splits << " block rows " << block_rows
    << " items";
  for (const auto& it : c.items) s << " (rows " << it.rows << ",[" << it.token_begin << "," << it.token_end << "))";
  return s.str();
}

TEST(RowAttentionWgmmaGpu, RowsRangesSplitsAndPages) {
  DB_REQUIRE_WGMMA();
  std::uint64_t seed = 9100;
  for (int block_rows : {64, 128}) {
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
        c.tuning.row_wgmma_rows = block_rows;
        c.seed = ++seed;
        // A long item starting past 0, a short one under a tile, an empty one.
        c.items = {{0, 0, rows, 3, len}, {0, 1, 5, 0, 41}, {1, 1, 9, 2, 2}};
        const auto r = testing::run_row_case_as(DType::fp16, c);
        ASSERT_EQ(r.status, cudaSuccess) << describe(c, block_rows) << ": " << cudaGetErrorString(r.status);
        EXPECT_TRUE(r.verification.passed) << describe(c, block_rows) << ": " << r.verification.summary();
        EXPECT_TRUE(r.plan.wgmma) << describe(c, block_rows);
        EXPECT_FALSE(r.plan.wide) << describe(c, block_rows);
        EXPECT_EQ(r.plan.rows_per_block, block_rows) << describe(c, block_rows);
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

// Small enough for compute-sanitizer memcheck and racecheck: both block sizes and head dims, three
// splits, pages.
TEST(RowAttentionWgmmaGpu, Small) {
  DB_REQUIRE_WGMMA();
  for (int d : {128, 64})
    for (int block_rows : {64, 128}) {
      RowCase c;
      c.tuning.row_wgmma_rows = block_rows;
      c.shape = {8, 2, d};
      c.lengths = {300, 3};
      c.page_size = 16;
      c.splits = 3;
      c.path = RowAttentionPath::tensor_core;
      c.tiling = RowAttentionTiling::wgmma;
      c.seed = 9300 + block_rows + d;
      c.items = {{0, 0, 100, 5, 300}, {0, 1, 7, 0, 63}};
      const auto r = testing::run_row_case_as(DType::fp16, c);
      ASSERT_EQ(r.status, cudaSuccess) << describe(c, block_rows);
      EXPECT_TRUE(r.verification.passed) << describe(c, block_rows) << ": " << r.verification.summary();
      EXPECT_TRUE(r.plan.wgmma);
    }
}

}  // namespace
}  // namespace decode_bench
