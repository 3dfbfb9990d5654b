#pragma once
// What the `flashinfer` and `flashinfer_tc` backends share: the refusals that are FlashInfer's
// whatever its kernel (kernels it has no path for, a pinned split count, empty sequences, a
// shared-prefix batch its cascade cannot take), the base-2 LSE, the launch a plan leaves behind,
// its plan JSON and traffic model, and the cascade step for kernel shared_prefix. Each backend keeps
// its own kernel choice, dtypes and plan of a plain decode.
#include <functional>
#include <optional>
#include <string>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "backends/flashinfer/flashinfer_cascade.hpp"
#include "backends/flashinfer/flashinfer_slot_pages.hpp"
#include "harness/backend.hpp"
#include "kernels/traffic_model.hpp"

namespace decode_bench {

class FlashInferBackendBase : public Backend {
 public:
  // The flashinfer-python release whose headers this build compiled.
  std::string version() const override;
  LseBase lse_base() const override { return LseBase::two; }
  cudaError_t run(cudaStream_t stream) override;
  nlohmann::json plan_json() const override { return plan_json_; }
  std::optional<BackendTrafficModel> traffic_model(const AttentionProblem&) const override;

 protected:
  // The refusals both backends make, in this order: a kernel no backend computes, baseline, a
  // shared-prefix batch the cascade cannot take or asked to overlap, a pinned `blocks`, an empty
  // sequence. Each backend checks its own dtypes and shapes around it.
  // Attention variants are each backend's own (variant_refusal below and its own paths); here only
  // those through the cascade are refused.
  static std::optional<std::string> common_refusal(const AttentionProblem& p);
  // The variants' refusals both backends make (FlashInfer's variants are compiled for the variants
  // preset's FP16 at head dim 128 only), or nullopt; nullopt for a plain problem.
  static std::optional<std::string> variant_refusal(const AttentionProblem& p);
  // The q / o dtype both take: BF16 for BF16 K/V, FP16 otherwise.
  static DType io_dtype_for(DType kv_dtype) { return kv_dtype == DType::bf16 ? DType::bf16 : DType::fp16; }
  // Refuses a problem whose io_dtype is not the one asked for; then forgets the last plan and starts
  // the plan JSON with `path`.
  void start_plan(const AttentionProblem& p, const char* path);
  // kernel shared_prefix: FlashInfer's cascade with the suffix through `suffix`; sets the launch,
  // plan JSON and traffic model.
  void plan_cascade_step(const AttentionProblem& p, CascadeSuffix suffix, Workspace& workspace);
  // The minimum the pipeline would count for this problem, so GB/s compare across backends: the
  // plain decode's, or over a shared-prefix batch (kernel batch_decode) the plain decode of its
  // pages, with the shared tokens it reads again, or with attention variants theirs
  // (kernels/variant_traffic_model.hpp: a window's tokens only, q_len rows of q and o), as
  // decode-bench's own backend counts them.
  static TrafficModel minimum_model(const AttentionProblem& p);

  std::function<cudaError_t(cudaStream_t)> launch_;
  nlohmann::json plan_json_;
  TrafficModel base_model_;
  std::string basis_;
  double extra_bytes_ = 0;
  SlotPages slots_;  // the page tables into contiguous slots, kept until the next plan
};

}  // namespace decode_bench
