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
