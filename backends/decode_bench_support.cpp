#include "backends/decode_bench_support.hpp"

#include "kernels/decode_launch.hpp"
#include "kernels/decode_problem.hpp"

namespace decode_bench {

std::optional<std::string> decode_bench_unsupported(KernelKind kernel, const DecodeShape& shape, DType kv_dtype) {
  if (kernel == KernelKind::baseline) {
    if (dtype_is_fp8(kv_dtype))
      return "dtype " + std::string(dtype_name(kv_dtype)) +
             ": the 3-kernel baseline has no FP8 path (it reads K/V without dequantization scales)";
    if (!head_dim_supported(shape.head_dim)) return head_dim_unsupported_reason(shape.head_dim);
    if (shape.heads_kv > 0 && shape.heads_q % shape.heads_kv == 0 && !gqa_group_supported(shape.group()))
      return "GQA group " + std::to_string(shape.group()) + " (heads_q " + std::to_string(shape.heads_q) +
             " / heads_kv " + std::to_string(shape.heads_kv) + ") has no compiled baseline kernel (1, 2, 4, 8)";
    return std::nullopt;
  }
  // flash_decode / batch_decode and the shared-prefix phases: the kernels' own rule (grouped
  // FP16/BF16 shapes take the tensor-core row-attention path). Shapes and storage type only: the
  // counts (sequences, lengths) are checked by plan, which sees them.
  DecodeProblem problem;
  problem.shape = shape;
  problem.kv_dtype = kv_dtype;
  return decode_unsupported_reason(problem);
}

}  // namespace decode_bench
