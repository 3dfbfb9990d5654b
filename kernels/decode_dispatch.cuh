#pragma once
// plan_decode / run_decode for one accessor type. Included only by kernels/instantiate/*.cu,
// one file per (layout, storage type), so the ten instantiations compile in parallel.
// FP8 storage runs only through flash-decode: the 3-kernel baseline is never instantiated for it,
// and plan_decode refuses it (decode_kernel_unsupported_reason says why).
#include "kernels/baseline_launch.cuh"
#include "kernels/flash_decode_launch.cuh"

namespace decode_bench {

template <class KV>
cudaError_t plan_decode(DecodeKernel kernel, const DecodeProblem& problem, const DecodeOptions& options,
                        DecodePlan* plan) {
  if (decode_unsupported_reason(problem) || problem.kv_dtype != dtype_of<typename KV::value_type>::value)
    return cudaErrorInvalidValue;
  if (decode_kernel_unsupported_reason(kernel, problem)) return cudaErrorInvalidValue;
  *plan = DecodePlan{};  // each planner sets only its own fields; none may survive from an earlier plan
  if constexpr (dtype_is_fp8(dtype_of<typename KV::value_type>::value)) return plan_flash_decode<KV>(problem, options, plan);
  else
    return kernel == DecodeKernel::baseline ? plan_baseline<KV>(problem, plan)
                                            : plan_flash_decode<KV>(problem, options, plan);
}

template <class KV>
cudaError_t run_decode(const KV& kv, const DecodeProblem& problem, const DecodePlan& plan, void* workspace,
                       cudaStream_t stream) {
  if (problem.kv_dtype != dtype_of<typename KV::value_type>::value) return cudaErrorInvalidValue;
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
