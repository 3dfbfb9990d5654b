// DECODE_BENCH_FD_SPLIT_SCALE, the flash-decode planner's knob for a deliberately slowed kernel
// (kernels/planner_tuning.hpp): parsing, the scaled count, and the planner honouring it on a GPU.
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "gpu_test_support.hpp"
#include "harness/results_schema.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/planner_tuning.hpp"
#include "kernels/row_attention_wgmma.hpp"
#include "kernels/shared_prefix_share.hpp"
#include "tests/scoped_env.hpp"

namespace decode_bench {
namespace {

using testing::ScopedEnv;

// The message of the std::invalid_argument a knob read must throw for a bad value (a failure, and
// "", when it accepts `value` instead).
template <class Read>
std::string refusal(Read read, const std::string& value) {
  try {
    (void)read();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted " << value;
  return "";
}

TEST(PlannerTuning, SplitScaleDefaultsToOneAndParsesNumbers) {
  {
    ScopedEnv env(kSplitScaleEnv, nullptr);
    EXPECT_EQ(flash_decode_split_scale(), 1.0);
  }
  ScopedEnv env(kSplitScaleEnv, "0.25");
  EXPECT_EQ(flash_decode_split_scale(), 0.25);
}

TEST(PlannerTuning, BadSplitScaleIsRejectedNamingTheVariable) {
  for (const char* bad : {"abc", "0", "-1", "0.5x", "inf", "100"}) {
    ScopedEnv env(kSplitScaleEnv, bad);
    EXPECT_NE(refusal([] { return flash_decode_split_scale(); }, bad).find("DECODE_BENCH_FD_SPLIT_SCALE='" + std::string(bad) + "'"),
              std::string::npos);
  }
}

TEST(PlannerTuning, ScaledSplitsRoundAndKeepAtLeastOne) {
  EXPECT_EQ(scaled_splits(132, 1.0), 132);
  EXPECT_EQ(scaled_splits(132, 0.25), 33);
  EXPECT_EQ(scaled_splits(3, 0.1), 1);
  EXPECT_EQ(scaled_splits(10, 2.0), 20);
}

TEST(PlannerTuning, TilingAndBalanceKnobsParseAndNameTheVariable) {
  {
    ScopedEnv tiling(kTilingEnv, nullptr), balance(kBalanceEnv, nullptr);
    EXPECT_EQ(flash_decode_tiling_override(), TilingOverride::automatic);
    EXPECT_TRUE(flash_decode_balance_enabled());
  }
  for (auto [text, want] : {std::pair{"auto", TilingOverride::automatic}, std::pair{"standard", TilingOverride::standard},
                            std::pair{"short", TilingOverride::short_batch}}) {
    ScopedEnv env(kTilingEnv, text);
    EXPECT_EQ(flash_decode_tiling_override(), want) << text;
  }
  {
    ScopedEnv env(kBalanceEnv, "0");
    EXPECT_FALSE(flash_decode_balance_enabled());
  }
  for (auto [text, want] : {std::pair{"auto", WorkChunksOverride::automatic}, std::pair{"tiles", WorkChunksOverride::tiles},
                            std::pair{"ranges", WorkChunksOverride::ranges}}) {
    ScopedEnv env(kWorkChunksEnv, text);
    EXPECT_EQ(flash_decode_work_chunks_override(), want) << text;
  }
  for (auto [text, want] : {std::pair{"1", 1}, std::pair{"2", 2}, std::pair{"4", 4}}) {
    ScopedEnv env(kShortHeadsEnv, text);
    EXPECT_EQ(flash_decode_short_heads(), want) << text;
  }
  for (auto [name, bad] : {std::pair{kWorkChunksEnv, "pages"}, std::pair{kShortHeadsEnv, "3"}}) {
    ScopedEnv env(name, bad);
    const auto parse = [&] { return std::string(name) == kWorkChunksEnv ? (void)flash_decode_work_chunks_override()
                                                                         : (void)flash_decode_short_heads(); };
    const std::string message = refusal(parse, bad);
    EXPECT_NE(message.find(std::string(name) + "='" + bad + "'"), std::string::npos) << message;
  }
  ScopedEnv tiling(kTilingEnv, "tiny"), balance(kBalanceEnv, "yes");
  const std::string tiling_message = refusal([] { return flash_decode_tiling_override(); }, "tiny");
  EXPECT_NE(tiling_message.find("DECODE_BENCH_FD_TILING='tiny'"), std::string::npos) << tiling_message;
  const std::string balance_message = refusal([] { return flash_decode_balance_enabled(); }, "yes");
  EXPECT_NE(balance_message.find("DECODE_BENCH_FD_BALANCE='yes'"), std::string::npos) << balance_message;
}

TEST(PlannerTuning, RowTilingAndPrefixShareKnobsParseAndNameTheVariable) {
  {
    ScopedEnv tiling(kRowTilingEnv, nullptr), share(kPrefixShareEnv, nullptr);
    EXPECT_EQ(row_attention_tiling_override(), RowAttentionTiling::automatic);
    EXPECT_EQ(shared_prefix_prefix_share(), 0.0);  // not pinned: the planner's rule
  }
  for (const auto& [text, want] : {std::pair{"auto", RowAttentionTiling::automatic},
                                   std::pair{"narrow", RowAttentionTiling::narrow},
                                   std::pair{"wide", RowAttentionTiling::wide},
                                   std::pair{"wgmma", RowAttentionTiling::wgmma}}) {
    ScopedEnv env(kRowTilingEnv, text);
    EXPECT_EQ(row_attention_tiling_override(), want) << text;
  }
  for (const auto& [text, want] : {std::pair{"auto", 0}, std::pair{"64", 64}, std::pair{"128", 128}}) {
    ScopedEnv env(kRowWgmmaRowsEnv, text);
    EXPECT_EQ(row_wgmma_rows_override(), want) << text;
  }
  {
    ScopedEnv env(kRowWgmmaRowsEnv, nullptr);
    EXPECT_EQ(row_wgmma_rows_override(), 0);
  }
  for (const char* bad : {"32", "256", "wide"}) {
    ScopedEnv env(kRowWgmmaRowsEnv, bad);
    const std::string message = refusal([] { return row_wgmma_rows_override(); }, bad);
    EXPECT_NE(message.find(kRowWgmmaRowsEnv), std::string::npos) << message;
  }
  {
    ScopedEnv env(kPrefixShareEnv, "0.35");
    EXPECT_DOUBLE_EQ(shared_prefix_prefix_share(), 0.35);
  }
  for (const char* bad : {"0", "-0.5", "1.5", "half", "0.5x", "nan"}) {
    ScopedEnv env(kPrefixShareEnv, bad);
    const std::string message = refusal([] { return shared_prefix_prefix_share(); }, bad);
    EXPECT_NE(message.find(kPrefixShareEnv), std::string::npos) << message;
  }
  ScopedEnv env(kRowTilingEnv, "wider");
  const std::string message = refusal([] { return row_attention_tiling_override(); }, "wider");
  EXPECT_NE(message.find(kRowTilingEnv), std::string::npos) << message;
}

TEST(PlannerTuning, CarveoutKnobParsesAndNamesTheVariable) {
  {
    ScopedEnv env(kCarveoutEnv, nullptr);
    EXPECT_FALSE(carveout_max_shared());
  }
  {
    ScopedEnv env(kCarveoutEnv, "max");
    EXPECT_TRUE(carveout_max_shared());
  }
  {
    ScopedEnv env(kCarveoutEnv, "default");
    EXPECT_FALSE(carveout_max_shared());
  }
  ScopedEnv env(kCarveoutEnv, "100");
  const std::string message = refusal([] { return carveout_max_shared(); }, "100");
  EXPECT_NE(message.find(kCarveoutEnv), std::string::npos) << message;
}

// The overlapped prefix phase's share of the SMs (kernels/shared_prefix_share.hpp) at the six
// H100 points it was fitted on (FP16, 32 heads, d 128, S 128, 3.35 TB/s by the device's memory
// clock), and its thresholds.
TEST(PlannerTuning, SharedPrefixAutoShareAtTheFittedPoints) {
  const double dram = 3.35e12;
  const auto share = [&](int n, int p) {
    const double suffix_bytes = 2.0 * n * 128 * 32 * 128 * 2;
    const double prefix_flops = 4.0 * p * n * 32 * 128;
    return shared_prefix_auto_share(suffix_bytes, prefix_flops, dram, n);
  };
  EXPECT_EQ(share(64, 1024), 0.5);
  EXPECT_EQ(share(64, 8192), 0.75);
  EXPECT_EQ(share(64, 32768), 1.0);
  EXPECT_EQ(share(256, 1024), 0.5);
  EXPECT_EQ(share(256, 8192), 0.75);
  EXPECT_EQ(share(256, 32768), 1.0);
  // ratio = (suffix s) / (prefix s): 1 byte / 1 B/s over 128e12 FLOP / 128e12 FLOP/s = 1.
  EXPECT_EQ(shared_prefix_auto_share(0.39, kPrefixPhaseFlopRate, 1.0, 64), 1.0);
  EXPECT_EQ(shared_prefix_auto_share(0.4, kPrefixPhaseFlopRate, 1.0, 64), 0.75);
  EXPECT_EQ(shared_prefix_auto_share(1.19, kPrefixPhaseFlopRate, 1.0, 256), 0.75);
  EXPECT_EQ(shared_prefix_auto_share(1.2, kPrefixPhaseFlopRate, 1.0, 256), 0.5);
  EXPECT_EQ(shared_prefix_auto_share(1.0, 0.0, 1.0, 64), 1.0);  // no prefix work: nothing to share
  // Outside the rows it was measured at (64-256), the whole GPU whatever the ratio.
  EXPECT_EQ(shared_prefix_auto_share(10.0, kPrefixPhaseFlopRate, 1.0, 63), 1.0);
  EXPECT_EQ(shared_prefix_auto_share(10.0, kPrefixPhaseFlopRate, 1.0, 257), 1.0);
  EXPECT_EQ(shared_prefix_auto_share(10.0, kPrefixPhaseFlopRate, 1.0, 256), 0.5);
}

// The warpgroup-MMA prefix kernel's rule (kernels/shared_prefix_share.hpp) at its six fitted H100
// points (prefix time the larger of its K/V bytes and FLOPs), its threshold and its limits.
TEST(PlannerTuning, SharedPrefixWgmmaShareAtTheFittedPoints) {
  const double dram = 3.35e12;
  const auto share = [&](int n, int p) {
    const double suffix_bytes = 2.0 * n * 128 * 32 * 128 * 2;
    const double prefix_bytes = 2.0 * p * 32 * 128 * 2;
    const double prefix_flops = 4.0 * p * n * 32 * 128;
    return shared_prefix_auto_share_wgmma(suffix_bytes, prefix_bytes, prefix_flops, dram, n);
  };
  EXPECT_EQ(share(64, 1024), 0.5);    // ratio 8.0
  EXPECT_EQ(share(64, 8192), 1.0);    // 1.0: the prefix's bytes, not its FLOPs, set its time
  EXPECT_EQ(share(64, 32768), 1.0);   // 0.25
  EXPECT_EQ(share(256, 1024), 0.5);   // 13
  EXPECT_EQ(share(256, 8192), 0.5);   // 1.6
  EXPECT_EQ(share(256, 32768), 1.0);  // 0.41
  // ratio = 1.29 and 1.3, by bytes (1 B at 1 B/s) and by FLOPs (350e12 FLOP at 350 TFLOP/s).
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.29, 1.0, 1.0, 1.0, 64), 1.0);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.3, 1.0, 1.0, 1.0, 64), 0.5);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.29, 0.0, kWgmmaPrefixFlopRate, 1.0, 256), 1.0);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(1.3, 0.0, kWgmmaPrefixFlopRate, 1.0, 256), 0.5);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(10.0, 1.0, 0.0, 1.0, 64), 1.0);  // no prefix work
  EXPECT_EQ(shared_prefix_auto_share_wgmma(10.0, 1.0, 1.0, 1.0, 63), 1.0);
  EXPECT_EQ(shared_prefix_auto_share_wgmma(10.0, 1.0, 1.0, 1.0, 257), 1.0);
}

