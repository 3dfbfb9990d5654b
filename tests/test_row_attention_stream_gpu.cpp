// The warpgroup-MMA kernel's streamed grid (RowAttentionPlan::stream_blocks;
// kernels/row_attention_wgmma.cuh, kStream) against the float64 reference: grouped decodes of one
// host length at d 128, FP16 (64-row blocks) and BF16 (32, the packed split), groups 4, 7 and 16,
// lengths of 3 tiles (the fewest it streams), 5.2 and 15.6, contiguous and over shuffled pages of
// 16 and 7; more items than resident blocks: auto streams, one wave of blocks; a pin of a few
// items a block (blocks taking unequal counts), and the pin off; every case launched twice on one
// plan, outputs poisoned first (decode_case.hpp); and streamed plans that do not fit, refused
// before a launch. Skipped with the reason where no GPU exists or the GPU is not compute
// capability 9.0.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include <cuda_fp16.h>

#include "kernels/decode_launch.hpp"  // decode_as_row_attention
#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention.hpp"
#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

std::string describe(DType dtype, const testing::DecodeCase& c) {
  return std::string(dtype_name(dtype)) + " " + std::to_string(c.shape.heads_q) + "/" +
         std::to_string(c.shape.heads_kv) + " x " + std::to_string(c.lengths.size()) + " x " +
         std::to_string(c.lengths[0]) + " page " + std::to_string(c.page_size) + " stream knob " +
         std::to_string(c.tuning.row_stream);
}

testing::DecodeCase uniform_case(DecodeShape shape, int seqs, int len, int page, std::uint64_t seed) {
  testing::DecodeCase c;
  c.shape = shape;
  c.lengths = std::vector<std::int32_t>(static_cast<std::size_t>(seqs), len);
  c.page_size = page;
  c.host_lengths = true;
  c.launches = 2;
  c.seed = seed;
  return c;
}

// More (sequence, KV head) items than two blocks an SM hold, over contiguous K/V and pages: auto
// streams them in one wave of resident blocks, fewer blocks than items.
TEST(RowAttentionStreamGpu, AutoStreamsMoreItemsThanResidentBlocks) {
  DB_REQUIRE_WGMMA();
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  std::uint64_t seed = 9700;
  for (const DType dtype : {DType::fp16, DType::bf16})
    for (const DecodeShape shape : {DecodeShape{32, 8, 128}, DecodeShape{28, 4, 128}, DecodeShape{128, 8, 128}})
      for (const int len : {129, 333, 1000})
        for (const int page : {0, 16}) {
          const int seqs = 2 * sms / shape.heads_kv + 5;
          const testing::DecodeCase c = uniform_case(shape, seqs, len, len == 333 && page == 16 ? 7 : page, ++seed);
          const std::string what = describe(dtype, c);
          const auto r = testing::run_decode_case_as(dtype, c);
          ASSERT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
          EXPECT_TRUE(r.plan.rows.wgmma) << what;
          EXPECT_EQ(r.plan.rows.uniform_len, len) << what;
          EXPECT_EQ(r.plan.rows.splits, 1) << what;
          EXPECT_GT(r.plan.rows.stream_blocks, 0) << what;
          EXPECT_LT(r.plan.rows.stream_blocks, seqs * shape.heads_kv) << what;
          EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
        }
}

// The pin: n items a block (ceil(items / n) blocks, the last ones taking fewer), off, and a length
// of two tiles, which never streams. Splits pinned to 1: the streamed grid takes unsplit items
// only, and the split rule splits a few items.
TEST(RowAttentionStreamGpu, PinnedItemsABlockAndOff) {
  DB_REQUIRE_WGMMA();
  std::uint64_t seed = 9800;
  for (const DType dtype : {DType::fp16, DType::bf16})
    for (const int pinned : {1, 3, 8, -1})
      for (const int page : {0, 16}) {
        testing::DecodeCase c = uniform_case({32, 8, 128}, 7, 500, page, ++seed);
        c.splits = 1;  // 56 items: the split rule would split them, and only unsplit items stream
        c.tuning.row_stream = pinned;
        const std::string what = describe(dtype, c);
        const auto r = testing::run_decode_case_as(dtype, c);
        ASSERT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
        EXPECT_EQ(r.plan.rows.stream_blocks, pinned > 0 ? (56 + pinned - 1) / pinned : 0) << what;
        EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
      }
  testing::DecodeCase two_tiles = uniform_case({32, 8, 128}, 40, 128, 16, ++seed);
  two_tiles.splits = 1;
  two_tiles.tuning.row_stream = 4;
  two_tiles.tuning.fd_short_seq = false;  // 128 tokens: otherwise the short decode's
  const auto t = testing::run_decode_case_as(DType::fp16, two_tiles);
  ASSERT_EQ(t.status, cudaSuccess) << describe(DType::fp16, two_tiles);
  EXPECT_TRUE(t.plan.rows.wgmma);
  EXPECT_EQ(t.plan.rows.stream_blocks, 0) << "two tiles an item are not streamed";
  EXPECT_TRUE(t.verification.passed) << t.verification.summary();
}

