#include <string>

#include "kernels/decode_launch.hpp"

namespace decode_bench {

std::optional<std::string> decode_unsupported_reason(const DecodeProblem& p) {
  if (const std::string why = p.shape.invalid_reason(); !why.empty()) return why;
  if (!head_dim_supported(p.shape.head_dim))
    return "head_dim " + std::to_string(p.shape.head_dim) + " has no compiled kernel (supported: 64, 128, 256)";
  if (!gqa_group_supported(p.shape.group()))
    return "GQA group " + std::to_string(p.shape.group()) + " has no compiled kernel (supported: 1, 2, 4, 8)";
  if (p.num_seqs < 1) return "num_seqs must be >= 1";
  if (p.max_len < 0 || p.max_len >= (std::int64_t{1} << 31)) return "sequence lengths must be in [0, 2^31)";
  return std::nullopt;
}

std::optional<std::string> decode_kernel_unsupported_reason(DecodeKernel kernel, const DecodeProblem& p) {
  if (auto why = decode_unsupported_reason(p)) return why;
  if (kernel == DecodeKernel::baseline && dtype_is_fp8(p.kv_dtype))
    return "dtype " + std::string(dtype_name(p.kv_dtype)) +
           ": the 3-kernel baseline has no FP8 path (it reads K/V without dequantization scales); use flash_decode";
  return std::nullopt;
}

cudaError_t init_decode_workspace(const DecodePlan& plan, void* workspace, cudaStream_t stream) {
  if (plan.workspace_init_bytes == 0) return cudaSuccess;
  if (workspace == nullptr || plan.workspace_init_bytes > plan.workspace_bytes) return cudaErrorInvalidValue;
  return cudaMemsetAsync(workspace, 0, plan.workspace_init_bytes, stream);
}

}  // namespace decode_bench
