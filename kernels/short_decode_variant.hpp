#pragma once
// The attention variants on the short-sequence path (docs/kernels/short_decode.md, "Attention
// variants"): one query token a sequence with a sliding window, the logit soft-cap and sinks, in
// FP16 and BF16 storage, contiguous or paged, both stages. The kernel is the plain one's block with
// the variant lines behind `if constexpr` (kernels/short_decode.cuh, short_decode_kernel<..., ShortDecodeVariantArgs>);
// it is compiled in translation units of its own (kernels/instantiate/short_decode_variant_*.cu),
// so the plain kernels' units (decode_*.cu) keep their code. Which problems it takes and when the
// planner sends them there: decode_short_unsupported_reason and decode_prefers_short
// (kernels/decode_launch.hpp).
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/decode_launch.hpp"

namespace decode_bench {

// The tokens of a sequence the short path stages at most: max_len, or with a window (one query
// token) min(max_len, window). Every rule of the path (decode_short_unsupported_reason,
// decode_prefers_short, the stage, the group's split over blocks, the layout) reads this bound, so
// a 32K-token sequence with a window of 128 is a 128-token short decode. The long stage's automatic
// rule for a variant: a decode the tensor-core row twins would otherwise run (not those of the
// CUDA-core twins at groups 1-2), at any batch.
inline std::int64_t short_decode_tokens(const DecodeProblem& problem) {
  return variant_item_tokens(problem.max_len, problem.variant);
}

// Storage types with short-path variant kernels.
template <class KV>
inline constexpr bool has_short_decode_variant =
    dtype_of<typename KV::value_type>::value == DType::fp16 || dtype_of<typename KV::value_type>::value == DType::bf16;

// Plan and launch (defined in kernels/short_decode_variant_launch.cuh, instantiated for ContiguousKV
// and PagedKV of __half and __nv_bfloat16 only). cudaErrorInvalidValue where
// decode_short_unsupported_reason gives a reason or the variant is plain.
template <class KV>
cudaError_t plan_short_decode_variant(const DecodeProblem& problem, const DecodeOptions& options, DecodePlan* plan);
template <class KV>
cudaError_t run_short_decode_variant(const KV& kv, const DecodeProblem& problem, const DecodePlan& plan,
                                     cudaStream_t stream);

}  // namespace decode_bench
