#pragma once
// FlashInfer's batch prefill over a paged KV cache (BatchPrefillWithPagedKVCache, its FA2
// tensor-core kernel), head dimension 64, 128 or 256, no mask, with FlashInfer's plan/run split:
// plan runs its scheduler (PrefillPlan) on the host, which picks the query tile (cta_tile_q 16, 64
// or 128 from the average packed query length, query tokens x GQA group; 128 only below head
// dimension 256) and how many chunks each request's KV is split into, and uploads the work list
// into the integer workspace; run only launches (the kernel, then VariableLengthMergeStates when
// the plan split).
//
// Requests: request r has the query tokens qo_indptr[r] .. qo_indptr[r + 1] (any number >= 1) and
// the KV pages kv_indptr[r] .. kv_indptr[r + 1] of page_indices (at least one), the last holding
// last_page_len[r] tokens. Every query token of a request attends to every KV token of it (no
// causal mask: decode and the shared levels of a cascade need none), unless the attention variants
// below ask otherwise.
// Attention variants (FlashInfer's MaskMode::kCausal, its DefaultAttention's sliding window and
// soft-cap, and decode-bench's sink variant, flashinfer_sink_attention.cuh), FP16 at head dimension
// 128 only, through paged_prefill_run_variant_fp16; query token i of a request of n query tokens
// over kv_len KV tokens sits at position kv_len - n + i:
//   causal           it sees KV tokens at most its own position (MaskMode::kCausal)
//   window_left w    it sees KV tokens at least its position - w (FlashInfer's window_left; -1 none)
//   logits_soft_cap  each scaled logit s becomes cap * tanh(s / cap) (0 off)
//   sinks            (heads_q) natural-log sink logits z_h joining each softmax's denominator
//                    (e^{z_h} + sum_t e^{s_t}) and its lse; nullptr none
//   q (total_rows, heads_q, head_dim), row t at q + t * q_stride_n (default heads_q * head_dim)
//   o (total_rows, heads_q, head_dim) packed, lse (total_rows, heads_q) base 2 (times ln 2 for the
//   natural log), total_rows = qo_indptr[requests].
// KV pages are FlashInfer's HND with explicit strides as in flashinfer_batch_decode.hpp: entry e of
// KV head g in page p at p * page_stride + g * head_stride + e * token_stride elements; all three
// 0 for packed pages.
// The dtype of q, K/V and o is one of FP16 and BF16 (one run function, one translation unit each);
// plan depends on none of it (both are 2 bytes).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include "backends/flashinfer/flashinfer_paged_layout.hpp"

