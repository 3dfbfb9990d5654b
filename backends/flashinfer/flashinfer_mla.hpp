#pragma once
// FlashInfer's MLA decode over a paged latent cache (BatchMLAPagedAttention of
// attention/mla.cuh, its FA2 tensor-core kernel on mma.sync, or BatchMLAPageAttentionHopper of
// attention/mla_hopper.cuh, its Hopper kernel on warpgroup MMA) with its plan/run split: plan runs
// its scheduler (MLAPlan, attention/scheduler.cuh) on the host, which balances (request, query
// tile, KV chunk) work items over one cluster of CTAs per SM (clusters of 2 CTAs when a request's
// packed query rows, q_len x heads, average above 64) and splits long KV ranges, and uploads the
// work list into the integer workspace; run only launches its persistent cooperative kernel,
// which also merges the split partials (a grid-wide sync, then FlashInfer's merge in the same
// kernel).
//
// Shapes, in decode-bench's MLA layout (kernels/mla/mla_shape.hpp):
//   q (batch, q_len, heads, 576): query position i of sequence b, head h at row (b q_len + i) heads
//     + h; FlashInfer reads q_nope = q and q_pe = q + 512 with token stride heads x 576 and head
//     stride 576 (its packed row index is token x heads + head, the same order).
//   o (batch, q_len, heads, 512), lse (batch, q_len, heads) base 2 (times ln 2 for the natural log).
//   latent rows of 576 elements: ckv = latent, kpe = latent + kpe_offset, pages of page_size rows
//     (flashinfer_mla_layout.hpp), the pages of request b page_indices[kv_indptr[b] ..
//     kv_indptr[b + 1]).
// The mask is causal, right-aligned (MaskMode::kCausal): query position i of q_len sees the KV
// tokens 0 .. len - q_len + i, decode-bench's multi-token-prediction rule; at q_len 1 it masks
// nothing. q, the latents and o share one dtype, FP16 or BF16 (one run function and translation
// unit each); plan depends on neither.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_runtime.h>

