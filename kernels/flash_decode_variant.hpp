#pragma once
// The attention variants on the CUDA-core split-K flash-decode (docs/kernels/splitk_cuda_core.md,
// "Attention variants"): twins of its kernel and merge that take a sliding window, the logit soft-cap
// and sinks for one query token a sequence, so that MHA-like points (GQA groups 1 and 2, where plain
// decode runs on this family) keep their family when a variant is on. Everything else a variant
// asks for (q_len > 1, groups of 3 or more, other storage types and head dims) stays on the
// tensor-core row family (docs/kernels/rows_mma.md, "Attention variants"), or is refused as before.
//
// The twins are compiled in translation units of their own (kernels/instantiate/decode_variant_*.cu),
// FP16 and BF16 storage at compiled head dim 128 (head dims 80-128), groups 1 and 2, contiguous and
// paged, both CUDA-core tilings (standard, and short at group 1).
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "kernels/decode_launch.hpp"

namespace decode_bench {

// Why the CUDA-core twins cannot compute this variant for this shape and storage type (naming the
// dtype, q_len, group or head dim), or nullopt (a plain variant: nullopt).
std::optional<std::string> flash_decode_variant_unsupported_reason(const DecodeShape& shape, DType kv_dtype,
                                                                   const RowAttentionVariant& variant);

// Whether flash_decode (path automatic) runs this variant problem on the CUDA-core twins: the twins
// take it and the plain problem of the same shape would run on the CUDA cores; and the policy does not
// pin the variants to the tensor-core row family (DECODE_BENCH_FD_VARIANT_PATH=tensor_core).
bool decode_variant_on_cuda_core(const DecodeProblem& problem, const TuningPolicy& tuning);

// Plan and launch of the twins (defined in kernels/flash_decode_variant_launch.cuh, instantiated for
// ContiguousKV and PagedKV of __half and __nv_bfloat16 only). cudaErrorInvalidValue where
// flash_decode_variant_unsupported_reason gives a reason.
template <class KV>
cudaError_t plan_flash_decode_variant(const DecodeProblem& problem, const DecodeOptions& options, DecodePlan* plan);
template <class KV>
cudaError_t run_flash_decode_variant(const KV& kv, const DecodeProblem& problem, const DecodePlan& plan,
                                     void* workspace, cudaStream_t stream);

}  // namespace decode_bench