namespace decode_bench::flashinfer_launch {

struct PagedPrefillArgs {
  const void* q = nullptr;                      // device, __half or __nv_bfloat16
  const void* k_pages = nullptr;                // device
  const void* v_pages = nullptr;                // device
  const std::int32_t* qo_indptr = nullptr;      // device, requests + 1
  const std::int32_t* page_indices = nullptr;   // device
  const std::int32_t* kv_indptr = nullptr;      // device, requests + 1
  const std::int32_t* last_page_len = nullptr;  // device, requests
  void* o = nullptr;                            // device
  float* lse = nullptr;                         // device, base 2; nullptr: not written
  int requests = 0;
  int total_rows = 0;  // qo_indptr[requests]
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  int page_size = 0;
  std::int64_t q_stride_n = 0;    // elements between query tokens; 0: heads_q * head_dim
  std::int64_t page_stride = 0;   // elements; 0: packed pages (all three 0, or all three set)
  std::int64_t head_stride = 0;   // elements
  std::int64_t token_stride = 0;  // elements
  float sm_scale = 0;
  // The attention variants (above); the defaults are the stock launch.
  bool causal = false;
  std::int32_t window_left = -1;
  float logits_soft_cap = 0;
  const float* sinks = nullptr;  // device, (heads_q)
};

// Whether `a` asks for an attention variant (then only paged_prefill_run_variant_fp16 runs it).
inline bool paged_prefill_has_variant(const PagedPrefillArgs& a) {
  return a.causal || a.window_left >= 0 || a.logits_soft_cap != 0 || a.sinks != nullptr;
}

// FlashInfer's PrefillPlanInfo: its choices and where plan put the work list in the workspaces.
struct PagedPrefillPlan {
  std::int64_t padded_batch_size = 0;  // blocks along x: (request, query tile, KV chunk) work items
  std::int64_t total_num_rows = 0;
  std::int64_t cta_tile_q = 0;         // 16, 64 or 128
  bool split_kv = false;               // KV split into chunks, merged by VariableLengthMergeStates
  std::int64_t kv_chunk_tokens = 0;    // tokens per KV chunk (of the split)
  std::int64_t partial_rows = 0;       // split: query rows x chunks, the partial states merged; else 0
  std::int64_t request_indices_offset = 0;
  std::int64_t qo_tile_indices_offset = 0;
  std::int64_t kv_tile_indices_offset = 0;
  std::int64_t merge_indptr_offset = 0;
  std::int64_t o_indptr_offset = 0;
  std::int64_t kv_chunk_size_ptr_offset = 0;
  std::int64_t v_offset = 0;           // float workspace: partial outputs (o dtype)
  std::int64_t s_offset = 0;           // float workspace: their LSE
  std::int64_t block_valid_mask_offset = 0;
  std::size_t float_workspace_bytes = 0;
  std::size_t int_workspace_bytes = 0;
};

// The head dimensions compiled, and the query tiles: every value FlashInfer's FA2DetermineCtaTileQ
// picks at these head dimensions (16, 64, and 128 below head dimension 256); its dispatch also
// names 32, which it picks only at head dimension 512 and which is not compiled here.
inline constexpr int kPrefillHeadDims[] = {64, 128, 256};
inline constexpr int kPrefillCtaTilesQ[] = {16, 64, 128};

// The attention variants compiled (flashinfer_batch_prefill_variants_fp16.cu), the combinations the
// variants preset (configs/variants.json) runs, each with the largest query tile compiled for it:
// causal alone (speculative decoding's q_len query tokens a request: tiles 16 and 64, so up to 64
// packed rows, q_len x GQA group), and on one query token a request (no mask) a window alone, a
// soft-cap alone, sinks, or sinks with a soft-cap (tile 16: a GQA group up to 16).
inline constexpr int kPrefillVariantHeadDim = 128;
inline constexpr int kPrefillCausalMaxTileQ = 64;
inline constexpr int kPrefillVariantMaxTileQ = 16;

// Why the variants of `a` with `qo_len` query tokens in every request are not compiled, or nullopt
// (also without a variant). The query tile is FlashInfer's FA2DetermineCtaTileQ of the packed
// length qo_len x GQA group: 16 up to 16 rows, 64 up to 64, else 128. Of the pointers only sinks
// is looked at (set or not).
std::optional<std::string> paged_prefill_variant_unsupported_reason(const PagedPrefillArgs& a, int qo_len);

// Why these shapes cannot run (heads, head dim, page size, requests, strides), or nullopt. Pointers
// are not looked at.
std::optional<std::string> paged_prefill_unsupported_reason(const PagedPrefillArgs& shape);

// The workspaces plan needs (host copies of qo_indptr and kv_indptr, requests + 1 each). Reads the
// current device's SM count and compute capability, as plan does: call it on the device that runs.
cudaError_t paged_prefill_workspace_bytes(const PagedPrefillArgs& shape, const std::int32_t* qo_indptr_host,
                                          const std::int32_t* kv_indptr_host, std::size_t* float_bytes,
                                          std::size_t* int_bytes, std::string* error);

// FlashInfer's PrefillPlan with its Python wrapper's defaults (no CUDA graph padding, no fixed split
// size, split allowed, no co-located CTAs) and the args' window_left, as its wrapper passes it: fills int_workspace_host (int_bytes of host memory),
// copies it to int_workspace on stream and waits for the stream, so the host buffer may be reused
// at once. Not for stream capture; run is.
cudaError_t paged_prefill_plan(const PagedPrefillArgs& shape, const std::int32_t* qo_indptr_host,
                               const std::int32_t* kv_indptr_host, void* float_workspace, std::size_t float_bytes,
                               void* int_workspace, void* int_workspace_host, std::size_t int_bytes,
                               cudaStream_t stream, PagedPrefillPlan* plan, std::string* error);

// Launches the prefill kernel (and, when the plan splits, the merge) on stream; PDL off. The
// workspaces must be the ones plan filled, unchanged.
cudaError_t paged_prefill_run_fp16(const PagedPrefillArgs& args, const PagedPrefillPlan& plan, void* float_workspace,
                                   void* int_workspace, cudaStream_t stream, std::string* error);
cudaError_t paged_prefill_run_bf16(const PagedPrefillArgs& args, const PagedPrefillPlan& plan, void* float_workspace,
                                   void* int_workspace, cudaStream_t stream, std::string* error);
// The same for FP16 with an attention variant (paged_prefill_variant_unsupported_reason says which
// are compiled); the plain and BF16 launches refuse a variant.
cudaError_t paged_prefill_run_variant_fp16(const PagedPrefillArgs& args, const PagedPrefillPlan& plan,
                                           void* float_workspace, void* int_workspace, cudaStream_t stream,
                                           std::string* error);

}  // namespace decode_bench::flashinfer_launch
