#include <string>

#include "kernels/decode_launch.hpp"
#include "kernels/flash_decode_variant.hpp"

namespace decode_bench {

std::optional<std::string> decode_unsupported_reason(const DecodeProblem& p) {
  if (const std::string why = p.shape.invalid_reason(); !why.empty()) return why;
  if (!head_dim_supported(p.shape.head_dim))
    return head_dim_unsupported_reason(p.shape.head_dim);
  if (!gqa_group_supported(p.shape.group()) && !decode_tensor_core_supported(p))
    return "GQA group " + std::to_string(p.shape.group()) +
           " has no compiled kernel (supported: 1, 2, 4, 8; with FP16/BF16/FP8 storage also 3-16, and MQA with up to "
           "128 query heads)";
  if (p.num_seqs < 1) return "num_seqs must be >= 1";
  if (p.max_len < 0 || p.max_len >= (std::int64_t{1} << 31)) return "sequence lengths must be in [0, 2^31)";
  // The variants: every problem the CUDA-core twins take (kernels/flash_decode_variant.hpp: FP16 / BF16,
  // head dims 80-128, groups 1-2, one query token) the row family takes too, so its rule is the whole rule.
  if (!p.variant.plain()) {
    if (auto why = row_attention_variant_unsupported_reason(p.shape, p.kv_dtype, p.variant)) return why;
    if (!decode_tensor_core_supported(p))
      return "GQA group " + std::to_string(p.shape.group()) +
             ": the attention variants run on the tensor-core row path, which takes groups 1-16 and MQA up to 128 "
             "query heads";
  }
  return std::nullopt;
}

std::optional<std::string> decode_kernel_unsupported_reason(DecodeKernel kernel, const DecodeProblem& p) {
  if (auto why = decode_unsupported_reason(p)) return why;
  if (kernel == DecodeKernel::baseline && !p.variant.plain())
    return "the 3-kernel baseline computes plain attention of one query token per sequence (no attention "
           "variants); use flash_decode";
  if (kernel == DecodeKernel::baseline && dtype_is_fp8(p.kv_dtype))
    return "dtype " + std::string(dtype_name(p.kv_dtype)) +
           ": the 3-kernel baseline has no FP8 path (it reads K/V without dequantization scales); use flash_decode";
  return std::nullopt;
}

bool decode_tensor_core_supported(const DecodeProblem& p) {
  if (p.kv_dtype == DType::fp32) return false;
  if (!p.shape.invalid_reason().empty() || !head_dim_supported(p.shape.head_dim)) return false;
  const int group = p.shape.group();
  return (group >= 1 && group <= 16) || (p.shape.heads_kv == 1 && p.shape.heads_q <= 128);
}

bool decode_prefers_tensor_core(const DecodeProblem& p, const TuningPolicy& tuning) {
  // The attention variants: on the CUDA-core twins where those take them and the plain point runs on
  // the CUDA cores (groups 1-2, one query token, FP16 / BF16), else on the tensor-core row kernel: FP8
  // variants there at every group, also 1, 2, 4 and 8 where the plain FP8 point runs on the CUDA cores.
  if (!p.variant.plain()) return !decode_variant_on_cuda_core(p, tuning) && decode_tensor_core_supported(p);
  // FP8: the CUDA-core kernel wherever it has a tiling (the tensor-core path took 7-21% longer on
  // the H100 at 32 q / 8 KV heads: docs/history/kernel-notes.md, "FP8 on row attention").
  const bool grouped = p.shape.group() >= kRowAttentionMinGroup && !dtype_is_fp8(p.kv_dtype);
  return decode_tensor_core_supported(p) && (grouped || !gqa_group_supported(p.shape.group()));
}

RowAttentionProblem decode_as_row_attention(const DecodeProblem& p) {
  RowAttentionProblem r;
  r.shape = p.shape;
  r.kv_dtype = p.kv_dtype;
  r.num_items = p.num_seqs * p.shape.heads_kv;
  r.items = nullptr;
  r.num_rows = p.num_seqs * p.shape.heads_q * p.variant.q_len;
  r.row_q = nullptr;
  r.seq_lens = p.seq_lens;
  // Ragged batches: the row-attention work list (plain problems only: a variant runs the uniform grid).
  r.host_seq_lens = p.variant.plain() ? p.host_seq_lens : nullptr;
  r.max_item_tokens = variant_item_tokens(p.max_len, p.variant);  // a window: only the window's tokens
  r.max_item_rows = variant_rows_per_item(p.shape.group(), p.variant.q_len);
  r.variant = p.variant;
  r.q = p.q;
  r.o = p.o;
  r.lse = p.lse;
  return r;
}

cudaError_t init_decode_workspace(const DecodePlan& plan, void* workspace, cudaStream_t stream) {
  // The tensor-core path's workspace is the row-attention plan's (its work list, if any, included).
  if (plan.kernel == DecodeKernel::flash_decode && plan.path == DecodePath::tensor_core)
    return init_row_attention_workspace(plan.rows, workspace, stream);
  const std::size_t items_bytes = plan.work_items.size() * sizeof(DecodeWorkItem);
  if (plan.workspace_init_bytes == 0 && items_bytes == 0) return cudaSuccess;
  if (workspace == nullptr || plan.workspace_init_bytes + items_bytes > plan.workspace_bytes) return cudaErrorInvalidValue;
  if (plan.workspace_init_bytes > 0) {
    if (const cudaError_t e = cudaMemsetAsync(workspace, 0, plan.workspace_init_bytes, stream); e != cudaSuccess) return e;
  }
  if (items_bytes == 0) return cudaSuccess;
  // Work items sit right after the counters (plan_flash_decode_with lays them out so). A copy from
  // pageable memory has taken the host bytes when it returns, so the plan may go away after.
  char* const items = static_cast<char*>(workspace) + plan.workspace_init_bytes;
  return cudaMemcpyAsync(items, plan.work_items.data(), items_bytes, cudaMemcpyHostToDevice, stream);
}

}  // namespace decode_bench
