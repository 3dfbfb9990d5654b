#pragma once
// FlashInfer's batch decode over a paged KV cache (BatchDecodeWithPagedKVCache, its CUDA-core
// kernel), head dimension 128, for each K/V type of flashinfer_types.hpp (q and o in
// io_type_of<KV>), with FlashInfer's plan/run split: plan runs its scheduler on the host (how many
// chunks each sequence is split into, from the device's occupancy) and uploads the work list into
// the integer workspace; run only launches.
//
// Layout (FlashInfer's "HND", decode-bench's paged pool): K, V (num_pages, heads_kv, page_size,
// head_dim); sequence s owns pages page_indices[indptr[s] .. indptr[s+1]) in token order, the last
// holding last_page_len[s] tokens (1..page_size); every sequence has at least one token. Entry e of
// KV head g in page p sits at element p * page_stride + g * head_stride + e * token_stride; the
// strides default (0) to packed pages (heads_kv * page_size * head_dim, page_size * head_dim,
// head_dim). Other strides let page tables address another layout, e.g. decode-bench's contiguous
// slots (slots, heads_kv, max_len, head_dim) as pages of page_size tokens: page_stride = page_size *
// head_dim, head_stride = max_len * head_dim, page p of slot s at index s * heads_kv * max_len /
// page_size + p. q (batch, heads_q, head_dim), o likewise, lse (batch, heads_q) in base 2 (multiply
// by ln 2 for decode-bench's natural log). FP8 K/V: per-KV-head scales as in
// flashinfer_single_decode.hpp.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <string>

#include <cuda_runtime.h>

#include "backends/flashinfer/flashinfer_paged_layout.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"
#include "backends/flashinfer/flashinfer_types.hpp"

