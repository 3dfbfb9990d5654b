#pragma once
// Plan and launch of the short-sequence path's attention-variant kernels (kernels/short_decode_variant.hpp):
// the plain path's planner and launch at kVariant = true (kernels/short_decode_launch.cuh). Included
// only by kernels/instantiate/short_decode_variant_*.cu: 6 kernels an accessor type (head bounds 4,
// 8 and 16 at each of the two stages).
#include "kernels/short_decode_launch.cuh"
#include "kernels/short_decode_variant.hpp"

namespace decode_bench {

template <class KV>
cudaError_t plan_short_decode_variant(const DecodeProblem& p, const DecodeOptions& options, DecodePlan* plan) {
  return plan_short_decode<KV, true>(p, options, plan);
}

template <class KV>
cudaError_t run_short_decode_variant(const KV& kv, const DecodeProblem& p, const DecodePlan& plan, cudaStream_t stream) {
  if (plan.path != DecodePath::short_seq) return cudaErrorInvalidValue;
  return run_short_decode<KV, true>(kv, p, plan, stream);
}

}  // namespace decode_bench

#define DECODE_BENCH_INSTANTIATE_SHORT_DECODE_VARIANT(KV)                                                      \
  template cudaError_t decode_bench::plan_short_decode_variant<KV>(                                            \
      const decode_bench::DecodeProblem&, const decode_bench::DecodeOptions&, decode_bench::DecodePlan*);        \
  template cudaError_t decode_bench::run_short_decode_variant<KV>(const KV&, const decode_bench::DecodeProblem&, \
                                                                  const decode_bench::DecodePlan&, cudaStream_t);
