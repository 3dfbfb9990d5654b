#pragma once
// plan_decode / run_decode for one accessor type. Included only by kernels/instantiate/*.cu,
// one file per (layout, storage type), so the ten instantiations compile in parallel.
// FP8 storage runs only through flash_decode (either path): the 3-kernel baseline is never
// instantiated for it, and plan_decode refuses it (decode_kernel_unsupported_reason says why).
// Attention variants on the CUDA-core path run its twins, compiled in kernels/instantiate/
// decode_variant_*.cu for FP16 and BF16 (kernels/flash_decode_variant.hpp); these units only call them.
// So do the short-sequence path's variant kernels (kernels/short_decode_variant.hpp,
// kernels/instantiate/short_decode_variant_*.cu).
#include "kernels/baseline_launch.cuh"
#include "kernels/flash_decode_launch.cuh"
#include "kernels/flash_decode_variant.hpp"
#include "kernels/short_decode_launch.cuh"
#include "kernels/short_decode_variant.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {

// Storage types with CUDA-core variant twins (kernels/instantiate/decode_variant_*.cu).
template <class KV>
inline constexpr bool has_flash_decode_variant_twins =
    dtype_of<typename KV::value_type>::value == DType::fp16 || dtype_of<typename KV::value_type>::value == DType::bf16;

// Grouped decode on the tensor-core row-attention path (kernels/row_attention_launch.cuh,
// instantiated in kernels/instantiate/row_attention_*.cu).
template <class KV>
cudaError_t plan_decode_rows(const DecodeProblem& problem, const DecodeOptions& options, DecodePlan* plan) {
  if (!decode_tensor_core_supported(problem)) return cudaErrorInvalidValue;
  // Ragged batches with host lengths: the row-attention work list (DECODE_BENCH_FD_BALANCE=0: off).
  RowAttentionOptions row_options{RowAttentionPath::tensor_core, options.splits};
  row_options.tuning = options.tuning;
  row_options.balance = options.tuning.fd_balance;
  // Work stealing among an item's splits: paged K/V only, where it measured faster
  // (kRowStealDefault, kernels/tuning_policy.hpp); DECODE_BENCH_ROW_STEAL pins it.
  row_options.steal_pool = options.tuning.row_steal.value_or(is_paged_accessor<KV>::value ? kRowStealDefault : 0.0);
  const RowAttentionProblem rows = decode_as_row_attention(problem);
  DB_RETURN_IF_ERROR(plan_row_attention<KV>(rows, row_options, &plan->rows));
  plan->kernel = DecodeKernel::flash_decode;
  plan->path = DecodePath::tensor_core;
  plan->num_splits = plan->rows.splits;
  // The uniform grid's splits that hold a token of the longest item (a pinned count may end in
  // empty ones); a work list's chunks are never empty.
  plan->active_splits = plan->rows.work_entries.empty()
                            ? nonempty_chunks(rows.max_item_tokens, plan->rows.splits, plan->rows.tile_tokens)
                            : plan->rows.splits;
  plan->work_items = plan->rows.work_seq_items;  // per-sequence chunks; a block per (chunk, KV head, row block)
  plan->chunk_bound = plan->rows.chunk_bound;
  if (!plan->rows.work_entries.empty()) plan->chunk = plan->rows.chunk_bound;  // each chunk one contiguous range
  plan->tile_tokens = plan->rows.tile_tokens;
  plan->blocks_per_sm = plan->rows.blocks_per_sm;
  plan->fused_merge = plan->rows.splits > 1 && !plan->rows.separate_merge;
  plan->workspace_bytes = plan->rows.workspace_bytes;
  plan->workspace_init_bytes = plan->rows.workspace_init_bytes;
  return cudaSuccess;
}

