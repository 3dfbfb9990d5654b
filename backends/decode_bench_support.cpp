#include "backends/decode_bench_support.hpp"

#include "kernels/decode_launch.hpp"
#include "kernels/decode_problem.hpp"
#include "kernels/shared_prefix_variant.hpp"

namespace decode_bench {

namespace {

// The variants no kernel of this build computes. Refused by name, never computed without them.
// flash_decode and batch_decode compute every variant on the tensor-core row path
// (kernels/row_attention_variant.hpp: FP16 / BF16 / FP8 at head dims 80-128, BF16 at 16-64, GQA
// groups 1-16 and MQA) or, for one query token at groups 1-2 in FP16 / BF16, on the CUDA-core twins
// (a subset of those: kernels/flash_decode_variant.hpp); the shared-prefix composition one query
// token with a window or sinks where its suffix phase takes them (kernels/shared_prefix_variant.hpp);
// the baseline none.
std::optional<std::string> variant_unsupported(KernelKind kernel, const DecodeShape& shape, DType kv_dtype,
                                               const AttentionVariant& variant) {
  if (variant.plain()) return std::nullopt;
  if (kernel == KernelKind::baseline && variant.q_len > 1)
    return "q_len " + std::to_string(variant.q_len) +
           " with kernel baseline: the 3-kernel baseline computes one query token per sequence (one score row per "
           "query head)";
  if (kernel == KernelKind::flash_decode || kernel == KernelKind::batch_decode) {
    // The sinks' logits are device data the problem brings; only whether there are any matters here.
    static const float kSomeSinks = 0.f;
    DecodeProblem problem;
    problem.shape = shape;
    problem.kv_dtype = kv_dtype;
    problem.variant = row_attention_variant(variant, &kSomeSinks);
    if (auto why = decode_unsupported_reason(problem))
      return "decode-bench's " + std::string(kernel_name(kernel)) + " kernels have no build for " +
             variant.describe() + ": " + *why;
    return std::nullopt;
  }
  if (kernel == KernelKind::shared_prefix) {
    static const float kSomeSinks = 0.f;
    if (auto why = shared_prefix_variant_unsupported_reason(shape, kv_dtype, row_attention_variant(variant, &kSomeSinks)))
      return "decode-bench's shared_prefix kernels have no build for " + variant.describe() + ": " + *why;
    return std::nullopt;
  }
  return "decode-bench's " + std::string(kernel_name(kernel)) + " kernels have no build for " + variant.describe();
}

std::optional<std::string> shape_unsupported(KernelKind kernel, const DecodeShape& shape, DType kv_dtype) {
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

}  // namespace

std::optional<std::string> decode_bench_unsupported(KernelKind kernel, const DecodeShape& shape, DType kv_dtype,
                                                    const AttentionVariant& variant) {
  if (auto why = shape_unsupported(kernel, shape, kv_dtype)) return why;
  return variant_unsupported(kernel, shape, kv_dtype, variant);
}

}  // namespace decode_bench