TEST(PlannerTuning, RowPackedSplitKnobParsesAndNamesTheVariable) {
  {
    ScopedEnv unset(kRowPackedSplitEnv, nullptr);
    EXPECT_TRUE(row_packed_split_enabled());
  }
  {
    ScopedEnv automatic(kRowPackedSplitEnv, "auto");
    EXPECT_TRUE(row_packed_split_enabled());
  }
  {
    ScopedEnv off(kRowPackedSplitEnv, "off");
    EXPECT_FALSE(row_packed_split_enabled());
  }
  ScopedEnv env(kRowPackedSplitEnv, "on");
  EXPECT_EQ(refusal([] { return row_packed_split_enabled(); }, "on"),
            "DECODE_BENCH_ROW_PACKED_SPLIT='on': must be auto or off");
}

TEST(PlannerTuning, RowDecodeSplitsKnobParsesAndNamesTheVariable) {
  for (RowDecodeSplits fallback : {RowDecodeSplits::sms, RowDecodeSplits::slots}) {
    ScopedEnv unset(kRowDecodeSplitsEnv, nullptr);
    EXPECT_EQ(row_decode_splits_override(fallback), fallback);
    ScopedEnv automatic(kRowDecodeSplitsEnv, "auto");
    EXPECT_EQ(row_decode_splits_override(fallback), fallback);
  }
  for (const auto& [text, want] : {std::pair{"sms", RowDecodeSplits::sms}, std::pair{"slots", RowDecodeSplits::slots}}) {
    ScopedEnv env(kRowDecodeSplitsEnv, text);
    EXPECT_EQ(row_decode_splits_override(RowDecodeSplits::sms), want) << text;
    EXPECT_EQ(row_decode_splits_override(RowDecodeSplits::slots), want) << text;
  }
  ScopedEnv env(kRowDecodeSplitsEnv, "blocks");
  const std::string message = refusal([] { return row_decode_splits_override(RowDecodeSplits::sms); }, "blocks");
  EXPECT_NE(message.find("DECODE_BENCH_ROW_DECODE_SPLITS='blocks'"), std::string::npos) << message;
}