template <class KV>
cudaError_t plan_decode(DecodeKernel kernel, const DecodeProblem& problem, const DecodeOptions& options,
                        DecodePlan* plan) {
  if (decode_unsupported_reason(problem) || problem.kv_dtype != dtype_of<typename KV::value_type>::value)
    return cudaErrorInvalidValue;
  if (decode_kernel_unsupported_reason(kernel, problem)) return cudaErrorInvalidValue;
  *plan = DecodePlan{};  // each planner sets only its own fields; none may survive from an earlier plan
  // Short sequences (or windows): one block per (sequence, KV head), whole sequences staged
  // (kernels/short_decode.cuh); one query token with a variant on its variant kernels (FP16 / BF16);
  // an explicit short_seq the kernel cannot run is refused.
  if (kernel == DecodeKernel::flash_decode &&
      (options.path == DecodePath::short_seq ||
       (options.path == DecodePath::automatic && short_decode_automatic<KV>(problem, options)))) {
    if (problem.variant.plain()) return plan_short_decode<KV>(problem, options, plan);
    if constexpr (has_short_decode_variant<KV>) return plan_short_decode_variant<KV>(problem, options, plan);
    else return cudaErrorInvalidValue;
  }
  if (kernel == DecodeKernel::flash_decode &&
      (options.path == DecodePath::tensor_core ||
       (options.path == DecodePath::automatic && options.heads_per_block <= 0 && decode_prefers_tensor_core(problem, options.tuning))))
    return plan_decode_rows<KV>(problem, options, plan);
  if (kernel == DecodeKernel::flash_decode && !gqa_group_supported(problem.shape.group())) return cudaErrorInvalidValue;
  if (!problem.variant.plain()) {
    // One query token with a window, soft-cap or sinks at groups 1-2: the CUDA-core twins (they refuse the rest).
    if constexpr (has_flash_decode_variant_twins<KV>) return plan_flash_decode_variant<KV>(problem, options, plan);
    else return cudaErrorInvalidValue;
  }
  if constexpr (dtype_is_fp8(dtype_of<typename KV::value_type>::value)) {
    return plan_flash_decode<KV>(problem, options, plan);  // the baseline was refused above
  } else {
    return kernel == DecodeKernel::baseline ? plan_baseline<KV>(problem, plan)
                                            : plan_flash_decode<KV>(problem, options, plan);
  }
}

template <class KV>
cudaError_t run_decode(const KV& kv, const DecodeProblem& problem, const DecodePlan& plan, void* workspace,
                       cudaStream_t stream) {
  if (problem.kv_dtype != dtype_of<typename KV::value_type>::value) return cudaErrorInvalidValue;
  if (plan.kernel == DecodeKernel::flash_decode && plan.path == DecodePath::short_seq) {
    if (problem.variant.plain()) return run_short_decode<KV>(kv, problem, plan, stream);
    if constexpr (has_short_decode_variant<KV>) return run_short_decode_variant<KV>(kv, problem, plan, stream);
    else return cudaErrorInvalidValue;
  }
  if (plan.kernel == DecodeKernel::flash_decode && plan.path == DecodePath::tensor_core)
    return run_row_attention<KV>(kv, decode_as_row_attention(problem), plan.rows, workspace, stream);
  if (!problem.variant.plain()) {
    if (plan.kernel != DecodeKernel::flash_decode) return cudaErrorInvalidValue;
    if constexpr (has_flash_decode_variant_twins<KV>) return run_flash_decode_variant<KV>(kv, problem, plan, workspace, stream);
    else return cudaErrorInvalidValue;
  }
  if constexpr (dtype_is_fp8(dtype_of<typename KV::value_type>::value)) {
    if (plan.kernel == DecodeKernel::baseline) return cudaErrorInvalidValue;
    return run_flash_decode<KV>(kv, problem, plan, workspace, stream);
  } else {
    return plan.kernel == DecodeKernel::baseline ? run_baseline<KV>(kv, problem, plan, workspace, stream)
                                                 : run_flash_decode<KV>(kv, problem, plan, workspace, stream);
  }
}

}  // namespace decode_bench

#define DECODE_BENCH_INSTANTIATE_DECODE(KV)                                                                      \
  template cudaError_t decode_bench::plan_decode<KV>(decode_bench::DecodeKernel, const decode_bench::DecodeProblem&, \
                                                     const decode_bench::DecodeOptions&, decode_bench::DecodePlan*); \
  template cudaError_t decode_bench::run_decode<KV>(const KV&, const decode_bench::DecodeProblem&,                  \
                                                    const decode_bench::DecodePlan&, void*, cudaStream_t);
