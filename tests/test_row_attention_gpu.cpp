// Row attention (kernels/row_attention.hpp) against the float64 reference, both paths, every storage
// type (FP8 E4M3 / E5M2 with realistic magnitudes and per-KV-head scales, held to FP32's tolerance
// since the reference reads the same bytes): grouped-decode items (one item per KV head, <= 16 rows), shared-prefix items (hundreds to
// thousands of rows gathered from many sequences via row_q), ranges starting past 0 and not multiples
// of the tile or page, empty ranges, shuffled pages, one and many splits; and grouped decode through
// plan_decode / run_decode on the tensor-core path. Outputs poisoned before each launch. GPU tests
// skip with the reason where no GPU exists; the planner's refusals are host tests.
#include <gtest/gtest.h>

#include <sstream>

#include "kernels/tuning_policy.hpp"
#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/row_attention_case.hpp"

namespace decode_bench {
namespace {

using testing::RowCase;
using testing::RowCaseItem;

testing::RowCaseResult run_any(DType dtype, const RowCase& c) { return testing::run_row_case_as(dtype, c); }

const char* path_name(RowAttentionPath p) {
  return p == RowAttentionPath::tensor_core ? "tensor_core" : p == RowAttentionPath::simt ? "simt" : "automatic";
}

std::string describe(DType dtype, const RowCase& c) {
  std::ostringstream s;
  s << dtype_name(dtype) << " " << path_name(c.path) << " Hq=" << c.shape.heads_q << " Hkv=" << c.shape.heads_kv
    << " D=" << c.shape.head_dim << " page=" << c.page_size << " splits=" << c.splits << " items";
  for (const auto& it : c.items)
    s << " (" << it.seq << "," << it.kv_head << ",rows " << it.rows << ",[" << it.token_begin << "," << it.token_end
      << "))";
  return s.str();
}

void expect_verified(DType dtype, const RowCase& c) {
  const auto r = run_any(dtype, c);
  ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
  if (c.path != RowAttentionPath::automatic) {
    EXPECT_EQ(r.plan.path, c.path) << describe(dtype, c);
  }
}

// (storage, path) pairs that exist: FP32 only on CUDA cores.
struct Variant {
  DType dtype;
  RowAttentionPath path;
};
constexpr Variant kVariants[] = {{DType::fp32, RowAttentionPath::simt},
                                 {DType::fp16, RowAttentionPath::tensor_core},
                                 {DType::bf16, RowAttentionPath::tensor_core},
                                 {DType::fp8_e4m3, RowAttentionPath::tensor_core},
                                 {DType::fp8_e5m2, RowAttentionPath::tensor_core},
                                 {DType::fp16, RowAttentionPath::simt},
                                 {DType::bf16, RowAttentionPath::simt},
                                 {DType::fp8_e4m3, RowAttentionPath::simt},
                                 {DType::fp8_e5m2, RowAttentionPath::simt}};

TEST(RowAttentionGpu, RowCountsHeadDimsAndRanges) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 100;
  for (const auto& var : kVariants)
    for (int d : {64, 128, 256})
      for (int page : {0, 16, 7})
        for (int rows : {1, 17, 100}) {
          RowCase c;
          c.shape = {8, 2, d};
          c.lengths = {300, 1000};
          c.page_size = page;
          c.path = var.path;
          c.seed = ++seed;
          // begin > 0, lengths not multiples of the tile (64 / 32) or page; an empty range; a range of 1.
          c.items = {{1, 1, rows, 37, 1000}, {0, 0, rows, 5, 300}, {1, 0, 3, 500, 500}, {0, 1, 2, 299, 300}};
          expect_verified(var.dtype, c);
        }
}

TEST(RowAttentionGpu, Splits) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 200;
  for (const auto& var : kVariants)
    for (int splits : {1, 3, 64, 700})  // 700 splits of a 2000-token range: most of them empty
      for (int page : {0, 16}) {
        RowCase c;
        c.shape = {4, 1, 128};
        c.lengths = {2077};
        c.page_size = page;
        c.splits = splits;
        c.path = var.path;
        c.seed = ++seed;
        c.items = {{0, 0, 20, 77, 2077}, {0, 0, 4, 0, 1}};
        expect_verified(var.dtype, c);
      }
}