namespace decode_bench::flashinfer_launch {

struct MlaArgs {
  const void* q = nullptr;                     // device, __half or __nv_bfloat16
  const void* latent = nullptr;                // device, the latent rows
  const std::int32_t* page_indices = nullptr;  // device
  void* o = nullptr;                           // device
  float* lse = nullptr;                        // device, base 2; nullptr: not written
  int batch = 0;
  int q_len = 0;
  int heads = 0;
  int kv_lora_rank = 0;  // 512 (compiled)
  int rope_dim = 0;      // 64 (compiled)
  int page_size = 0;
  std::int64_t page_stride = 0;  // elements between pages
  std::int64_t row_stride = 0;   // elements between tokens of a page (>= kv_lora_rank + rope_dim)
  std::int64_t kpe_offset = 0;   // kpe = latent + kpe_offset elements
  float sm_scale = 0;
};

// FlashInfer's MLAPlanInfo (where plan put the work list and the partials) and what it chose.
struct MlaPlan {
  std::int64_t num_blks_x = 0;  // CTAs a cluster (1 or 2)
  std::int64_t num_blks_y = 0;  // clusters (SMs / CTAs a cluster)
  std::int64_t q_indptr_offset = 0, kv_indptr_offset = 0, partial_indptr_offset = 0;
  std::int64_t merge_packed_offset_start_offset = 0, merge_packed_offset_end_offset = 0;
  std::int64_t merge_partial_packed_offset_start_offset = 0, merge_partial_packed_offset_end_offset = 0;
  std::int64_t merge_partial_stride_offset = 0;
  std::int64_t q_len_offset = 0, kv_len_offset = 0, q_start_offset = 0, kv_start_offset = 0, kv_end_offset = 0;
  std::int64_t work_indptr_offset = 0;
  std::int64_t partial_o_offset = 0, partial_lse_offset = 0;
  // Read back from the host image of the work list:
  std::int64_t work_items = 0;    // (request, query tile, KV chunk) items over all clusters
  std::int64_t merge_ranges = 0;  // query-row ranges whose KV was split, each merged by one CTA
  std::int64_t partial_rows = 0;  // partial (o, lse) rows written by split items and merged
  std::size_t float_workspace_bytes = 0;
  std::size_t int_workspace_bytes = 0;
};

// MLAPlan writes at most this many work items (its max_total_num_works) into arrays of that size.
inline constexpr std::int64_t kMlaMaxWorkItems = 16384;

// The workspaces MLAPlan fills for a device of `num_sm` SMs, in closed form from its allocations
// (it has no size query): nine integer arrays of kMlaMaxWorkItems int32 and five of num_sm, each
// 16-byte aligned; partial outputs (16-bit, 512 wide) and their FP32 LSE for 2 x clusters x cluster
// query tile rows, at most 2 x num_sm x 64 for either cluster size. FlashInfer's allocator refuses a
// workspace too small, so a miscount is an error, never an overrun.
inline void mla_workspace_bytes(int num_sm, std::size_t* float_bytes, std::size_t* int_bytes) {
  const auto align16 = [](std::size_t n) { return (n + 15) / 16 * 16; };
  const std::size_t sms = num_sm > 0 ? static_cast<std::size_t>(num_sm) : 0;
  *int_bytes = 9 * align16(sizeof(std::int32_t) * kMlaMaxWorkItems) + 5 * align16(sizeof(std::int32_t) * sms);
  const std::size_t partial_rows = 2 * sms * 64;
  *float_bytes = align16(partial_rows * 2 * 512) + align16(partial_rows * sizeof(float));
}

// Why these shapes cannot run (dims, heads, page size, strides, q_len), or nullopt; pointers are
// not looked at.
std::optional<std::string> mla_unsupported_reason(const MlaArgs& shape);

// Why MLAPlan's work list could outgrow kMlaMaxWorkItems on a device of num_sm SMs, or nullopt:
// it has at least one item per (request, query tile) and, splitting, at most one more per cluster
// (bounded with tiles of 64 packed rows, the smaller cluster tile).
std::optional<std::string> mla_work_list_reason(int batch, int q_len, int heads, int num_sm);

// FlashInfer's MLAPlan for requests of q_len query tokens over kv_len_host[b] tokens in the pages
// kv_indptr_host[b] .. kv_indptr_host[b + 1], causal: fills int_workspace_host (int_bytes of host
// memory), copies it to int_workspace on stream and waits, so the host buffer may be reused at once.
// Reads the current device's SM count, as FlashInfer's plan does. Not for stream capture; run is.
cudaError_t mla_plan(const MlaArgs& shape, const std::int32_t* kv_indptr_host, const std::int32_t* kv_len_host,
                     void* float_workspace, std::size_t float_bytes, void* int_workspace, void* int_workspace_host,
                     std::size_t int_bytes, cudaStream_t stream, MlaPlan* plan, std::string* error);

// Launches FlashInfer's MLA kernel (a cooperative launch of num_blks_x x num_blks_y CTAs) on stream;
// the workspaces must be the ones plan filled, unchanged.
cudaError_t mla_run_fp16(const MlaArgs& args, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                         cudaStream_t stream, std::string* error);
cudaError_t mla_run_bf16(const MlaArgs& args, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                         cudaStream_t stream, std::string* error);

// Launches FlashInfer's Hopper MLA kernel (attention/mla_hopper.cuh; compute capability 9.0 only) on
// the same plan and workspaces, also a cooperative launch of num_blks_x x num_blks_y CTAs. In a build
// without it (flashinfer_build::kMlaFa3NotBuiltReason) they return cudaErrorNotSupported with that reason.
cudaError_t mla_fa3_run_fp16(const MlaArgs& args, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                             cudaStream_t stream, std::string* error);
cudaError_t mla_fa3_run_bf16(const MlaArgs& args, const MlaPlan& plan, void* float_workspace, void* int_workspace,
                             cudaStream_t stream, std::string* error);

}  // namespace decode_bench::flashinfer_launch
