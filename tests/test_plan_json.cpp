// The plan objects of the results JSON (kernels/plan_json.hpp), host-side from hand-made plans:
// every field of the plain decode and shared-prefix plans, and the family each plan names.
#include <gtest/gtest.h>

#include "kernels/plan_json.hpp"

namespace decode_bench {
namespace {

DecodePlan cuda_core_plan() {
  DecodePlan p;
  p.kernel = DecodeKernel::flash_decode;
  p.path = DecodePath::cuda_core;
  p.num_splits = 6;
  p.active_splits = 5;
  p.heads_per_block = 2;
  p.chunk = 512;
  p.tile_tokens = 64;
  p.interleaved = true;
  p.fused_merge = true;
  p.blocks_per_sm = 3;
  p.workspace_bytes = 4096;
  p.work_items.resize(7);
  p.chunk_bound = 1024;
  // A row plan left over on a CUDA-core plan must not show: packed, wgmma and steal_pool describe
  // the tensor-core path only.
  p.rows.packed = true;
  p.rows.wgmma = true;
  p.rows.steal_pool = 0.25;
  p.rows.cluster_merge = true;
  p.rows.uniform_len = 512;
  p.rows.stream_blocks = 264;
  p.rows.slots = 264;
  return p;
}

TEST(PlanJson, DecodePlanWritesEveryField) {
  const nlohmann::json j = to_json(cuda_core_plan());
  const nlohmann::json expected = {
      {"family", "splitk_cuda_core"}, {"path", "cuda_core"},     {"num_splits", 6},     {"active_splits", 5},
      {"heads_per_block", 2},          {"chunk", 512},            {"tile_tokens", 64},   {"interleaved", true},
      {"fused_merge", true},           {"dependent_merge", false}, {"cluster_merge", false},
      {"uniform_len", 0},              {"stream_blocks", 0},
      {"blocks_per_sm", 3},            {"slots", 0},            {"workspace_bytes", 4096},
      {"tiling", "standard"},          {"packed", false},         {"wgmma", false},      {"steal_pool", 0.0},
      {"work_items", 7},               {"chunk_bound", 1024},     {"query_heads_per_block", 0}};
  EXPECT_EQ(j, expected);
}

TEST(PlanJson, FamilyFollowsKernelPathAndRowPlan) {
  DecodePlan p = cuda_core_plan();
  p.tiling = DecodeTiling::short_batch;
  EXPECT_EQ(to_json(p)["family"], "splitk_cuda_core");
  EXPECT_EQ(to_json(p)["tiling"], "short");
  p.tiling = DecodeTiling::deep;
  EXPECT_EQ(to_json(p)["tiling"], "deep");
  p.tiling = DecodeTiling::short_batch;

  p.path = DecodePath::tensor_core;
  p.rows.path = RowAttentionPath::tensor_core;
  const nlohmann::json wgmma = to_json(p);
  EXPECT_EQ(wgmma["family"], "rows_wgmma");
  EXPECT_EQ(wgmma["path"], "tensor_core");
  EXPECT_EQ(wgmma["packed"], true);
  EXPECT_EQ(wgmma["wgmma"], true);
  EXPECT_EQ(wgmma["steal_pool"], 0.25);
  EXPECT_EQ(wgmma["cluster_merge"], true);
  EXPECT_EQ(wgmma["uniform_len"], 512);
  EXPECT_EQ(wgmma["stream_blocks"], 264);
  EXPECT_EQ(wgmma["slots"], 264);

  p.rows.wgmma = false;
  EXPECT_EQ(to_json(p)["family"], "rows_mma");
  p.rows.path = RowAttentionPath::simt;
  EXPECT_EQ(to_json(p)["family"], "rows_simt");

  DecodePlan baseline;
  baseline.kernel = DecodeKernel::baseline;
  EXPECT_EQ(to_json(baseline)["family"], "baseline_3kernel");
  EXPECT_EQ(to_json(baseline)["path"], "cuda_core");

  DecodePlan short_plan;
  short_plan.path = DecodePath::short_seq;
  short_plan.query_heads_per_block = 8;
  short_plan.rows.packed = true;  // a row plan left over must not show on the short path either
  const nlohmann::json short_json = to_json(short_plan);
  EXPECT_EQ(short_json["family"], "short_decode");
  EXPECT_EQ(short_json["path"], "short_seq");
  EXPECT_EQ(short_json["query_heads_per_block"], 8);
  EXPECT_EQ(short_json["packed"], false);
}

TEST(PlanJson, SharedPrefixPlanNestsTheSuffixDecodePlan) {
  SharedPrefixPlan sp;
  sp.has_prefix = true;
  sp.num_items = 8;
  sp.num_rows = 96;
  sp.prefix_tokens = 2048;
  sp.prefix_share = 0.5;
  sp.share_dram = ShareDramSource::measured;
  sp.share_dram_bytes_per_s = 3.125e12;
  sp.max_suffix_len = 130;
  sp.workspace_bytes = 1 << 20;
  sp.prefix.path = RowAttentionPath::tensor_core;
  sp.prefix.wgmma = true;
  sp.prefix.splits = 4;
  sp.prefix.rows_per_block = 64;
  sp.prefix.blocks_per_sm = 2;
  sp.prefix.slots = 264;
  sp.prefix.tile_tokens = 64;
  sp.prefix.steal_pool = 0.0;
  sp.suffix = cuda_core_plan();
  const nlohmann::json j = to_json(sp, 3, true);
  EXPECT_EQ(j["family"], "shared_prefix");
  EXPECT_EQ(j["levels"], 3);
  EXPECT_EQ(j["overlap"], true);
  EXPECT_EQ(j["workspace_bytes"], 1 << 20);
  const nlohmann::json expected_prefix = {
      {"family", "rows_wgmma"}, {"items", 8},          {"share", 0.5},       {"wide", false},
      {"rows", 96},             {"tokens", 2048},      {"path", "tensor_core"}, {"splits", 4},
      {"steal_pool", 0.0},      {"rows_per_block", 64}, {"tiling", "wgmma"},  {"blocks_per_sm", 2},
      {"slots", 264},           {"tile_tokens", 64},   {"share_dram", "measured"}, {"share_dram_gbps", 3125.0}};
  EXPECT_EQ(j["prefix"], expected_prefix);
  nlohmann::json expected_suffix = to_json(cuda_core_plan());
  expected_suffix["max_len"] = 130;
  EXPECT_EQ(j["suffix"], expected_suffix);

  sp.has_prefix = false;  // N = 1 or a prefix below one page: the decode alone
  EXPECT_EQ(to_json(sp, 0, false)["prefix"]["path"], "none");
  EXPECT_EQ(to_json(sp, 0, false)["prefix"]["family"], "none");
}

// Which DRAM rate the share rule took: the clock estimate, the measured ceiling, or none.
TEST(PlanJson, SharedPrefixPlanSaysWhichDramRateTheShareRuleTook) {
  SharedPrefixPlan sp;
  EXPECT_EQ(to_json(sp, 1, false)["prefix"]["share_dram"], "none");
  EXPECT_EQ(to_json(sp, 1, false)["prefix"]["share_dram_gbps"], 0.0);
  sp.share_dram = ShareDramSource::clock;
  sp.share_dram_bytes_per_s = 3352.32e9;
  EXPECT_EQ(to_json(sp, 1, true)["prefix"]["share_dram"], "clock");
  EXPECT_DOUBLE_EQ(to_json(sp, 1, true)["prefix"]["share_dram_gbps"].get<double>(), 3352.32);
}

}  // namespace
}  // namespace decode_bench
