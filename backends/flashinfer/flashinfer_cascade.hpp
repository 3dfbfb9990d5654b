#pragma once
// FlashInfer's cascade over a shared-prefix batch (kernel shared_prefix), composed as its
// MultiLevelCascadeAttentionWrapper composes it:
//   1. the unique suffix of every sequence (its own pages, from suffix_begin) into o and lse:
//      batch prefill with one query token per request (flashinfer_tc) or FlashInfer's CUDA-core
//      batch decode (flashinfer, FP16 and the GQA groups of its table);
//   2. per depth of the layout's levels (kernels/shared_prefix_layout.hpp), one batch prefill whose
//      requests are that depth's levels: level l's query tokens are the queries of its sequences
//      (consecutive rows of q, so q is read in place), its KV the level's pages; into a level state;
//   3. per depth, MergeStateInPlace of that level state into o and lse.
// Page tables for both are built on the device from the pool's (segments copied in plan()); every
// host step is in plan(), run() launches FlashInfer's kernels only. o, lse in FlashInfer's base 2.
#include <functional>
#include <optional>
#include <string>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "harness/attention_problem.hpp"
#include "harness/backend.hpp"

namespace decode_bench {

enum class CascadeSuffix { batch_prefill, cuda_core_decode };

// Why the cascade cannot run this problem (kernel shared_prefix's batch: paged, each depth's levels
// over consecutive sequences, every sequence with a suffix of its own), or nullopt. The dtype and
// head configuration are the calling backend's to check.
std::optional<std::string> cascade_unsupported_reason(const AttentionProblem& p);

struct PlannedCascade {
  std::function<cudaError_t(cudaStream_t)> run;
  nlohmann::json plan;     // "suffix" and "levels" (one entry per depth), FlashInfer's choices in each
  double extra_bytes = 0;  // level states written and merged, suffix states re-read and rewritten by
                           // the merge, every step's split partials
  int launches = 0;        // kernels per run, at most
};

// Plans the composition for p (io dtype = kv dtype, fp16 or bf16; cuda_core_decode: fp16 only).
// Throws std::invalid_argument for what FlashInfer or the checks refuse, CudaError for CUDA's.
PlannedCascade plan_cascade(const AttentionProblem& p, CascadeSuffix suffix, Workspace& workspace);

}  // namespace decode_bench