// Work stealing among an item's splits (the FP16 / BF16 D 128 twins of the narrow and packed
// kernels): pools of a quarter, half and all of the tiles, split counts from 2 to more splits than
// tiles (blocks that find the pool empty write empty partials), ranges not whole tiles or pages,
// empty items, contiguous and paged K/V. The case launches twice on one workspace, so a pool
// counter the last block failed to reset would starve the second launch of tiles and fail
// verification.
TEST(RowAttentionGpu, WorkStealingSplits) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 250;
  // Items of up to 16 rows (the narrow twin), and of up to 8 (BF16's packed twin).
  const std::vector<RowCaseItem> item_sets[] = {
      {{0, 3, 4, 13, 2077}, {1, 5, 16, 0, 700}, {0, 0, 1, 64, 64}, {1, 7, 4, 699, 700}},
      {{0, 2, 8, 0, 2077}, {1, 6, 3, 100, 700}, {1, 1, 8, 0, 0}}};
  for (DType dtype : {DType::fp16, DType::bf16})
    for (const auto& items : item_sets)
      for (double pool : {0.25, 0.5, 1.0})
        for (int splits : {2, 5, 16, 40})
          for (int page : {0, 16}) {
            RowCase c;
            c.shape = {32, 8, 128};
            c.lengths = {2077, 700};
            c.page_size = page;
            c.splits = splits;
            c.path = RowAttentionPath::tensor_core;
            c.steal_pool = pool;
            c.seed = ++seed;
            c.items = items;
            const auto r = run_any(dtype, c);
            ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
            EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << " pool " << pool << ": " << r.verification.summary();
            EXPECT_EQ(r.plan.steal_pool, pool) << describe(dtype, c);
            EXPECT_FALSE(r.plan.wide);
            EXPECT_EQ(r.plan.packed, dtype == DType::bf16 && items.size() == 3) << describe(dtype, c);
          }
}

// The shared-prefix phase: one item per KV head over a prefix, N x G rows of many sequences.
TEST(RowAttentionGpu, SharedPrefixManyRows) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 300;
  // 1000+ rows for the paths' main storage types only: the float64 reference of each row over the
  // prefix dominates the test's time (all variants x all row counts took 120 s on the H100 host).
  // FP8 gets its many rows from the 256-row automatic-split cases below.
  for (const auto& var : kVariants)
    for (int page : {0, 16})
      for (int rows : {64, 1031}) {
        if (rows > 64 && (page == 0 || var.dtype == DType::bf16 || dtype_is_fp8(var.dtype))) continue;
        RowCase c;
        c.shape = {8, 2, 128};
        c.lengths = std::vector<std::int32_t>(130, 1);
        c.lengths[0] = 1531;  // the prefix lives in sequence 0's pages; rows come from all 130 sequences
        c.page_size = page;
        c.path = var.path;
        c.seed = ++seed;
        c.items = {{0, 0, rows, 0, 1531}, {0, 1, rows / 3, 0, 1024}};
        expect_verified(var.dtype, c);
      }
  // Automatic splits with a long prefix and many rows; d = 64 and 256.
  for (int d : {64, 256}) {
    RowCase c;
    c.shape = {4, 1, d};
    c.lengths = {8191, 5};
    c.page_size = 16;
    c.seed = ++seed;
    c.items = {{0, 0, 256, 0, 8191}};
    expect_verified(DType::fp16, c);
    expect_verified(DType::bf16, c);
    expect_verified(DType::fp8_e4m3, c);
    expect_verified(DType::fp8_e5m2, c);
  }
}