// A streamed plan that does not fit its problem or its own fields is refused by run_row_attention
// before any launch: more blocks than items, none, no host length, a split, a cluster merge, two
// row blocks, items of two tiles. The problem's pointers are set (never read), so the refusal is
// the plan's.
TEST(RowAttentionStreamGpu, InconsistentPlansAreRefused) {
  DB_REQUIRE_WGMMA();
  int sms = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), cudaSuccess);
  const int seqs = 2 * sms / 8 + 5;
  const std::vector<std::int32_t> lens(static_cast<std::size_t>(seqs), 333);
  const DecodeProblem decode{{32, 8, 128}, DType::fp16, seqs, 333};
  RowAttentionProblem p = decode_as_row_attention(decode);
  p.host_seq_lens = lens.data();
  RowAttentionPlan plan;
  ASSERT_EQ(plan_row_attention<ContiguousKV<__half>>(p, {RowAttentionPath::tensor_core}, &plan), cudaSuccess);
  ASSERT_GT(plan.stream_blocks, 0);
  p.seq_lens = reinterpret_cast<const std::int32_t*>(16);
  p.q = reinterpret_cast<const float*>(16);
  p.o = reinterpret_cast<float*>(16);
  p.lse = reinterpret_cast<float*>(16);
  ASSERT_FALSE(row_attention_missing_pointers(p).has_value());
  const std::vector<std::pair<const char*, void (*)(RowAttentionPlan&)>> corruptions = {
      {"more blocks than items", [](RowAttentionPlan& q) { q.stream_blocks = 1 << 30; }},
      {"negative blocks", [](RowAttentionPlan& q) { q.stream_blocks = -1; }},
      {"no host length", [](RowAttentionPlan& q) { q.uniform_len = 0; }},
      {"two splits", [](RowAttentionPlan& q) { q.splits = 2; }},
      {"a cluster merge", [](RowAttentionPlan& q) { q.cluster_merge = true; }},
      {"two row blocks", [](RowAttentionPlan& q) { q.row_blocks = 2; }},
      {"items of two tiles", [](RowAttentionPlan& q) { q.uniform_len = 128; }}};
  std::uint8_t workspace_stub = 0;
  for (const auto& [what, corrupt] : corruptions) {
    RowAttentionPlan bad = plan;
    corrupt(bad);
    EXPECT_EQ(run_row_attention<ContiguousKV<__half>>(ContiguousKV<__half>{}, p, bad, &workspace_stub, nullptr),
              cudaErrorInvalidValue)
        << what;
  }
}

// A few blocks of a few items each, under compute-sanitizer (scripts/gpu_check.sh): both storage
// types, contiguous and paged, groups 4 and 16.
TEST(RowAttentionStreamGpu, Small) {
  DB_REQUIRE_WGMMA();
  std::uint64_t seed = 9900;
  for (const DType dtype : {DType::fp16, DType::bf16})
    for (const DecodeShape shape : {DecodeShape{32, 8, 128}, DecodeShape{64, 4, 128}})
      for (const int page : {0, 16}) {
        testing::DecodeCase c = uniform_case(shape, 3, 200, page, ++seed);
        c.splits = 1;
        c.tuning.row_stream = 5;
        const std::string what = describe(dtype, c);
        const auto r = testing::run_decode_case_as(dtype, c);
        ASSERT_EQ(r.status, cudaSuccess) << what << ": " << cudaGetErrorString(r.status);
        EXPECT_EQ(r.plan.rows.stream_blocks, (3 * shape.heads_kv + 4) / 5) << what;
        EXPECT_TRUE(r.verification.passed) << what << ": " << r.verification.summary();
      }
}

}  // namespace
}  // namespace decode_bench
