#include <string>

#include "kernels/decode_problem.hpp"
#include "kernels/row_attention.hpp"

namespace decode_bench {

std::optional<std::string> row_attention_unsupported_reason(const RowAttentionProblem& p) {
  if (const std::string why = p.shape.invalid_reason(); !why.empty()) return why;
  if (!head_dim_supported(p.shape.head_dim)) return "row attention: " + head_dim_unsupported_reason(p.shape.head_dim);
  if (p.num_items < 0) return "row attention: num_items must be >= 0";
  if (p.num_rows < 0) return "row attention: num_rows must be >= 0";
  if (p.num_items > 0 && p.max_item_rows < 1) return "row attention: max_item_rows must be >= 1";
  if (p.max_item_tokens < 0 || p.max_item_tokens >= (std::int64_t{1} << 31))
    return "row attention: max_item_tokens must be in [0, 2^31)";
  if (!p.variant.plain()) {
    if (auto why = row_attention_variant_unsupported_reason(p.shape, p.kv_dtype, p.variant)) return "row attention: " + *why;
    // Explicit items (a shared prefix's levels): the soft-cap alone, one query row an item row
    // (kernels/row_attention_variant.cuh).
    if (p.items != nullptr && (p.variant.q_len != 1 || p.variant.window != 0 || p.variant.sinks != nullptr))
      return "row attention: with explicit items the attention variants take the soft-cap alone; q_len, a window "
             "and sinks run on decode items only (items == nullptr)";
  }
  return std::nullopt;
}

std::optional<std::string> row_attention_variant_unsupported_reason(const DecodeShape& shape, DType kv_dtype,
                                                                    const RowAttentionVariant& v) {
  if (v.plain()) return std::nullopt;
  if (v.q_len < 1 || v.q_len > kMaxQueryLen) return "q_len " + std::to_string(v.q_len) + " outside 1..16";
  if (v.window < 0) return "window " + std::to_string(v.window) + " is negative";
  if (!(v.logits_soft_cap >= 0)) return "logits_soft_cap must be >= 0";
  // The twins run on the tensor-core row kernel, which has no FP32 path; FP8 has the narrow tiling's
  // twin at head dim 128 only (kernels/instantiate/row_attention_variant_fp8.cu).
  if (kv_dtype == DType::fp32)
    return "dtype fp32: the attention variants are compiled into the tensor-core row kernel, which has no fp32 path "
           "(fp16, bf16, fp8_e4m3 and fp8_e5m2 only)";
  const int compiled = head_dim_supported(shape.head_dim) ? compiled_head_dim(shape.head_dim) : 0;
  if (compiled != 128 && !(compiled == 64 && kv_dtype == DType::bf16))
    return "head_dim " + std::to_string(shape.head_dim) + " (" + std::string(dtype_name(kv_dtype)) +
           "): the attention variants are compiled for the row kernels of head dim 128 (head dims 80 to 128: fp16, "
           "bf16, fp8_e4m3 and fp8_e5m2) and 64 (head dims 16 to 64, bf16 only)";
  return std::nullopt;
}

std::optional<std::string> row_attention_missing_pointers(const RowAttentionProblem& p) {
  if (p.num_items > 0 && p.items == nullptr && p.seq_lens == nullptr)
    return "row attention: items (or seq_lens for decode items) must be set";
  if (p.num_items > 0 && (p.q == nullptr || p.o == nullptr || p.lse == nullptr))
    return "row attention: q, o and lse must be set";
  return std::nullopt;
}

std::size_t row_work_entries_bytes(const RowAttentionPlan& plan) {
  return (plan.work_entries.size() * sizeof(RowWorkEntry) + 255) / 256 * 256;
}

const char* row_attention_timeline_name(const RowAttentionPlan& plan) {
  if (plan.path != RowAttentionPath::tensor_core) return "row_simt";
  return plan.wgmma ? "row_wgmma" : "row_mma";
}

cudaError_t init_row_attention_workspace(const RowAttentionPlan& plan, void* workspace, cudaStream_t stream) {
  const std::size_t entries_bytes = plan.work_entries.size() * sizeof(RowWorkEntry);
  if (plan.workspace_init_bytes == 0 && entries_bytes == 0) return cudaSuccess;
  if (workspace == nullptr || plan.workspace_init_bytes + entries_bytes > plan.workspace_bytes)
    return cudaErrorInvalidValue;
  if (plan.workspace_init_bytes > 0) {
    if (const cudaError_t e = cudaMemsetAsync(workspace, 0, plan.workspace_init_bytes, stream); e != cudaSuccess)
      return e;
  }
  if (entries_bytes == 0) return cudaSuccess;
  // The entries sit right after the counters (plan_row_attention lays them out so).
  return cudaMemcpyAsync(static_cast<char*>(workspace) + plan.workspace_init_bytes, plan.work_entries.data(),
                         entries_bytes, cudaMemcpyHostToDevice, stream);
}

}  // namespace decode_bench