TEST(PlannerTuning, RowStealKnobParsesAndNamesTheVariable) {
  {
    ScopedEnv unset(kRowStealEnv, nullptr);
    EXPECT_EQ(row_steal_pool(0.25), 0.25);
    EXPECT_EQ(row_steal_pool(0.0), 0.0);
  }
  for (const auto& [text, want] : {std::pair{"off", 0.0}, std::pair{"0.5", 0.5}, std::pair{"1", 1.0}}) {
    ScopedEnv env(kRowStealEnv, text);
    EXPECT_EQ(row_steal_pool(0.25), want) << text;
  }
  for (const char* bad : {"0", "1.5", "-0.25", "on", "0.2x"}) {
    ScopedEnv env(kRowStealEnv, bad);
    EXPECT_EQ(refusal([] { return row_steal_pool(0.25); }, bad),
              std::string("DECODE_BENCH_ROW_STEAL='") + bad + "': must be off or a number in (0, 1]");
  }
}

TEST(PlannerTuning, KnobIsRecordedInMetaEnvironment) {
  ScopedEnv env(kSplitScaleEnv, "0.5");
  const auto meta = make_meta({"decode-bench"}, "ci-smoke");
  EXPECT_EQ(meta["environment"]["DECODE_BENCH_FD_SPLIT_SCALE"], "0.5");
}

