// The warpgroup-MMA row-attention kernel (kernels/row_attention_wgmma.cuh) against the float64
// reference: FP16 at the head dims it serves (128, and 80 / 96 / 112 on the same kernel with the
// tail dims zero), blocks of one and two warpgroups, row counts around 64 and 128 (padding rows,
// padding warpgroups, a second row block), ranges not a multiple of the 64-token tile, starting
// past 0, shorter than one tile, empty, one and three splits (the fused merge), contiguous and
// over shuffled pages of 16 and 7. Outputs poisoned first (row_attention_case.hpp). Skipped with
// the reason where no GPU exists or the GPU is not compute capability 9.0.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "kernels/planner_tuning.hpp"
#include "kernels/row_attention_wgmma.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/row_attention_case.hpp"
#include "tests/scoped_env.hpp"

namespace decode_bench {
namespace {

using testing::RowCase;
using testing::ScopedEnv;

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
    const ScopedEnv rows_env(kRowWgmmaRowsEnv, std::to_string(block_rows).c_str());
    for (int d : {128, 96})
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

// The automatic choice: FP16 items of more than 32 rows at head dim 128 take it, 64-row blocks up
// to 64 rows and 128 above; BF16, head dim 64 and items of at most 32 rows do not.
TEST(RowAttentionWgmmaGpu, AutomaticChoice) {
  DB_REQUIRE_WGMMA();
  struct Want {
    DType dtype;
    int d, rows;
    bool wgmma;
    int block_rows;
  };
  for (const Want& w : {Want{DType::fp16, 128, 256, true, 128}, Want{DType::fp16, 128, 64, true, 64},
                        Want{DType::fp16, 128, 33, true, 64}, Want{DType::fp16, 128, 32, false, 0},
                        Want{DType::bf16, 128, 256, false, 0}, Want{DType::fp16, 64, 256, false, 0}}) {
    RowCase c;
    c.shape = {8, 2, w.d};
    c.lengths = {3000, 3};
    c.page_size = 16;
    c.seed = 9200 + w.rows;
    c.items = {{0, 0, w.rows, 0, 3000}};
    const auto r = testing::run_row_case_as(w.dtype, c);
    ASSERT_EQ(r.status, cudaSuccess) << dtype_name(w.dtype) << " D " << w.d << " rows " << w.rows;
    EXPECT_TRUE(r.verification.passed) << dtype_name(w.dtype) << " D " << w.d << " rows " << w.rows << ": "
                                       << r.verification.summary();
    EXPECT_EQ(r.plan.wgmma, w.wgmma) << dtype_name(w.dtype) << " D " << w.d << " rows " << w.rows;
    if (w.wgmma) {
      EXPECT_EQ(r.plan.rows_per_block, w.block_rows) << "rows " << w.rows;
    }
  }
}

// Small enough for compute-sanitizer memcheck and racecheck: both block sizes, three splits, pages.
TEST(RowAttentionWgmmaGpu, Small) {
  DB_REQUIRE_WGMMA();
  for (int block_rows : {64, 128}) {
    const ScopedEnv rows_env(kRowWgmmaRowsEnv, std::to_string(block_rows).c_str());
    RowCase c;
    c.shape = {8, 2, 128};
    c.lengths = {300, 3};
    c.page_size = 16;
    c.splits = 3;
    c.path = RowAttentionPath::tensor_core;
    c.tiling = RowAttentionTiling::wgmma;
    c.seed = 9300 + block_rows;
    c.items = {{0, 0, 100, 5, 300}, {0, 1, 7, 0, 63}};
    const auto r = testing::run_row_case_as(DType::fp16, c);
    ASSERT_EQ(r.status, cudaSuccess) << describe(c, block_rows);
    EXPECT_TRUE(r.verification.passed) << describe(c, block_rows) << ": " << r.verification.summary();
    EXPECT_TRUE(r.plan.wgmma);
  }
}

}  // namespace
}  // namespace decode_bench
