// Host side of the short-sequence decode path (no GPU needed): which problems the planner sends to
// it, what an explicit choice it cannot run is refused with, the group's split over blocks, and
// the shared-memory layout the kernel is launched with.
#include <string>

#include <gtest/gtest.h>

#include "kernels/decode_launch.hpp"
#include "kernels/short_decode_layout.hpp"

namespace decode_bench {
namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

DecodeProblem short_problem(DecodeShape shape, DType dtype, std::int64_t max_len, int num_seqs = 64) {
  DecodeProblem p;
  p.shape = shape;
  p.kv_dtype = dtype;
  p.num_seqs = num_seqs;
  p.max_len = max_len;
  return p;
}

constexpr int kSms = 132;  // an H100 SXM

// The automatic choice over paged K/V on kSms SMs (the first stage's rule reads neither).
bool prefers(const DecodeProblem& p, const DecodeOptions& options, bool paged = true) {
  return decode_prefers_short(p, options, paged, kSms);
}

// Plain decodes up to kShortFirstStageLen tokens on FP16 / BF16 / FP8 at every group (MHA, groups
// 1-2, GQA and MQA) go to the short path; longer ones (but see the long stage below), FP32,
// more than one query token and pinned choices do not (the other variants:
// tests/test_short_decode_variant_routing.cpp).
TEST(ShortDecodeRouting, PlannerTakesThePathForShortPlainDecodes) {
  const DecodeOptions automatic;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (DecodeShape shape : {DecodeShape{32, 8, 128}, DecodeShape{24, 8, 64}, DecodeShape{71, 1, 64},
                              DecodeShape{40, 8, 80}, DecodeShape{128, 8, 256}, DecodeShape{128, 1, 128},
                              DecodeShape{32, 32, 128}, DecodeShape{32, 16, 128}, DecodeShape{8, 8, 64}})
      for (std::int64_t len : {0, 1, 32, 64}) {
        const DecodeProblem p = short_problem(shape, dtype, len);
        // Up to 64 tokens: paged or not, on any GPU.
        EXPECT_TRUE(prefers(p, automatic) && prefers(p, automatic, false) && decode_prefers_short(p, automatic, true, 1))
            << dtype_name(dtype) << " " << shape.heads_q << "/" << shape.heads_kv << " d " << shape.head_dim << " x " << len;
        EXPECT_EQ(decode_short_unsupported_reason(p, automatic), std::nullopt);
      }
  EXPECT_FALSE(prefers(short_problem({32, 32, 128}, DType::fp16, kShortMaxLen + 1), automatic));
  EXPECT_FALSE(prefers(short_problem({32, 32, 128}, DType::fp32, 32), automatic));
  DecodeOptions pinned;
  pinned.splits = 2;
  EXPECT_FALSE(prefers(short_problem({32, 32, 128}, DType::fp16, 32), pinned));
  // One token past the limit: the split-K / row paths.
  EXPECT_FALSE(prefers(short_problem({32, 8, 128}, DType::fp16, kShortMaxLen + 1), automatic));
  // FP32 storage, a group the tensor-core path has no kernel for (MQA past 128 heads), q_len 2.
  EXPECT_FALSE(prefers(short_problem({32, 8, 128}, DType::fp32, 32), automatic));
  EXPECT_FALSE(prefers(short_problem({136, 1, 128}, DType::fp16, 32), automatic));
  DecodeProblem variant = short_problem({32, 8, 128}, DType::fp16, 32);
  variant.variant.q_len = 2;
  EXPECT_FALSE(prefers(variant, automatic));
  // Pinned choices of the other paths keep them: splits, heads per block, the separate merge, a
  // tiling, the knob off.
  const DecodeProblem p = short_problem({32, 8, 128}, DType::fp16, 32);
  EXPECT_FALSE(prefers(p, {.splits = 1}));
  EXPECT_FALSE(prefers(p, {.heads_per_block = 1}));
  EXPECT_FALSE(prefers(p, {.fused_merge = false}));
  DecodeOptions tiling;
  tiling.tuning.fd_tiling = TilingOverride::short_batch;
  EXPECT_FALSE(prefers(p, tiling));
  DecodeOptions row_tiling;
  row_tiling.tuning.row_tiling = RowAttentionTiling::narrow;
  EXPECT_FALSE(prefers(p, row_tiling));
  DecodeOptions off;
  off.tuning.fd_short_seq = false;
  EXPECT_FALSE(prefers(p, off));
  // An explicit splits of 1 is no split: the pinned path takes it.
  EXPECT_EQ(decode_short_unsupported_reason(p, {.splits = 1}), std::nullopt);
}

// An explicit short_seq that the kernel cannot run is refused with the reason (and by plan_decode,
// before any CUDA call).
TEST(ShortDecodeRouting, ExplicitPathItCannotRunIsRefusedWithTheReason) {
  const DecodeOptions automatic;
  const auto reason = [](const DecodeProblem& p, const DecodeOptions& o) {
    const auto why = decode_short_unsupported_reason(p, o);
    return why ? *why : std::string("(none)");
  };
  EXPECT_TRUE(contains(reason(short_problem({32, 8, 128}, DType::fp16, 129), automatic), "max_len 129 is above its 128"));
  // Beyond 64 tokens rows of at most 256 bytes: d 256 at 2 bytes is refused there, not at 64 or at FP8.
  EXPECT_TRUE(contains(reason(short_problem({32, 8, 256}, DType::bf16, 65), automatic), "512-byte rows"));
  EXPECT_EQ(decode_short_unsupported_reason(short_problem({32, 8, 256}, DType::bf16, 64), automatic), std::nullopt);
  EXPECT_EQ(decode_short_unsupported_reason(short_problem({32, 8, 256}, DType::fp8_e4m3, 128), automatic), std::nullopt);
  EXPECT_EQ(decode_short_unsupported_reason(short_problem({32, 8, 128}, DType::fp16, 128), automatic), std::nullopt);
  EXPECT_TRUE(contains(reason(short_problem({32, 8, 128}, DType::fp32, 16), automatic), "dtype fp32"));
  EXPECT_TRUE(contains(reason(short_problem({34, 2, 128}, DType::fp16, 16), automatic), "GQA group 17"));
  EXPECT_TRUE(contains(reason(short_problem({32, 8, 72}, DType::fp16, 16), automatic), "head_dim 72"));
  EXPECT_TRUE(contains(reason(short_problem({32, 8, 128}, DType::fp16, 16), {.splits = 4}), "splits 4"));
  EXPECT_TRUE(contains(reason(short_problem({32, 8, 128}, DType::fp16, 16), {.heads_per_block = 2}), "heads_per_block 2"));
  // The attention variants: tests/test_short_decode_variant_routing.cpp.

  DecodeOptions pinned;
  pinned.path = DecodePath::short_seq;
  DecodePlan plan;
  EXPECT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode,
                                              short_problem({32, 8, 128}, DType::fp16, 129), pinned, &plan),
            cudaErrorInvalidValue);
  EXPECT_EQ(plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, short_problem({32, 8, 256}, DType::fp16, 100),
                                         pinned, &plan),
            cudaErrorInvalidValue);
  EXPECT_EQ(plan_decode<PagedKV<float>>(DecodeKernel::flash_decode, short_problem({32, 8, 128}, DType::fp32, 16),
                                        pinned, &plan),
            cudaErrorInvalidValue);
  pinned.splits = 3;
  EXPECT_EQ(plan_decode<PagedKV<__nv_bfloat16>>(DecodeKernel::flash_decode,
                                                short_problem({32, 8, 128}, DType::bf16, 16), pinned, &plan),
            cudaErrorInvalidValue);
}

