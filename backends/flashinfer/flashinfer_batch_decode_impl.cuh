#pragma once
// The bodies of paged_decode_workspace_bytes / _plan / _run<KV> (flashinfer_batch_decode.hpp):
// FlashInfer's BatchDecodeWithPagedKVCacheDispatched, its work estimation and DecodePlan at head
// dimension 128, int32 page tables, no positional encoding, q and o in io_type_of<KV>; the six GQA
// groups of its dispatch table, each one decode kernel per shared-memory stage count, and the
// VariableLengthMergeStates kernel of its split path. 16-bit K/V run FlashInfer's default softmax
// variant; FP8 K/V the same with decode-bench's per-KV-head scales (flashinfer_kv_head_scale.cuh).
// Included by one translation unit per K/V type (flashinfer_batch_decode_paged_<dtype>.cu), which
// instantiates it.
#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>

#include "backends/flashinfer/flashinfer_batch_decode.hpp"
#include "backends/flashinfer/flashinfer_error.hpp"
#include "backends/flashinfer/flashinfer_kv_head_scale.cuh"
#include "backends/flashinfer/flashinfer_support.hpp"

namespace decode_bench::flashinfer_launch {
namespace paged_detail {

template <class KV>
using StockParams = flashinfer::BatchDecodeParams<io_type_of<KV>, KV, io_type_of<KV>, std::int32_t>;
template <class KV>
using Params = std::conditional_t<is_fp8_kv<KV>, KvHeadScaleParams<StockParams<KV>>, StockParams<KV>>;
template <class KV>
using Variant = std::conditional_t<is_fp8_kv<KV>, KvHeadScaleAttention,
                                   flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                                                /*logits_soft_cap=*/false, /*alibi=*/false>>;
constexpr auto kPosEncoding = flashinfer::PosEncodingMode::kNone;
// FlashInfer's plan sizes its work list for CUDA graphs (a fixed grid) only when asked; decode-bench
// plans each batch once, so the plain plan (grid of exactly the work items) is the one measured.
constexpr bool kEnableCudaGraph = false;

// DecodePlan / DecodePlanWorkspaceSize with the work estimation of the problem's GQA group.
template <class KV, class Softmax, class Body>
cudaError_t with_work_estimation(int group, Body&& body) {
  DISPATCH_GQA_GROUP_SIZE(static_cast<std::uint32_t>(group), GROUP_SIZE, {
    return body(flashinfer::BatchDecodeWithPagedKVCacheWorkEstimationDispatched<GROUP_SIZE, kHeadDim, kPosEncoding,
                                                                                Softmax, Params<KV>>);
  });
  return cudaErrorInvalidValue;  // not reached: the dispatch throws on any other group
}

constexpr const char* kVariantElsewhere =
    "a window or soft-cap runs through paged_decode_variant_*_fp16 (flashinfer_batch_decode_variants_fp16.cu)";

// The bodies of the three launchers, with softmax variant Softmax (its window and soft-cap from the
// args). The stock launchers below call them with the K/V type's variant; the variants' translation
// unit with FlashInfer's DefaultAttention of a window or a soft-cap.
template <class KV, class Softmax>
cudaError_t workspace_bytes_with(const PagedDecodeArgs<KV>& s, const std::int32_t* indptr_host,
                                 std::size_t* float_bytes,
                                 std::size_t* int_bytes, std::string* error) {
  if (auto reason = paged_decode_unsupported_reason(s)) return refuse(*reason, error);
  if (auto reason = paged_decode_indptr_reason(s.batch, indptr_host)) return refuse(*reason, error);
  return call_flashinfer(
      [&] {
        return with_work_estimation<KV, Softmax>(s.heads_q / s.heads_kv, [&](auto estimate) {
          return flashinfer::DecodePlanWorkspaceSize<kHeadDim, kPosEncoding, Softmax, Params<KV>>(
              *float_bytes, *int_bytes, const_cast<std::int32_t*>(indptr_host), static_cast<std::uint32_t>(s.batch),
              static_cast<std::uint32_t>(s.heads_q), static_cast<std::uint32_t>(s.page_size), kEnableCudaGraph,
              /*stream=*/nullptr, estimate);
        });
      },
      error);
}

template <class KV, class Softmax>
cudaError_t plan_with(const PagedDecodeArgs<KV>& s, const std::int32_t* indptr_host, void* float_workspace,
                      std::size_t float_bytes, void* int_workspace, void* int_workspace_host, std::size_t int_bytes,
                      cudaStream_t stream, PagedDecodePlan* plan, std::string* error) {
  if (auto reason = paged_decode_unsupported_reason(s)) return refuse(*reason, error);
  if (auto reason = paged_decode_indptr_reason(s.batch, indptr_host)) return refuse(*reason, error);
  if (int_workspace == nullptr || int_workspace_host == nullptr) {
    return refuse("the integer workspace (device and host) must be set", error);
  }
  flashinfer::DecodePlanInfo info;
  const cudaError_t status = call_flashinfer(
      [&] {
        return with_work_estimation<KV, Softmax>(s.heads_q / s.heads_kv, [&](auto estimate) {
          return flashinfer::DecodePlan<kHeadDim, kPosEncoding, Softmax, Params<KV>>(
              float_workspace, float_bytes, int_workspace, int_workspace_host, int_bytes, info,
              const_cast<std::int32_t*>(indptr_host), static_cast<std::uint32_t>(s.batch),
              static_cast<std::uint32_t>(s.heads_q), static_cast<std::uint32_t>(s.page_size), kEnableCudaGraph,
              stream, estimate);
        });
      },
      error);
  if (status != cudaSuccess) return status;
  if (const cudaError_t sync = wait_for_plan_copy(stream, error); sync != cudaSuccess) return sync;
  plan->padded_batch_size = info.padded_batch_size;
  plan->split_kv = info.split_kv;
  plan->v_offset = info.v_offset;
  plan->s_offset = info.s_offset;
  plan->request_indices_offset = info.request_indices_offset;
  plan->kv_tile_indices_offset = info.kv_tile_indices_offset;
  plan->o_indptr_offset = info.o_indptr_offset;
  plan->block_valid_mask_offset = info.block_valid_mask_offset;
  plan->kv_chunk_size_ptr_offset = info.kv_chunk_size_ptr_offset;
  plan->float_workspace_bytes = float_bytes;
  plan->int_workspace_bytes = int_bytes;
  return cudaSuccess;
}

template <class KV, class Softmax>
cudaError_t run_with(const PagedDecodeArgs<KV>& a, const PagedDecodePlan& plan, void* float_workspace,
                     void* int_workspace, cudaStream_t stream, std::string* error) {
  using IO = io_type_of<KV>;
  if (auto reason = paged_decode_unsupported_reason(a)) return refuse(*reason, error);
  if (a.q == nullptr || a.k_pages == nullptr || a.v_pages == nullptr || a.page_indices == nullptr ||
      a.indptr == nullptr || a.last_page_len == nullptr || a.o == nullptr) {
    return refuse("q, k_pages, v_pages, page_indices, indptr, last_page_len and o must be set", error);
  }
  if (auto reason = kv_scales_reason<KV>(a.k_scale, a.v_scale)) return refuse(*reason, error);
  if (plan.padded_batch_size < 1 || int_workspace == nullptr) return refuse("run needs a plan and its workspace", error);
  if (plan.split_kv && float_workspace == nullptr) return refuse("a split plan needs its float workspace", error);
  using flashinfer::GetPtrFromBaseOffset;
  Params<KV> p;
  p.q = const_cast<IO*>(a.q);
  const std::array<std::int64_t, 3> strides = hnd_strides(paged_layout_of(a));
  p.paged_kv = flashinfer::paged_kv_t<KV, std::int32_t>(
      static_cast<std::uint32_t>(a.heads_kv), static_cast<std::uint32_t>(a.page_size), kHeadDim,
      static_cast<std::uint32_t>(a.batch), flashinfer::QKVLayout::kHND, const_cast<KV*>(a.k_pages),
      const_cast<KV*>(a.v_pages), strides.data(), const_cast<std::int32_t*>(a.page_indices),
      const_cast<std::int32_t*>(a.indptr), const_cast<std::int32_t*>(a.last_page_len));
  p.o = a.o;
  p.lse = a.lse;
  p.num_qo_heads = static_cast<std::uint32_t>(a.heads_q);
  p.q_stride_n = a.heads_q * kHeadDim;
  p.q_stride_h = kHeadDim;
  p.window_left = a.window_left;
  p.logits_soft_cap = a.logits_soft_cap;
  p.sm_scale = a.sm_scale;
  p.rope_rcp_scale = 1.f;
  p.rope_rcp_theta = 1.f;
  if constexpr (is_fp8_kv<KV>) {
    p.kv_head_k_scale = a.k_scale;
    p.kv_head_v_scale = a.v_scale;
    p.group_size = static_cast<std::uint32_t>(a.heads_q / a.heads_kv);
  }
  p.padded_batch_size = static_cast<std::uint32_t>(plan.padded_batch_size);
  p.request_indices = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.request_indices_offset);
  p.kv_tile_indices = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.kv_tile_indices_offset);
  p.o_indptr = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.o_indptr_offset);
  p.kv_chunk_size_ptr = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.kv_chunk_size_ptr_offset);
  IO* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (plan.split_kv) {
    tmp_v = GetPtrFromBaseOffset<IO>(float_workspace, plan.v_offset);
    tmp_s = GetPtrFromBaseOffset<float>(float_workspace, plan.s_offset);
  }
  return call_flashinfer(
      [&] {
        return flashinfer::BatchDecodeWithPagedKVCacheDispatched<kHeadDim, kPosEncoding, Softmax>(
            p, tmp_v, tmp_s, /*enable_pdl=*/false, stream);
      },
      error);
}

}  // namespace paged_detail