TEST(PlannerTuningGpu, PlannerScalesItsOwnSplitCountButNotAnExplicitOne) {
  DB_REQUIRE_GPU();
  DecodeProblem problem;
  problem.shape = DecodeShape{32, 32, 128};
  problem.max_len = 65536;  // long enough that the wave, not the length, sets the split count
  DecodePlan base, slowed, explicit_plan;
  {
    ScopedEnv env(kSplitScaleEnv, nullptr);
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, {}, &base), cudaSuccess);
  }
  ScopedEnv env(kSplitScaleEnv, "0.25");
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, {}, &slowed), cudaSuccess);
  EXPECT_EQ(slowed.num_splits, scaled_splits(base.num_splits, 0.25));
  EXPECT_LT(slowed.num_splits, base.num_splits);
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, {.splits = 8}, &explicit_plan),
            cudaSuccess);
  EXPECT_EQ(explicit_plan.num_splits, 8);
}

// A grouped FP16 (group <= 16) or packed BF16 (group <= 8) decode at d 128 over contiguous K/V
// plans about one block per SM (the fewest splits that fill the SMs); paged K/V, unpacked BF16,
// FP8 and DECODE_BENCH_ROW_DECODE_SPLITS=slots keep the every-slot rule, which takes more blocks
// than SMs at these shapes; =sms takes one block per SM for the others too. BF16 and FP8 at group
// 4 take the packed-split kernel unless DECODE_BENCH_ROW_PACKED_SPLIT=off; FP16 never does.
TEST(PlannerTuningGpu, GroupedDecodePlansAboutOneBlockPerSmWhereMeasuredFaster) {
  DB_REQUIRE_GPU();
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  ScopedEnv unset(kRowDecodeSplitsEnv, nullptr);
  const auto blocks = [](const DecodePlan& plan, int items) {
    EXPECT_EQ(plan.path, DecodePath::tensor_core);
    return static_cast<std::int64_t>(plan.rows.splits) * items * plan.rows.row_blocks;
  };
  for (const auto& [seqs, len] : {std::pair{16, 4096}, std::pair{1, 65536}, std::pair{64, 1024}}) {
    SCOPED_TRACE(std::to_string(seqs) + " x " + std::to_string(len));
    DecodeProblem fp16;
    fp16.shape = DecodeShape{32, 8, 128};
    fp16.num_seqs = seqs;
    fp16.max_len = len;
    DecodeProblem bf16 = fp16, e4m3 = fp16, group16 = fp16;
    bf16.kv_dtype = DType::bf16;
    e4m3.kv_dtype = DType::fp8_e4m3;
    group16.shape = DecodeShape{128, 8, 128};
    const int items = seqs * 8;
    DecodeOptions tc;  // FP8 decodes on CUDA cores unless the path is pinned
    tc.path = DecodePath::tensor_core;
    DecodePlan one_per_sm, paged, bf16_plan, bf16_paged, e4m3_plan, group16_plan, slots_plan, e4m3_sms, paged_sms,
        bf16_unpacked;
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, fp16, {}, &one_per_sm), cudaSuccess);
    ASSERT_EQ(plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, fp16, {}, &paged), cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__nv_bfloat16>>(DecodeKernel::flash_decode, bf16, {}, &bf16_plan), cudaSuccess);
    ASSERT_EQ(plan_decode<PagedKV<__nv_bfloat16>>(DecodeKernel::flash_decode, bf16, {}, &bf16_paged), cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__nv_fp8_e4m3>>(DecodeKernel::flash_decode, e4m3, tc, &e4m3_plan),
              cudaSuccess);
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, group16, {}, &group16_plan), cudaSuccess);
    {
      ScopedEnv slots(kRowDecodeSplitsEnv, "slots");
      ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, fp16, {}, &slots_plan), cudaSuccess);
    }
    {
      ScopedEnv forced(kRowDecodeSplitsEnv, "sms");
      ASSERT_EQ(plan_decode<ContiguousKV<__nv_fp8_e4m3>>(DecodeKernel::flash_decode, e4m3, tc, &e4m3_sms),
                cudaSuccess);
      ASSERT_EQ(plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, fp16, {}, &paged_sms), cudaSuccess);
    }
    {
      ScopedEnv off(kRowPackedSplitEnv, "off");
      ASSERT_EQ(plan_decode<ContiguousKV<__nv_bfloat16>>(DecodeKernel::flash_decode, bf16, {}, &bf16_unpacked),
                cudaSuccess);
    }
    const std::int64_t b = blocks(one_per_sm, items);
    if (items >= sms) {
      EXPECT_EQ(one_per_sm.rows.splits, 1);  // the items alone fill the SMs: no merge
    } else {
      EXPECT_LE(b, sms);
      EXPECT_GE(4 * b, 3 * sms);
      EXPECT_EQ(one_per_sm.rows.splits, sms / items);
    }
    const std::int64_t slots_blocks = blocks(slots_plan, items);
    EXPECT_EQ(blocks(paged, items), slots_blocks);
    EXPECT_EQ(blocks(bf16_plan, items), b);
    EXPECT_EQ(blocks(bf16_unpacked, items), slots_blocks);
    EXPECT_EQ(blocks(bf16_paged, items), slots_blocks);
    EXPECT_EQ(blocks(e4m3_sms, items), b);
    EXPECT_EQ(blocks(paged_sms, items), b);
    EXPECT_EQ(blocks(group16_plan, items), b);  // 16 rows still fill one 16-row block
    EXPECT_TRUE(bf16_plan.rows.packed);
    EXPECT_TRUE(bf16_paged.rows.packed);
    EXPECT_TRUE(e4m3_plan.rows.packed);
    EXPECT_FALSE(bf16_unpacked.rows.packed);
    EXPECT_FALSE(one_per_sm.rows.packed);  // FP16 has no lo parts
    EXPECT_FALSE(group16_plan.rows.packed);
    if (items < 2 * sms) {
      EXPECT_GT(blocks(slots_plan, items), sms);  // the rules differ here
      EXPECT_GT(blocks(e4m3_plan, items), sms);
    }
  }
}