// The launch takes a plan's layout as it is, so it refuses one whose staged rows are not a multiple
// of its storage type's row multiple (FP16's P V on tensor cores reads 16 rows a step): a plan for
// 33 tokens with 36 rows is refused in FP16, before any CUDA call. The same plan with a layout of
// the planner's rule differs only in rows.
TEST(ShortDecodeRouting, LaunchRefusesRowsOffTheStorageTypesMultiple) {
  const DecodeProblem p = short_problem({32, 8, 128}, DType::fp16, 33);
  DecodePlan plan;
  plan.kernel = DecodeKernel::flash_decode;
  plan.path = DecodePath::short_seq;
  plan.query_heads_per_block = 4;
  plan.tile_tokens = 33;
  plan.short_layout = short_decode_layout(128, 2, 4, 33, kShortRowMultiple);
  const ShortDecodeLayout planned = short_decode_layout(128, 2, 4, 33, kShortMmaRowMultiple);
  EXPECT_EQ(plan.short_layout.rows, 36);
  EXPECT_EQ(planned.rows, 48);
  EXPECT_EQ(planned.chunks, plan.short_layout.chunks);
  EXPECT_EQ(planned.heads, plan.short_layout.heads);
  EXPECT_EQ(run_decode<PagedKV<__half>>(PagedKV<__half>{}, p, plan, nullptr, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(run_decode<ContiguousKV<__half>>(ContiguousKV<__half>{}, p, plan, nullptr, nullptr), cudaErrorInvalidValue);
}

// The group's split over blocks: whole groups where the (sequence, KV head) pairs already give
// kShortTargetBlocksPerSm blocks an SM; else just enough blocks, each but the last at least a head
// a warp; never more than kShortMaxBlockHeads heads a block.
TEST(ShortDecodeRouting, GroupSplitOverBlocks) {
  EXPECT_EQ(short_decode_heads_per_block(4, 64 * 8, kSms), 4);   // the short point: 512 blocks, one wave
  EXPECT_EQ(short_decode_heads_per_block(1, 1, kSms), 1);
  EXPECT_EQ(short_decode_heads_per_block(8, 1, kSms), 4);        // two blocks of four
  EXPECT_EQ(short_decode_heads_per_block(8, 4096, kSms), 8);
  EXPECT_EQ(short_decode_heads_per_block(16, 4096, kSms), 16);
  EXPECT_EQ(short_decode_heads_per_block(71, 64, kSms), 8);      // 9 blocks a pair: 576 blocks
  EXPECT_EQ(short_decode_heads_per_block(71, 4096, kSms), 15);   // the fewest blocks: 5 of at most 16
  EXPECT_EQ(short_decode_heads_per_block(128, 1, kSms), 4);      // 32 blocks of a warp's head each
  EXPECT_EQ(short_decode_heads_per_block(13, 20, kSms), 5);      // 5, 5 and 3 heads
  EXPECT_EQ(short_decode_heads_per_block(7, 1, kSms), 7);        // one block: two would leave warps idle
  for (int group = 1; group <= 128; ++group)
    for (std::int64_t items : {1, 7, 64, 512, 100000}) {
      const int heads = short_decode_heads_per_block(group, items, kSms);
      EXPECT_GE(heads, 1);
      EXPECT_LE(heads, std::min(group, kShortMaxBlockHeads)) << group << " " << items;
      EXPECT_GE(heads, std::min(group, kShortWarps)) << group << " " << items;
      const int blocks = (group + heads - 1) / heads;
      EXPECT_GE(group - (blocks - 1) * heads, 1) << group << " " << items;  // no empty block
    }
}

// 65-128 tokens (the long stage). auto: paged K/V, where the row-attention path would run the batch
// (FP16 / BF16 at groups of 3 or more, FP8 at the groups without a CUDA-core tiling), and no more
// blocks than SMs; DECODE_BENCH_FD_SHORT_MAX_LEN=64 never, =128 wherever the kernel runs them.
TEST(ShortDecodeRouting, LongStageRoutingAndItsKnob) {
  const DecodeOptions automatic;
  DecodeOptions up_to_64, up_to_128;
  up_to_64.tuning.fd_short_max_len = 64;
  up_to_128.tuning.fd_short_max_len = 128;
  for (std::int64_t len : {65, 100, 128})
    for (DType dtype : {DType::fp16, DType::bf16}) {
      // The variants point: 16 x 128 tokens, 32 / 8 heads: 128 blocks of the whole group.
      const DecodeProblem point = short_problem({32, 8, 128}, dtype, len, 16);
      EXPECT_TRUE(prefers(point, automatic)) << len;
      EXPECT_FALSE(prefers(point, automatic, false)) << len;  // contiguous: the row path
      EXPECT_FALSE(prefers(point, up_to_64)) << len;
      EXPECT_TRUE(prefers(point, up_to_128, false)) << len;
      // Between one and two blocks an SM: up to 96 tokens only, on either layout.
      EXPECT_EQ(decode_prefers_short(point, automatic, true, 127), len <= 96) << len;  // 128 blocks, 127 SMs
      EXPECT_EQ(prefers(short_problem({32, 8, 128}, dtype, len, 17), automatic), len <= 96) << len;  // 136
      EXPECT_EQ(prefers(short_problem({32, 8, 128}, dtype, len, 33), automatic, false), len <= 96) << len;  // 264
      EXPECT_TRUE(prefers(short_problem({32, 8, 128}, dtype, len, 17), up_to_128)) << len;
      // More than two an SM: every length, both layouts.
      EXPECT_TRUE(prefers(short_problem({32, 8, 128}, dtype, len, 34), automatic)) << len;  // 272 blocks
      EXPECT_TRUE(prefers(short_problem({32, 8, 128}, dtype, len, 64), automatic)) << len;
      EXPECT_TRUE(prefers(short_problem({32, 8, 128}, dtype, len, 64), automatic, false)) << len;
      EXPECT_FALSE(prefers(short_problem({32, 8, 128}, dtype, len, 64), up_to_64, false)) << len;
      // MHA and group 2: the split-K path (not measured against it here); the knob's 128 takes them.
      EXPECT_FALSE(prefers(short_problem({32, 32, 128}, dtype, len, 4), automatic)) << len;
      EXPECT_FALSE(prefers(short_problem({32, 16, 128}, dtype, len, 8), automatic)) << len;
      EXPECT_TRUE(prefers(short_problem({32, 32, 128}, dtype, len, 64), up_to_128, false)) << len;
      // Groups 8 and 16, and MQA 32 / 1 over 16 sequences: the group split over 8 blocks of 4.
      EXPECT_TRUE(prefers(short_problem({64, 8, 128}, dtype, len, 16), automatic)) << len;
      EXPECT_TRUE(prefers(short_problem({128, 8, 64}, dtype, len, 16), automatic)) << len;
      EXPECT_TRUE(prefers(short_problem({32, 1, 128}, dtype, len, 16), automatic)) << len;
      // d 256 at 2 bytes cannot run beyond 64 tokens, whatever the knob.
      EXPECT_FALSE(prefers(short_problem({32, 8, 256}, dtype, len, 16), up_to_128)) << len;
    }
  // FP8: at group 4 the CUDA-core path keeps it; at group 3 (no CUDA-core tiling) the row path
  // would take it, so the short path does; d 256 FP8 rows are 256 bytes.
  EXPECT_FALSE(prefers(short_problem({32, 8, 128}, DType::fp8_e4m3, 100, 16), automatic));
  EXPECT_TRUE(prefers(short_problem({24, 8, 128}, DType::fp8_e4m3, 100, 16), automatic));
  EXPECT_TRUE(prefers(short_problem({24, 8, 256}, DType::fp8_e5m2, 128, 16), automatic));
  EXPECT_TRUE(prefers(short_problem({32, 8, 128}, DType::fp8_e4m3, 100, 16), up_to_128, false));
  // 129 tokens: never; the knob does not reach the first stage; DECODE_BENCH_FD_SHORT_SEQ=off wins.
  EXPECT_FALSE(prefers(short_problem({32, 8, 128}, DType::fp16, 129, 16), up_to_128));
  EXPECT_TRUE(prefers(short_problem({32, 32, 128}, DType::fp16, 64), up_to_64, false));
  DecodeOptions off = up_to_128;
  off.tuning.fd_short_seq = false;
  EXPECT_FALSE(prefers(short_problem({32, 8, 128}, DType::fp16, 128, 16), off));
  DecodeOptions pinned = up_to_128;
  pinned.splits = 2;
  EXPECT_FALSE(prefers(short_problem({32, 8, 128}, DType::fp16, 128, 16), pinned));
}

// The long stage's group split: parts only over SMs the (sequence, KV head) pairs leave idle,
// within the first stage's bounds (at most 16 heads a block, at least 4 but in the last).
TEST(ShortDecodeRouting, LongStageGroupSplit) {
  EXPECT_EQ(short_decode_long_heads_per_block(4, 16 * 8, kSms), 4);   // the variants point: 128 blocks
  EXPECT_EQ(short_decode_long_heads_per_block(8, 16 * 8, kSms), 8);   // one part: 128 blocks
  EXPECT_EQ(short_decode_long_heads_per_block(8, 64, kSms), 4);       // two parts: 128 blocks
  EXPECT_EQ(short_decode_long_heads_per_block(32, 16, kSms), 4);      // MQA: 8 parts, 128 blocks
  EXPECT_EQ(short_decode_long_heads_per_block(71, 16, kSms), 9);      // 8 parts of at most 9
  EXPECT_EQ(short_decode_long_heads_per_block(16, 1000, kSms), 16);   // the fewest blocks
  EXPECT_EQ(short_decode_long_heads_per_block(128, 1000, kSms), 16);
  EXPECT_EQ(short_decode_long_heads_per_block(1, 1, kSms), 1);
  for (int group = 1; group <= 128; ++group)
    for (std::int64_t items : {1, 7, 64, 132, 133, 512, 100000}) {
      const int heads = short_decode_long_heads_per_block(group, items, kSms);
      EXPECT_GE(heads, std::min(group, kShortWarps)) << group << " " << items;
      EXPECT_LE(heads, std::min(group, kShortMaxBlockHeads)) << group << " " << items;
      const std::int64_t parts = (group + heads - 1) / heads;
      EXPECT_GE(group - (parts - 1) * heads, 1) << group << " " << items;  // no empty block
      // No more blocks than SMs unless the fewest parts already give more.
      const std::int64_t fewest = (group + kShortMaxBlockHeads - 1) / kShortMaxBlockHeads;
      EXPECT_LE(items * parts, std::max<std::int64_t>(kSms, items * fewest)) << group << " " << items;
    }
  // short_decode_block_heads picks the stage's rule by max_len.
  EXPECT_EQ(short_decode_block_heads(short_problem({64, 8, 128}, DType::fp16, 64, 16), kSms),
            short_decode_heads_per_block(8, 128, kSms));
  EXPECT_EQ(short_decode_block_heads(short_problem({64, 8, 128}, DType::fp16, 65, 16), kSms),
            short_decode_long_heads_per_block(8, 128, kSms));
}

// Offsets are 16-byte aligned, regions do not overlap, the staged rows are the capacity rounded up
// to the row multiple (P V reads 4 tokens at a time on CUDA cores, 16 on tensor cores), the pitch is
// an odd number of chunks (the scores' token-a-lane reads and the ldmatrix rows hit 8 different bank
// groups), the short point's block (and the MHA point's) is small enough for 8 blocks an SM, and
// the long stage's blocks for 2-3.
TEST(ShortDecodeRouting, SharedMemoryLayout) {
  for (int d : {16, 64, 80, 96, 128, 256})
    for (int bytes : {1, 2})
      for (int heads : {1, 3, 4, 16})
        for (int capacity : {1, 17, 33, 64, 65, 100, 128})
          for (int multiple : {kShortRowMultiple, kShortMmaRowMultiple}) {
            const ShortDecodeLayout l = short_decode_layout(d, bytes, heads, capacity, multiple);
            EXPECT_EQ(l.chunks * 16, d * bytes);
            EXPECT_EQ((l.pitch / 16) % 2, 1);
            EXPECT_GE(l.pitch, l.chunks * 16);
            EXPECT_GE(1 << l.chunk_shift, l.chunks);
            EXPECT_LT(1 << l.chunk_shift, 2 * l.chunks);
            EXPECT_EQ(l.rows % multiple, 0);
            EXPECT_GE(l.rows, capacity);
            EXPECT_LT(l.rows, capacity + multiple);
            EXPECT_EQ(l.heads, heads);
            for (int off : {l.q, l.k, l.v, l.scores, l.stats, l.bytes}) EXPECT_EQ(off % 16, 0);
            EXPECT_EQ(l.k - l.q, heads * d * 4);
            EXPECT_EQ(l.v - l.k, l.rows * l.pitch);
            EXPECT_EQ(l.scores - l.v, l.rows * l.pitch);
            EXPECT_EQ(l.stats - l.scores, heads * l.rows * 4);
            EXPECT_GE(l.bytes - l.stats, heads * 4);
            EXPECT_LT(l.bytes - l.stats, heads * 4 + 16);
          }
  EXPECT_EQ(short_decode_layout(128, 2, 4, 33, kShortRowMultiple).rows, 36);
  EXPECT_EQ(short_decode_layout(128, 2, 4, 33, kShortMmaRowMultiple).rows, 48);
  // The short point (32 / 8: 4 heads a block) and the MHA point (1 head a block), 32 tokens, d 128:
  // 32 rows at either multiple.
  const ShortDecodeLayout gqa = short_decode_layout(128, 2, 4, 32, kShortMmaRowMultiple);
  EXPECT_EQ(gqa.bytes, 4 * 128 * 4 + 2 * 32 * 17 * 16 + 4 * 32 * 4 + 16);  // 19984 bytes
  EXPECT_LE(8 * (gqa.bytes + 1024), 228 * 1024);                          // with the 1 KB a block reserves
  const ShortDecodeLayout mha = short_decode_layout(128, 2, 1, 32, kShortMmaRowMultiple);
  EXPECT_EQ(mha.bytes, 128 * 4 + 2 * 32 * 17 * 16 + 32 * 4 + 16);  // 18064 bytes
  EXPECT_LE(8 * (mha.bytes + 1024), 228 * 1024);
  // The variants point's long-stage block (32 / 8: 4 heads, 128 tokens, d 128): 73,744 bytes, 3 an
  // SM; the long stage's largest (d 256 FP8, 16 heads, 128 tokens) still 2.
  const ShortDecodeLayout long_gqa = short_decode_layout(128, 2, 4, 128, kShortMmaRowMultiple);
  EXPECT_EQ(long_gqa.bytes, 4 * 128 * 4 + 2 * 128 * 17 * 16 + 4 * 128 * 4 + 16);
  EXPECT_LE(3 * (long_gqa.bytes + 1024), 228 * 1024);
  EXPECT_GT(4 * (long_gqa.bytes + 1024), 228 * 1024);
  const ShortDecodeLayout long_max = short_decode_layout(256, 1, 16, 128, kShortRowMultiple);
  EXPECT_EQ(long_max.bytes, 16 * 256 * 4 + 2 * 128 * 17 * 16 + 16 * 128 * 4 + 64);
  EXPECT_LE(2 * (long_max.bytes + 1024), 227 * 1024);
}

}  // namespace
}  // namespace decode_bench