// The two tensor-core tilings on the same cases: narrow (4 warps x 16 rows) and wide (8 warps x 2
// row tiles, 64 / 128 / 256 rows a block by rows and range length, FP16 / BF16 at d <= 128;
// d = 256 must fall back to narrow). Row counts around the block and warp sizes, an item of few rows beside one of many (padding
// warps and row blocks), one and three splits, ranges not a multiple of the 64-token tile.
TEST(RowAttentionGpu, WideAndNarrowTilings) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 700;
  for (DType dtype : {DType::fp16, DType::bf16})
    for (int d : {64, 128, 256})
      for (RowAttentionTiling tiling : {RowAttentionTiling::narrow, RowAttentionTiling::wide})
        for (int rows : {17, 64, 65, 129, 256, 300}) {
          RowCase c;
          c.shape = {8, 2, d};
          // Ranges of 33 tiles and more take 128 / 256-row wide blocks, shorter ones 64-row blocks.
          const int len = rows > 128 ? 2100 : 700;
          c.lengths = std::vector<std::int32_t>(40, 3);
          c.lengths[0] = len;
          c.page_size = rows % 2 == 0 ? 16 : 0;
          c.splits = rows % 3 == 0 ? 3 : 1;
          c.path = RowAttentionPath::tensor_core;
          c.tiling = tiling;
          c.seed = ++seed;
          c.items = {{0, 0, rows, 3, len}, {0, 1, 5, 0, 641}};
          const auto r = run_any(dtype, c);
          ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
          EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << " rows " << rows << ": " << r.verification.summary();
          const bool wide = tiling == RowAttentionTiling::wide && d <= 128;
          EXPECT_EQ(r.plan.wide, wide) << describe(dtype, c) << " rows " << rows;
          if (wide) {
            EXPECT_EQ(r.plan.rows_per_block, rows <= 64 || len < 32 * 64 ? 64 : rows <= 128 ? 128 : 256);
          }
        }
}

// One wide case per 16-bit storage type (100 rows: a 2 x 4 warp block with a padding warp, three
// splits and the fused merge): small enough for compute-sanitizer memcheck and racecheck.
TEST(RowAttentionGpu, WideTilingSmall) {
  DB_REQUIRE_GPU();
  for (DType dtype : {DType::fp16, DType::bf16}) {
    RowCase c;
    c.shape = {8, 2, 128};
    c.lengths = std::vector<std::int32_t>(40, 3);
    c.lengths[0] = 700;
    c.page_size = 16;
    c.splits = 3;
    c.path = RowAttentionPath::tensor_core;
    c.tiling = RowAttentionTiling::wide;
    c.seed = 800;
    c.items = {{0, 0, 100, 3, 700}, {0, 1, 5, 0, 641}};
    const auto r = run_any(dtype, c);
    ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
    EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
    EXPECT_TRUE(r.plan.wide) << describe(dtype, c);
  }
}

// FP8 on the tensor cores with the fused split merge, both row layouts of the block (1 x 4 and
// 4 x 1 warps) and the narrowest and widest rows: small enough for compute-sanitizer.
TEST(RowAttentionGpu, Fp8SplitsAndPages) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 500;
  for (DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2})
    for (int d : {64, 256}) {
      RowCase c;
      c.shape = {8, 2, d};
      c.lengths = {300, 1000};
      c.page_size = 7;
      c.splits = 3;
      c.path = RowAttentionPath::tensor_core;
      c.seed = ++seed;
      c.items = {{1, 1, 4, 37, 1000}, {0, 0, 70, 5, 300}, {1, 0, 3, 500, 500}};
      expect_verified(dtype, c);
    }
}

