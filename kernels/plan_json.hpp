#pragma once
// The "plan" object of a point's results JSON, written beside the plan types it describes
// (kernels/decode_launch.hpp, kernels/shared_prefix.hpp): one writer per plan type, so every path
// that runs a plan records the same fields (docs/results.md, "plan").
#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kernels/decode_launch.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/shared_prefix.hpp"

namespace decode_bench {

// The kernel family a plan runs, a word a reader can group points by:
//   baseline_3kernel  the seed's scores / softmax / output kernels (DecodeKernel::baseline)
//   splitk_cuda_core  flash-decode on CUDA cores (DecodePath::cuda_core; either tiling)
//   rows_mma          row attention on mma.sync (DecodePath::tensor_core, or a shared-prefix phase)
//   rows_wgmma        row attention on Hopper's warpgroup MMA (RowAttentionPlan::wgmma)
//   rows_simt         row attention on CUDA cores (RowAttentionPath::simt: FP32 storage)
//   short_decode      the short-sequence kernel (DecodePath::short_seq: whole sequences staged)
//   shared_prefix     the composed prefix phase + suffix phase + merge (SharedPrefixPlan)
std::string_view row_plan_family(const RowAttentionPlan& plan);
std::string_view decode_plan_family(const DecodePlan& plan);

// {family, path, tiling, packed, wgmma, steal_pool, num_splits, active_splits, heads_per_block,
// chunk, tile_tokens, interleaved, fused_merge, blocks_per_sm, workspace_bytes, work_items,
// chunk_bound, query_heads_per_block}; packed, wgmma and steal_pool describe the row-attention plan
// of the tensor-core path and are false / 0 on the others; query_heads_per_block is the short
// path's (0 on the others).
nlohmann::json to_json(const DecodePlan& plan);

// {family: shared_prefix, levels, overlap, prefix: {...}, suffix: to_json(plan.suffix) + max_len,
// workspace_bytes}. levels: the layout's level count; overlap: whether the launch runs the suffix
// phase on a second stream beside the prefix phase; prefix.share_dram / share_dram_gbps: which DRAM
// rate the overlapped share rule divided by ("clock", "measured", or "none" with 0 where the rule
// did not run) and its value.
nlohmann::json to_json(const SharedPrefixPlan& plan, std::size_t levels, bool overlap);

}  // namespace decode_bench