// The tensor-core row attention's automatic tiling for shared-prefix-like items (one per KV head,
// N rows each; kernels/row_attention_launch.cuh). Where the warpgroup-MMA kernel runs (a build
// with sm_90a on a compute capability 9.0 GPU: wgmma_row_kernel_runs_on), FP16 d 128 items of more
// than 64 rows take it in 128-row blocks, and of 33-64 rows over at least 128 tiles (8K tokens) in
// 64-row blocks. Elsewhere those 33-64-row items take the narrow tiling (measured faster than wide
// there before the wgmma kernel) and the larger ones the wide tiling. On every GPU: shorter 64-row
// FP16 items, BF16, head dim 64 and a pinned wide tiling take the wide tiling; 32 rows the narrow.
TEST(PlannerTuningGpu, RowTilingOfPrefixItemsWgmmaWhereItRunsElseNarrowOrWide) {
  DB_REQUIRE_GPU();
  ScopedEnv unset(kRowTilingEnv, nullptr), unset_rows(kRowWgmmaRowsEnv, nullptr);
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  const bool wgmma_runs = wgmma_row_kernel_runs_on(dev);
  SCOPED_TRACE(wgmma_runs ? "the wgmma kernel runs on this GPU" : "no wgmma kernel in this build or on this GPU");
  // The plan's tiling ("wgmma", "wide" or "narrow") and rows per block.
  const auto tiling_of = [](DType dtype, int rows, std::int64_t tokens, int head_dim = 128) {
    RowAttentionProblem p;
    p.shape = DecodeShape{32, 32, head_dim};
    p.kv_dtype = dtype;
    p.num_items = 32;
    p.num_rows = 32 * rows;
    p.max_item_rows = rows;
    p.max_item_tokens = tokens;
    RowAttentionPlan plan;
    cudaError_t e = cudaErrorInvalidValue;
    if (dtype == DType::fp16) e = plan_row_attention<PagedKV<__half>>(p, {}, &plan);
    else e = plan_row_attention<PagedKV<__nv_bfloat16>>(p, {}, &plan);
    EXPECT_EQ(e, cudaSuccess) << dtype_name(dtype) << " rows " << rows << " tokens " << tokens;
    EXPECT_EQ(plan.path, RowAttentionPath::tensor_core);
    EXPECT_FALSE(plan.wgmma && plan.wide);
    return std::string(plan.wgmma ? "wgmma" : plan.wide ? "wide" : "narrow") + " " +
           std::to_string(plan.rows_per_block);
  };
  struct Want {
    DType dtype;
    int rows;
    std::int64_t tokens;
    int head_dim;
    const char* with_wgmma;
    const char* without;
  };
  for (const Want& w : {Want{DType::fp16, 64, 8192, 128, "wgmma 64", "narrow 64"},
                        Want{DType::fp16, 64, 32768, 128, "wgmma 64", "narrow 64"},
                        Want{DType::fp16, 33, 8192, 128, "wgmma 64", "narrow 64"},
                        Want{DType::fp16, 65, 8192, 128, "wgmma 128", "wide 128"},
                        Want{DType::fp16, 65, 700, 128, "wgmma 128", "wide 64"},  // under 32 tiles: 64-row wide blocks
                        Want{DType::fp16, 256, 32768, 128, "wgmma 128", "wide 256"},
                        Want{DType::fp16, 64, 8191 - 63, 128, "wide 64", "wide 64"},  // 127 tiles
                        Want{DType::fp16, 64, 1024, 128, "wide 64", "wide 64"},
                        Want{DType::fp16, 32, 9000, 128, "narrow 32", "narrow 32"},
                        Want{DType::bf16, 64, 8192, 128, "wide 64", "wide 64"},
                        Want{DType::bf16, 256, 32768, 128, "wide 256", "wide 256"},
                        Want{DType::fp16, 64, 8192, 64, "wide 64", "wide 64"},
                        Want{DType::fp16, 256, 32768, 64, "wide 256", "wide 256"}}) {
    EXPECT_EQ(tiling_of(w.dtype, w.rows, w.tokens, w.head_dim), wgmma_runs ? w.with_wgmma : w.without)
        << dtype_name(w.dtype) << " D " << w.head_dim << " rows " << w.rows << " tokens " << w.tokens;
  }
  ScopedEnv pinned(kRowTilingEnv, "wide");
  EXPECT_EQ(tiling_of(DType::fp16, 64, 8192), "wide 64");
  EXPECT_EQ(tiling_of(DType::fp16, 256, 32768), "wide 256");
}

