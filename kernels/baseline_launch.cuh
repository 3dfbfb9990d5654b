#pragma once
// Host side of the 3-kernel baseline.
#include "harness/cuda_check.hpp"
#include "kernels/baseline.cuh"
#include "kernels/decode_launch.hpp"

namespace decode_bench {

template <class KV>
cudaError_t plan_baseline(const DecodeProblem& p, DecodePlan* plan) {
  plan->kernel = DecodeKernel::baseline;
  plan->num_splits = plan->active_splits = 1;
  plan->chunk = p.max_len;
  plan->tile_tokens = device::kBaselineOutputTile;
  plan->blocks_per_sm = 0;
  plan->workspace_bytes = static_cast<std::size_t>(p.num_seqs) * p.shape.heads_q * std::max<std::int64_t>(p.max_len, 1) *
                          sizeof(float);
  return cudaSuccess;
}

template <class KV>
cudaError_t run_baseline(const KV& kv, const DecodeProblem& p, const DecodePlan&, void* workspace, cudaStream_t stream) {
  if (workspace == nullptr || p.shape.head_dim > 1024) return cudaErrorInvalidValue;
  device::BaselineArgs args{p.q, p.seq_lens, static_cast<float*>(workspace), p.o, p.lse, p.shape.heads_q,
                            p.shape.group(), p.shape.head_dim, std::max<std::int64_t>(p.max_len, 1),
                            static_cast<float>(p.shape.softmax_scale())};
  const std::int64_t score_blocks = (args.max_len + device::kBaselineScoreThreads - 1) / device::kBaselineScoreThreads;
  if (score_blocks > INT32_MAX) return cudaErrorInvalidValue;
  device::baseline_scores_kernel<KV><<<dim3(static_cast<unsigned>(score_blocks), p.shape.heads_q, p.num_seqs),
                                       device::kBaselineScoreThreads, p.shape.head_dim * sizeof(float), stream>>>(kv, args);
  DB_RETURN_IF_ERROR(cudaGetLastError());
  device::baseline_softmax_kernel<<<dim3(p.shape.heads_q, p.num_seqs), device::kBaselineSoftmaxThreads, 0, stream>>>(args);
  DB_RETURN_IF_ERROR(cudaGetLastError());
  device::baseline_output_kernel<KV><<<dim3(p.shape.heads_q, p.num_seqs), p.shape.head_dim, 0, stream>>>(kv, args);
  return cudaGetLastError();
}

}  // namespace decode_bench
