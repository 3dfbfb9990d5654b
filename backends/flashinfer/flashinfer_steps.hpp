#pragma once
// One FlashInfer launch sequence planned inside a backend's plan(): FlashInfer's own plan made on
// the host (its scheduler), the workspaces taken from the point's Workspace, and what run() then
// launches. Shared by the flashinfer_tc backend and the cascade composition
// (flashinfer_cascade.hpp), which chains several.
#include <cstdint>
#include <functional>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "backends/flashinfer/flashinfer_batch_decode.hpp"
#include "backends/flashinfer/flashinfer_batch_prefill.hpp"
#include "harness/backend.hpp"
#include "kernels/dtype.hpp"

namespace decode_bench {

struct PlannedStep {
  std::function<cudaError_t(cudaStream_t)> run;  // launches only
  nlohmann::json plan;                           // FlashInfer's choices, for the point's plan JSON
  double partial_bytes = 0;  // split partials (o and lse) written by the kernel and read back by its merge
};

// Turns a launcher's failure into the exception plan() throws: a refusal (cudaErrorInvalidValue
// with FlashInfer's or our sentence) is std::invalid_argument, anything else CudaError.
void check_flashinfer(cudaError_t status, const std::string& error, const char* what);

// BatchPrefillWithPagedKVCache over `a` (device pointers set) in dtype fp16 or bf16; the host
// indptrs are read by FlashInfer's PrefillPlan. With an attention variant in `a` (FP16 only), its
// compiled launch (paged_prefill_run_variant_fp16).
PlannedStep plan_prefill_step(const flashinfer_launch::PagedPrefillArgs& a, DType dtype,
                              const std::int32_t* qo_indptr_host, const std::int32_t* kv_indptr_host,
                              Workspace& workspace);

// BatchDecodeWithPagedKVCache (CUDA cores, FP16) over `a`; the host indptr is read by DecodePlan.
// With a window or soft-cap in `a`, the variants' launchers (paged_decode_variant_*_fp16).
PlannedStep plan_decode_step_fp16(const flashinfer_launch::PagedDecodeArgs<__half>& a, const std::int32_t* indptr_host,
                                  Workspace& workspace);

}  // namespace decode_bench