// Work stealing (RowAttentionPlan::steal_pool): row attention steals only where options or
// DECODE_BENCH_ROW_STEAL ask, and only where a stealing twin is compiled (kHasStealKernel: FP16 /
// BF16, D 128, narrow or packed) for split items; grouped decode over paged K/V asks for a quarter
// by default, over contiguous K/V for none.
TEST(PlannerTuningGpu, RowStealPoolOnlyWhereAskedAndCompiled) {
  DB_REQUIRE_GPU();
  ScopedEnv tiling(kRowTilingEnv, nullptr), rows(kRowWgmmaRowsEnv, nullptr);
  int dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  const bool wgmma_runs = wgmma_row_kernel_runs_on(dev);
  SCOPED_TRACE(wgmma_runs ? "the wgmma kernel runs on this GPU" : "no wgmma kernel in this build or on this GPU");
  const auto plan_of = [](int rows, int items, std::int64_t tokens, RowAttentionOptions options = {},
                          int head_dim = 128) {
    RowAttentionProblem p;
    p.shape = DecodeShape{32, 8, head_dim};
    p.kv_dtype = DType::fp16;
    p.num_items = items;
    p.num_rows = items * rows;
    p.max_item_rows = rows;
    p.max_item_tokens = tokens;
    RowAttentionPlan plan;
    EXPECT_EQ(plan_row_attention<ContiguousKV<__half>>(p, options, &plan), cudaSuccess);
    return plan;
  };
  const RowAttentionOptions half{.steal_pool = 0.5};
  {
    ScopedEnv unset(kRowStealEnv, nullptr);
    const RowAttentionPlan grouped = plan_of(4, 8, 65536);  // 32 / 8 heads, 1 x 64K: split 16 ways
    EXPECT_GT(grouped.splits, 1);
    EXPECT_FALSE(grouped.wide);
    EXPECT_EQ(grouped.steal_pool, 0.0);  // not asked
    const RowAttentionPlan asked = plan_of(4, 8, 65536, half);
    EXPECT_EQ(asked.splits, grouped.splits);
    EXPECT_EQ(asked.steal_pool, 0.5);
    EXPECT_EQ(plan_of(4, 8, 65536, {.steal_pool = 1.5}).steal_pool, 1.0);  // clamped to the whole item
    RowAttentionOptions unsplit = half;
    unsplit.splits = 1;
    EXPECT_EQ(plan_of(4, 8, 65536, unsplit).steal_pool, 0.0);
    // A shared prefix of 64 x 4 rows: the wgmma kernel where it runs, else the wide tiling; neither
    // has a stealing twin. The wide tiling pinned, on every GPU.
    const RowAttentionPlan prefix = plan_of(256, 8, 32768, half);
    EXPECT_EQ(prefix.wgmma, wgmma_runs);
    EXPECT_EQ(prefix.wide, !wgmma_runs);
    EXPECT_GT(prefix.splits, 1);
    EXPECT_EQ(prefix.steal_pool, 0.0);
    RowAttentionOptions wide_half = half;
    wide_half.tiling = RowAttentionTiling::wide;
    const RowAttentionPlan wide = plan_of(256, 8, 32768, wide_half);
    EXPECT_TRUE(wide.wide);
    EXPECT_FALSE(wide.wgmma);
    EXPECT_GT(wide.splits, 1);
    EXPECT_EQ(wide.steal_pool, 0.0);
    const RowAttentionPlan d256 = plan_of(4, 8, 65536, half, 256);
    EXPECT_GT(d256.splits, 1);
    EXPECT_EQ(d256.steal_pool, 0.0);
    EXPECT_EQ(plan_of(4, 8, 65536, half, 64).steal_pool, 0.0);
  }
  {
    ScopedEnv pinned(kRowStealEnv, "0.5");
    EXPECT_EQ(plan_of(4, 8, 65536).steal_pool, 0.5);
    EXPECT_EQ(plan_of(4, 8, 65536, {.steal_pool = 0}).steal_pool, 0.0);  // options over the knob
  }
  // Grouped decode, 32 / 8 heads, 1 x 64K.
  DecodeProblem problem;
  problem.shape = DecodeShape{32, 8, 128};
  problem.max_len = 65536;
  const auto decode_pool = [&](bool paged, DType dtype) {
    problem.kv_dtype = dtype;
    DecodePlan plan;
    cudaError_t e = cudaErrorInvalidValue;
    if (dtype == DType::fp16)
      e = paged ? plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, problem, {}, &plan)
                : plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, problem, {}, &plan);
    else
      e = paged ? plan_decode<PagedKV<__nv_bfloat16>>(DecodeKernel::flash_decode, problem, {}, &plan)
                : plan_decode<ContiguousKV<__nv_bfloat16>>(DecodeKernel::flash_decode, problem, {}, &plan);
    EXPECT_EQ(e, cudaSuccess);
    EXPECT_EQ(plan.path, DecodePath::tensor_core);
    EXPECT_GT(plan.rows.splits, 1);
    return plan.rows.steal_pool;
  };
  {
    ScopedEnv unset(kRowStealEnv, nullptr);
    for (DType dtype : {DType::fp16, DType::bf16}) {
      EXPECT_EQ(decode_pool(true, dtype), 0.25) << dtype_name(dtype);
      EXPECT_EQ(decode_pool(false, dtype), 0.0) << dtype_name(dtype);
    }
  }
  ScopedEnv off(kRowStealEnv, "off");
  EXPECT_EQ(decode_pool(true, DType::fp16), 0.0);
  ScopedEnv on(kRowStealEnv, "0.125");
  EXPECT_EQ(decode_pool(false, DType::fp16), 0.125);
}

}  // namespace
}  // namespace decode_bench
