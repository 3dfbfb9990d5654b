#include "kernels/staged_workspace_init.hpp"

#include <cstddef>

namespace decode_bench {

// The layouts are the planners' (kernels/row_attention_support.cpp, kernels/decode_support.cpp,
// kernels/shared_prefix.cu): counters zeroed at the workspace's start, the work list right after.
cudaError_t init_row_attention_workspace_staged(const RowAttentionPlan& plan, void* workspace, cudaStream_t stream,
                                                HostStaging* staging) {
  const std::size_t entries_bytes = plan.work_entries.size() * sizeof(RowWorkEntry);
  if (plan.workspace_init_bytes == 0 && entries_bytes == 0) return cudaSuccess;
  if (workspace == nullptr || plan.workspace_init_bytes + entries_bytes > plan.workspace_bytes)
    return cudaErrorInvalidValue;
  return upload_zeros_then(workspace, plan.workspace_init_bytes, plan.work_entries.data(), entries_bytes, stream,
                           staging);
}

cudaError_t init_decode_workspace_staged(const DecodePlan& plan, void* workspace, cudaStream_t stream,
                                         HostStaging* staging) {
  if (plan.kernel == DecodeKernel::flash_decode && plan.path == DecodePath::tensor_core)
    return init_row_attention_workspace_staged(plan.rows, workspace, stream, staging);
  const std::size_t items_bytes = plan.work_items.size() * sizeof(DecodeWorkItem);
  if (plan.workspace_init_bytes == 0 && items_bytes == 0) return cudaSuccess;
  if (workspace == nullptr || plan.workspace_init_bytes + items_bytes > plan.workspace_bytes)
    return cudaErrorInvalidValue;
  return upload_zeros_then(workspace, plan.workspace_init_bytes, plan.work_items.data(), items_bytes, stream, staging);
}

cudaError_t init_shared_prefix_workspace_staged(const SharedPrefixPlan& plan, void* workspace, cudaStream_t stream,
                                                HostStaging* staging) {
  if (!workspace || plan.workspace_bytes < plan.metadata.size()) return cudaErrorInvalidValue;
  auto* base = static_cast<std::byte*>(workspace);
  if (const cudaError_t e = upload_zeros_then(base, 0, plan.metadata.data(), plan.metadata.size(), stream, staging);
      e != cudaSuccess)
    return e;
  if (plan.has_prefix) {
    if (const cudaError_t e =
            init_row_attention_workspace_staged(plan.prefix, base + plan.prefix_ws_offset, stream, staging);
        e != cudaSuccess)
      return e;
  }
  return init_decode_workspace_staged(plan.suffix, base + plan.suffix_ws_offset, stream, staging);
}

}  // namespace decode_bench