template <InstantiatedKv KV>
cudaError_t paged_decode_workspace_bytes(const PagedDecodeArgs<KV>& s, const std::int32_t* indptr_host,
                                         std::size_t* float_bytes, std::size_t* int_bytes, std::string* error) {
  if (paged_decode_has_variant(s)) return refuse(paged_detail::kVariantElsewhere, error);
  return paged_detail::workspace_bytes_with<KV, paged_detail::Variant<KV>>(s, indptr_host, float_bytes, int_bytes,
                                                                           error);
}

template <InstantiatedKv KV>
cudaError_t paged_decode_plan(const PagedDecodeArgs<KV>& s, const std::int32_t* indptr_host, void* float_workspace,
                              std::size_t float_bytes, void* int_workspace, void* int_workspace_host,
                              std::size_t int_bytes, cudaStream_t stream, PagedDecodePlan* plan, std::string* error) {
  if (paged_decode_has_variant(s)) return refuse(paged_detail::kVariantElsewhere, error);
  return paged_detail::plan_with<KV, paged_detail::Variant<KV>>(s, indptr_host, float_workspace, float_bytes,
                                                                int_workspace, int_workspace_host, int_bytes, stream,
                                                                plan, error);
}

template <InstantiatedKv KV>
cudaError_t paged_decode_run(const PagedDecodeArgs<KV>& a, const PagedDecodePlan& plan, void* float_workspace,
                             void* int_workspace, cudaStream_t stream, std::string* error) {
  if (paged_decode_has_variant(a)) return refuse(paged_detail::kVariantElsewhere, error);
  return paged_detail::run_with<KV, paged_detail::Variant<KV>>(a, plan, float_workspace, int_workspace, stream, error);
}

}  // namespace decode_bench::flashinfer_launch