// BF16 / FP8 blocks of at most 8 rows at D 128 take the packed-split kernel (q and P lo parts in
// rows 8..15 of one mma): 8 and 9 rows either side of the switch, splits, pages of 1, 3 and 100
// tokens, ranges that start past 0 and off the tile; the knob DECODE_BENCH_ROW_PACKED_SPLIT=off the two-mma
// kernel on the same cases.
TEST(RowAttentionGpu, PackedSplitRowsAroundTheSwitch) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 600;
  for (const char* knob : {"auto", "off"})
    for (DType dtype : {DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2, DType::fp16})
      for (int page : {1, 3, 100, 0})
        for (int rows : {1, 5, 8, 9}) {
          RowCase c;
          c.tuning.row_packed_split = std::string(knob) == "auto";  // DECODE_BENCH_ROW_PACKED_SPLIT
          c.shape = {16, 2, 128};
          c.lengths = {700, 257};
          c.page_size = page;
          c.splits = rows == 5 ? 3 : 0;
          c.path = RowAttentionPath::tensor_core;
          c.seed = ++seed;
          c.items = {{0, 1, rows, 3, 700}, {1, 0, rows, 0, 257}, {0, 0, rows, 130, 194}};
          const auto r = run_any(dtype, c);
          ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
          EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << " " << knob << ": " << r.verification.summary();
          const bool split_storage = dtype != DType::fp16;
          EXPECT_EQ(r.plan.packed, split_storage && rows <= 8 && std::string(knob) == "auto")
              << describe(dtype, c) << " " << knob;
        }
}

TEST(RowAttentionGpu, IdentityRowsAndNoItems) {
  DB_REQUIRE_GPU();
  RowCase c;
  c.shape = {16, 2, 128};
  c.lengths = {129};
  c.identity_rows = true;
  c.items = {{0, 0, 8, 0, 129}, {0, 1, 8, 64, 129}};
  expect_verified(DType::fp16, c);
  c.items.clear();  // nothing to do: plans and runs, writes nothing
  expect_verified(DType::bf16, c);
}

// Grouped decode through plan_decode / run_decode: the tensor-core path at any group and MQA.

void expect_decode_tc(DType dtype, const testing::DecodeCase& c) {
  const auto r = testing::run_decode_case_as(dtype, c);
  const std::string what = std::string(dtype_name(dtype)) + " Hq=" + std::to_string(c.shape.heads_q) + " Hkv=" +
                           std::to_string(c.shape.heads_kv) + " D=" + std::to_string(c.shape.head_dim) + " page=" +
                           std::to_string(c.page_size) + " splits=" + std::to_string(c.splits);
  ASSERT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
  EXPECT_EQ(r.plan.path, DecodePath::tensor_core) << what;
  EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
}

TEST(RowAttentionGpu, GroupedDecodeTensorCorePath) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 400;
  // FP16/BF16 at every group of the list, FP8 (pinned path) at groups 1 / 3 / 4 / 8 with per-head
  // scales and one per-tensor scale; head dims, contiguous and shuffled pages.
  const auto groups_of = [](DType dtype) {
    return dtype_is_fp8(dtype) ? std::vector<int>{1, 3, 4, 8} : std::vector<int>{1, 3, 4, 5, 7, 8, 12, 16};
  };
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (int group : groups_of(dtype))
      for (int d : {64, 128, 256})
        for (int page : {0, 16}) {
          testing::DecodeCase c;
          c.shape = {2 * group, 2, d};
          c.lengths = {0, 1, 77, 1000};
          c.page_size = page;
          c.path = DecodePath::tensor_core;
          c.seed = ++seed;
          c.launches = 2;
          c.per_tensor_scale = dtype_is_fp8(dtype) && group == 8 && d == 128;
          expect_decode_tc(dtype, c);
        }
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (int splits : {0, 1, 9}) {
      testing::DecodeCase mqa;  // MQA: 64 query heads on one KV head
      mqa.shape = {64, 1, 128};
      mqa.lengths = {4099, 3};
      mqa.page_size = 16;
      mqa.splits = splits;
      mqa.seed = ++seed;
      expect_decode_tc(dtype, mqa);  // automatic: MQA takes the tensor-core path
    }
}