namespace decode_bench::flashinfer_launch {

template <InstantiatedKv KV>
struct PagedDecodeArgs {
  using IO = io_type_of<KV>;
  const IO* q = nullptr;                        // device
  const KV* k_pages = nullptr;                  // device
  const KV* v_pages = nullptr;                  // device
  const std::int32_t* page_indices = nullptr;   // device
  const std::int32_t* indptr = nullptr;         // device, batch + 1
  const std::int32_t* last_page_len = nullptr;  // device, batch
  IO* o = nullptr;                              // device
  float* lse = nullptr;                         // device, base 2; nullptr: not written
  const float* k_scale = nullptr;               // (heads_kv), device: FP8 K/V only, required there
  const float* v_scale = nullptr;               // (heads_kv), device: FP8 K/V only, required there
  int batch = 0;
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  int page_size = 0;
  std::int64_t page_stride = 0;   // elements; 0: packed pages (all three 0, or all three set)
  std::int64_t head_stride = 0;   // elements
  std::int64_t token_stride = 0;  // elements
  float sm_scale = 0;
  // Attention variants, FP16 K/V only, through the paged_decode_variant_*_fp16 launchers below:
  // FlashInfer's window_left (the sequence's one query token, at position kv_len - 1, sees KV tokens
  // at least kv_len - 1 - window_left; -1 none) and logits_soft_cap (each scaled logit s becomes
  // cap * tanh(s / cap); 0 off). The kernel masks the tokens outside the window; it reads them all.
  std::int32_t window_left = -1;
  float logits_soft_cap = 0;
};

template <InstantiatedKv KV>
bool paged_decode_has_variant(const PagedDecodeArgs<KV>& a) {
  return a.window_left != -1 || a.logits_soft_cap != 0;
}

// FlashInfer's DecodePlanInfo: where plan put the work list in the workspaces, and its choices.
struct PagedDecodePlan {
  std::int64_t padded_batch_size = 0;  // blocks along x: (sequence, chunk) work items
  bool split_kv = false;               // sequences split into chunks, merged by VariableLengthMergeStates
  std::int64_t v_offset = 0;           // float workspace: partial outputs
  std::int64_t s_offset = 0;           // float workspace: their LSE
  std::int64_t request_indices_offset = 0;
  std::int64_t kv_tile_indices_offset = 0;
  std::int64_t o_indptr_offset = 0;
  std::int64_t block_valid_mask_offset = 0;
  std::int64_t kv_chunk_size_ptr_offset = 0;
  std::size_t float_workspace_bytes = 0;  // as sized for this plan
  std::size_t int_workspace_bytes = 0;
};

// Why these shapes cannot run (head configuration by FlashInfer's table, page size, batch), or nullopt.
// Pointers are not looked at: plan needs none of them.
template <InstantiatedKv KV>
std::optional<std::string> paged_decode_unsupported_reason(const PagedDecodeArgs<KV>& s) {
  if (auto reason = cuda_core_decode_unsupported_reason(s.heads_q, s.heads_kv, s.head_dim)) return reason;
  if (s.batch < 1) return "batch " + std::to_string(s.batch) + " must be >= 1";
  if (s.page_size < 1) return "page_size " + std::to_string(s.page_size) + " must be >= 1";
  if (auto reason = paged_layout_reason(paged_layout_of(s))) return reason;
  if (!(s.sm_scale > 0)) return "sm_scale must be > 0";
  return std::nullopt;
}

// Why a host copy of indptr (batch + 1 page counts) cannot be planned, or nullopt.
std::optional<std::string> paged_decode_indptr_reason(int batch, const std::int32_t* indptr_host);

// The workspaces plan needs for this batch (host copy of indptr, batch + 1 page counts). Reads the
// current device's occupancy, as plan does: call it on the device that will run.
template <InstantiatedKv KV>
cudaError_t paged_decode_workspace_bytes(const PagedDecodeArgs<KV>& shape, const std::int32_t* indptr_host,
                                         std::size_t* float_bytes, std::size_t* int_bytes, std::string* error);

// FlashInfer's DecodePlan: fills int_workspace_host (int_bytes of host memory) and copies it to
// int_workspace (device) on stream, then waits for the stream, so the host buffer may be reused at
// once. Not for stream capture; run is.
template <InstantiatedKv KV>
cudaError_t paged_decode_plan(const PagedDecodeArgs<KV>& shape, const std::int32_t* indptr_host,
                              void* float_workspace, std::size_t float_bytes, void* int_workspace,
                              void* int_workspace_host, std::size_t int_bytes, cudaStream_t stream,
                              PagedDecodePlan* plan, std::string* error);

// Launches the decode (and, when the plan splits, the merge) on stream. The workspaces must be the
// ones plan filled, unchanged. One translation unit per K/V type defines the three
// (flashinfer_batch_decode_paged_<dtype>.cu).
template <InstantiatedKv KV>
cudaError_t paged_decode_run(const PagedDecodeArgs<KV>& args, const PagedDecodePlan& plan, void* float_workspace,
                             void* int_workspace, cudaStream_t stream, std::string* error);

// The three with an attention variant (FP16 K/V, q and o; flashinfer_batch_decode_variants_fp16.cu):
// compiled are the combinations the variants preset (configs/variants.json) runs, a window alone and
// a soft-cap alone (FlashInfer's DefaultAttention with its sliding window, or with its soft-cap).
// The stock launchers above refuse a variant; these refuse its absence.
std::optional<std::string> paged_decode_variant_unsupported_reason(const PagedDecodeArgs<__half>& shape);
cudaError_t paged_decode_variant_workspace_bytes_fp16(const PagedDecodeArgs<__half>& shape,
                                                      const std::int32_t* indptr_host, std::size_t* float_bytes,
                                                      std::size_t* int_bytes, std::string* error);
cudaError_t paged_decode_variant_plan_fp16(const PagedDecodeArgs<__half>& shape, const std::int32_t* indptr_host,
                                           void* float_workspace, std::size_t float_bytes, void* int_workspace,
                                           void* int_workspace_host, std::size_t int_bytes, cudaStream_t stream,
                                           PagedDecodePlan* plan, std::string* error);
cudaError_t paged_decode_variant_run_fp16(const PagedDecodeArgs<__half>& args, const PagedDecodePlan& plan,
                                          void* float_workspace, void* int_workspace, cudaStream_t stream,
                                          std::string* error);

}  // namespace decode_bench::flashinfer_launch
