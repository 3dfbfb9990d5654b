#pragma once
// Plan and launch of the CUDA-core split-K variant twins (kernels/flash_decode_variant.hpp). Included
// only by kernels/instantiate/decode_variant_*.cu: the twins compile in units of their own, so the
// plain kernels' units (decode_*.cu) keep their code.
#include <algorithm>
#include <vector>

#include "kernels/flash_decode_launch.cuh"
#include "kernels/flash_decode_variant.hpp"

namespace decode_bench {

// f.template run<D, GROUP>() for the twins' compiled head dim (128: head dims 80-128) and groups 1, 2.
template <class F>
cudaError_t dispatch_variant_head_dim_group(int head_dim, int group, const F& f) {
  if (!head_dim_supported(head_dim) || compiled_head_dim(head_dim) != 128) return cudaErrorInvalidValue;
  switch (group) {
    case 1: return f.template run<128, 1>();
    case 2: return f.template run<128, 2>();
    default: return cudaErrorInvalidValue;
  }
}

template <class KV>
cudaError_t plan_flash_decode_variant(const DecodeProblem& p, const DecodeOptions& options, DecodePlan* plan) {
  if (flash_decode_variant_unsupported_reason(p.shape, p.kv_dtype, p.variant)) return cudaErrorInvalidValue;
  // A window is planned as full attention over its tokens (min(len, window) a sequence): the kernel
  // starts each sequence's splits at its first visible token.
  DecodeProblem tokens = p;
  tokens.max_len = variant_item_tokens(p.max_len, p.variant);
  std::vector<std::int32_t> window_lens;
  if (p.variant.window > 0 && p.host_seq_lens != nullptr) {
    window_lens.assign(p.host_seq_lens, p.host_seq_lens + p.num_seqs);
    for (std::int32_t& len : window_lens) len = std::min(len, p.variant.window);
    tokens.host_seq_lens = window_lens.data();
  }
  *plan = DecodePlan{};
  return dispatch_variant_head_dim_group(p.shape.head_dim, p.shape.group(), PlanFlashDecode<KV, true>{tokens, options, plan});
}

template <class KV>
cudaError_t run_flash_decode_variant(const KV& kv, const DecodeProblem& p, const DecodePlan& plan, void* workspace,
                                     cudaStream_t stream) {
  if (flash_decode_variant_unsupported_reason(p.shape, p.kv_dtype, p.variant) || plan.path != DecodePath::cuda_core)
    return cudaErrorInvalidValue;
  return dispatch_variant_head_dim_group(p.shape.head_dim, p.shape.group(),
                                         RunFlashDecode<KV, true>{kv, p, plan, workspace, stream});
}

}  // namespace decode_bench

#define DECODE_BENCH_INSTANTIATE_DECODE_VARIANT(KV)                                                            \
  template cudaError_t decode_bench::plan_flash_decode_variant<KV>(                                            \
      const decode_bench::DecodeProblem&, const decode_bench::DecodeOptions&, decode_bench::DecodePlan*);        \
  template cudaError_t decode_bench::run_flash_decode_variant<KV>(const KV&, const decode_bench::DecodeProblem&, \
                                                                  const decode_bench::DecodePlan&, void*, cudaStream_t);
