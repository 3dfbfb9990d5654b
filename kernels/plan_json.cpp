#include "kernels/plan_json.hpp"

#include <string>

namespace decode_bench {

std::string_view row_plan_family(const RowAttentionPlan& plan) {
  if (plan.path == RowAttentionPath::simt) return "rows_simt";
  return plan.wgmma ? "rows_wgmma" : "rows_mma";
}

std::string_view decode_plan_family(const DecodePlan& plan) {
  if (plan.kernel == DecodeKernel::baseline) return "baseline_3kernel";
  if (plan.path == DecodePath::short_seq) return "short_decode";
  return plan.path == DecodePath::tensor_core ? row_plan_family(plan.rows) : "splitk_cuda_core";
}

nlohmann::json to_json(const DecodePlan& plan) {
  const bool rows = plan.path == DecodePath::tensor_core;
  return {{"family", std::string(decode_plan_family(plan))},
          {"path", std::string(decode_path_name(plan.path))},
          {"num_splits", plan.num_splits},
          {"active_splits", plan.active_splits},
          {"heads_per_block", plan.heads_per_block},
          {"chunk", plan.chunk},
          {"tile_tokens", plan.tile_tokens},
          {"interleaved", plan.interleaved},
          {"fused_merge", plan.fused_merge},
          {"dependent_merge", rows && plan.rows.dependent_merge},
          {"cluster_merge", rows && plan.rows.cluster_merge},
          {"uniform_len", rows ? plan.rows.uniform_len : 0},
          {"stream_blocks", rows ? plan.rows.stream_blocks : 0},
          {"blocks_per_sm", plan.blocks_per_sm},
          {"slots", rows ? plan.rows.slots : 0},
          {"workspace_bytes", plan.workspace_bytes},
          {"tiling", std::string(decode_tiling_name(plan.tiling))},
          {"packed", rows && plan.rows.packed},
          {"wgmma", rows && plan.rows.wgmma},
          {"steal_pool", rows ? plan.rows.steal_pool : 0.0},
          {"work_items", plan.work_items.size()},
          {"chunk_bound", plan.chunk_bound},
          {"query_heads_per_block", plan.query_heads_per_block}};
}

nlohmann::json to_json(const SharedPrefixPlan& plan, std::size_t levels, bool overlap) {
  const RowAttentionPlan& p = plan.prefix;
  const char* path = p.path == RowAttentionPath::tensor_core ? "tensor_core" : "simt";
  nlohmann::json suffix = to_json(plan.suffix);
  suffix["max_len"] = plan.max_suffix_len;
  return {{"family", "shared_prefix"},
          {"levels", levels},
          {"overlap", overlap},
          {"prefix", {{"family", plan.has_prefix ? std::string(row_plan_family(p)) : "none"},
                      {"items", plan.num_items},
                      {"share", plan.prefix_share},
                      {"share_dram", std::string(share_dram_source_name(plan.share_dram))},
                      {"share_dram_gbps", plan.share_dram_bytes_per_s / 1e9},
                      {"wide", p.wide},
                      {"rows", plan.num_rows},
                      {"tokens", plan.prefix_tokens},
                      {"path", plan.has_prefix ? path : "none"},
                      {"splits", p.splits},
                      {"steal_pool", p.steal_pool},
                      {"rows_per_block", p.rows_per_block},
                      {"tiling", p.wgmma ? "wgmma" : p.wide ? "wide" : "narrow"},
                      {"blocks_per_sm", p.blocks_per_sm},
                      {"slots", p.slots},
                      {"tile_tokens", p.tile_tokens}}},
          {"suffix", std::move(suffix)},
          {"workspace_bytes", plan.workspace_bytes}};
}

}  // namespace decode_bench