// Host side (no GPU): refusals name the offending value.
TEST(RowAttentionUnsupported, NamesTheOffendingValue) {
  const auto reason = [](const RowAttentionProblem& p) {
    const auto r = row_attention_unsupported_reason(p);
    return r ? *r : "<supported>";
  };
  static const RowAttentionItem item{};
  static float buf[4];
  RowAttentionProblem ok;
  ok.shape = {8, 2, 128};
  ok.num_items = 1;
  ok.items = &item;
  ok.num_rows = 1;
  ok.max_item_rows = 1;
  ok.max_item_tokens = 10;
  ok.q = buf;
  ok.o = buf;
  ok.lse = buf;
  EXPECT_EQ(reason(ok), "<supported>");
  RowAttentionProblem p = ok;
  p.shape.head_dim = 72;
  EXPECT_EQ(reason(p),
            "row attention: head_dim 72 is not supported (supported: multiples of 16 from 16 to 256; kernels are "
            "compiled for 64, 128 and 256, smaller head dims run on the next one up with the tail dims masked)");
  p = ok;
  p.max_item_rows = 0;
  EXPECT_EQ(reason(p), "row attention: max_item_rows must be >= 1");
  p = ok;
  p.max_item_tokens = std::int64_t{1} << 31;
  EXPECT_EQ(reason(p), "row attention: max_item_tokens must be in [0, 2^31)");
  // Pointers are a run-time matter: planning from counts alone is allowed, running without them is not.
  const auto missing = [](const RowAttentionProblem& q) {
    return row_attention_missing_pointers(q).value_or("<complete>");
  };
  EXPECT_EQ(missing(ok), "<complete>");
  p = ok;
  p.items = nullptr;
  EXPECT_EQ(reason(p), "<supported>");
  EXPECT_EQ(missing(p), "row attention: items (or seq_lens for decode items) must be set");
  p = ok;
  p.o = nullptr;
  EXPECT_EQ(reason(p), "<supported>");
  EXPECT_EQ(missing(p), "row attention: q, o and lse must be set");
  p = ok;
  p.shape.heads_q = 7;
  EXPECT_EQ(reason(p), "heads_q must be a multiple of heads_kv");
}

TEST(RowAttentionUnsupported, DecodeGroupsOnTheTensorCorePath) {
  const DecodeProblem fp16{{28, 4, 128}, DType::fp16, 4, 4096};  // Qwen2.5-7B: group 7
  EXPECT_FALSE(decode_unsupported_reason(fp16).has_value());
  EXPECT_TRUE(decode_prefers_tensor_core(fp16));
  DecodeProblem p = fp16;
  p.kv_dtype = DType::fp32;
  EXPECT_EQ(decode_unsupported_reason(p).value_or("<supported>"),
            "GQA group 7 has no compiled kernel (supported: 1, 2, 4, 8; with FP16/BF16/FP8 storage also 3-16, and MQA "
            "with up to 128 query heads)");
  p = fp16;
  p.shape = {128, 1, 128};  // MQA, 128 query heads
  EXPECT_FALSE(decode_unsupported_reason(p).has_value());
  p.shape = {256, 1, 128};
  EXPECT_TRUE(decode_unsupported_reason(p).has_value());
  p.shape = {48, 2, 128};  // group 24
  EXPECT_TRUE(decode_unsupported_reason(p).has_value());
  p.shape = {8, 4, 128};  // group 2 stays on the CUDA-core kernel
  EXPECT_FALSE(decode_prefers_tensor_core(p));
  p.shape = {32, 8, 128};  // group 4 takes the tensor-core path
  EXPECT_TRUE(decode_prefers_tensor_core(p));
  // FP8: the tensor-core path can take groups 1-16 and MQA; automatically only where the CUDA-core
  // kernel has no tiling.
  for (DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    DecodeProblem f{{32, 8, 128}, dtype, 16, 4096};
    EXPECT_TRUE(decode_tensor_core_supported(f));
    EXPECT_FALSE(decode_prefers_tensor_core(f));  // group 4: flash-decode's CUDA-core kernel
    f.shape = {28, 4, 128};  // group 7
    EXPECT_FALSE(decode_unsupported_reason(f).has_value());
    EXPECT_TRUE(decode_prefers_tensor_core(f));
    f.shape = {64, 1, 128};  // MQA
    EXPECT_TRUE(decode_prefers_tensor_core(f));
  }
}

}  // namespace
}  // namespace decode_bench
