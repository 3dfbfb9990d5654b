#include "backends/flashinfer/flashinfer_steps.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/cuda_check.hpp"

namespace decode_bench {

using namespace flashinfer_launch;

void check_flashinfer(cudaError_t status, const std::string& error, const char* what) {
  if (status == cudaSuccess) return;
  if (status == cudaErrorInvalidValue) throw std::invalid_argument(std::string("FlashInfer ") + what + ": " + error);
  throw CudaError(status, std::string("FlashInfer ") + what + ": " + cudaGetErrorName(status) + " (" + error + ")");
}

PlannedStep plan_prefill_step(const PagedPrefillArgs& a, DType dtype, const std::int32_t* qo_indptr_host,
                              const std::int32_t* kv_indptr_host, Workspace& workspace) {
  if (dtype != DType::fp16 && dtype != DType::bf16)
    throw std::invalid_argument("FlashInfer batch prefill: dtype " + std::string(dtype_name(dtype)) +
                                " is not compiled (fp16 and bf16 are)");
  const bool variant = paged_prefill_has_variant(a);
  if (variant && dtype != DType::fp16)
    throw std::invalid_argument("FlashInfer batch prefill: its attention variants are compiled for fp16, not " +
                                std::string(dtype_name(dtype)));
  std::string error;
  std::size_t float_bytes = 0, int_bytes = 0;
  check_flashinfer(paged_prefill_workspace_bytes(a, qo_indptr_host, kv_indptr_host, &float_bytes, &int_bytes, &error),
                   error, "batch prefill plan");
  void* float_ws = workspace.allocate(float_bytes);
  void* int_ws = workspace.allocate(int_bytes);
  // PrefillPlan's host image of the work list; the plan waits for its upload, so it may go after.
  std::vector<unsigned char> int_host(int_bytes, 0);
  PagedPrefillPlan plan;
  check_flashinfer(paged_prefill_plan(a, qo_indptr_host, kv_indptr_host, float_ws, float_bytes, int_ws, int_host.data(),
                                      int_bytes, workspace.stream(), &plan, &error),
                   error, "batch prefill plan");
  // The query tile FlashInfer's plan picked must be one compiled for the variant (supports() predicts
  // it from FlashInfer's rule; this holds the plan to it).
  const std::int64_t max_tile = a.causal ? kPrefillCausalMaxTileQ : kPrefillVariantMaxTileQ;
  if (variant && plan.cta_tile_q > max_tile)
    throw std::invalid_argument("FlashInfer batch prefill plan: query tile " + std::to_string(plan.cta_tile_q) +
                                " is not compiled for the attention variants (up to " + std::to_string(max_tile) + ")");
  const auto run = variant ? &paged_prefill_run_variant_fp16
                           : dtype == DType::fp16 ? &paged_prefill_run_fp16 : &paged_prefill_run_bf16;
  PlannedStep step;
  step.run = [a, plan, float_ws, int_ws, run](cudaStream_t s) { return run(a, plan, float_ws, int_ws, s, nullptr); };
  // Each partial row holds heads_q outputs of head_dim elements (the o dtype, 2 bytes) and an FP32 lse.
  step.partial_bytes = 2.0 * static_cast<double>(plan.partial_rows) * a.heads_q * (a.head_dim * 2.0 + sizeof(float));
  step.plan = {{"cta_tile_q", plan.cta_tile_q},
               {"split_kv", plan.split_kv},
               {"work_items", plan.padded_batch_size},
               {"partial_rows", plan.partial_rows},
               {"float_workspace_bytes", float_bytes},
               {"int_workspace_bytes", int_bytes}};
  if (plan.split_kv) step.plan["kv_chunk_tokens"] = plan.kv_chunk_tokens;
  return step;
}

PlannedStep plan_decode_step_fp16(const PagedDecodeArgs<__half>& a, const std::int32_t* indptr_host, Workspace& workspace) {
  // A window or soft-cap goes through the variants' launchers (the stock ones refuse it).
  const bool variant = paged_decode_has_variant(a);
  const auto bytes_of = variant ? &paged_decode_variant_workspace_bytes_fp16 : &paged_decode_workspace_bytes<__half>;
  const auto plan_of = variant ? &paged_decode_variant_plan_fp16 : &paged_decode_plan<__half>;
  const auto run_of = variant ? &paged_decode_variant_run_fp16 : &paged_decode_run<__half>;
  std::string error;
  std::size_t float_bytes = 0, int_bytes = 0;
  check_flashinfer(bytes_of(a, indptr_host, &float_bytes, &int_bytes, &error), error, "batch decode plan");
  void* float_ws = workspace.allocate(float_bytes);
  void* int_ws = workspace.allocate(int_bytes);
  std::vector<unsigned char> int_host(int_bytes, 0);
  PagedDecodePlan plan;
  check_flashinfer(plan_of(a, indptr_host, float_ws, float_bytes, int_ws, int_host.data(), int_bytes, workspace.stream(),
                           &plan, &error),
                   error, "batch decode plan");
  PlannedStep step;
  step.run = [a, plan, float_ws, int_ws, run_of](cudaStream_t s) {
    return run_of(a, plan, float_ws, int_ws, s, nullptr);
  };
  // Split work items write their partial o (fp16) and lse (fp32) and the merge reads them back.
  if (plan.split_kv)
    step.partial_bytes = 2.0 * static_cast<double>(plan.padded_batch_size) * a.heads_q *
                         (a.head_dim * sizeof(__half) + sizeof(float));
  step.plan = {{"split_kv", plan.split_kv},
               {"work_items", plan.padded_batch_size},
               {"float_workspace_bytes", float_bytes},
               {"int_workspace_bytes", int_bytes}};
  return step;
}

}  // namespace decode_bench
