#pragma once
// The body of paged_prefill_run_<dtype> (flashinfer_batch_prefill.hpp), included by one translation
// unit per dtype: FlashInfer's BatchPrefillWithPagedKVCacheDispatched at each head dimension
// (kPrefillHeadDims) and each query tile its plan picks there (kPrefillCtaTilesQ; not 128 at head
// dimension 256), MaskMode::kNone, no positional encoding, FP32 QK accumulation and its default
// softmax variant. FlashInfer dispatches further, at run time, over
// how many 16-token KV steps a block keeps in shared memory (from the device's shared memory), so
// each query tile compiles those kernels too. launch_head_dim is the one launch body, also for the
// attention variants' translation unit (flashinfer_batch_prefill_variants_fp16.cu), which picks
// another mask, softmax variant and parameter struct and compiles fewer query tiles.
#include <flashinfer/allocator.h>
#include <flashinfer/attention/default_prefill_params.cuh>
#include <flashinfer/attention/mask.cuh>
#include <flashinfer/attention/prefill.cuh>
#include <flashinfer/attention/variants.cuh>

#include "backends/flashinfer/flashinfer_batch_prefill.hpp"
#include "backends/flashinfer/flashinfer_error.hpp"

namespace decode_bench::flashinfer_launch::prefill_detail {

using Variant = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                             /*logits_soft_cap=*/false, /*alibi=*/false>;
constexpr auto kPosEncoding = flashinfer::PosEncodingMode::kNone;
constexpr auto kMask = flashinfer::MaskMode::kNone;
constexpr bool kFp16QkReduction = false;

template <class T>
using StockParams = flashinfer::BatchPrefillPagedParams<T, T, T, std::int32_t>;

// One launch at head dimension HeadDim with mask Mask and softmax variant Softmax, whose parameter
// struct Params is FlashInfer's (or one deriving from it); `extend` fills what a derived struct
// adds. Query tiles up to MaxTileQ are compiled (FA2DetermineCtaTileQ picks 128 only below head
// dimension 256); a plan that picked another is refused with a sentence.
template <class T, std::uint32_t HeadDim, flashinfer::MaskMode Mask, class Softmax, class Params,
          std::uint32_t MaxTileQ, class Extend>
cudaError_t launch_head_dim(const PagedPrefillArgs& a, const PagedPrefillPlan& plan, void* float_workspace,
                            void* int_workspace, cudaStream_t stream, std::string* error, Extend&& extend) {
  if (a.q == nullptr || a.k_pages == nullptr || a.v_pages == nullptr || a.qo_indptr == nullptr ||
      a.page_indices == nullptr || a.kv_indptr == nullptr || a.last_page_len == nullptr || a.o == nullptr)
    return refuse("q, k_pages, v_pages, qo_indptr, page_indices, kv_indptr, last_page_len and o must be set", error);
  if (plan.padded_batch_size < 1 || int_workspace == nullptr) return refuse("run needs a plan and its workspace", error);
  if (plan.split_kv && float_workspace == nullptr) return refuse("a split plan needs its float workspace", error);
  using flashinfer::GetPtrFromBaseOffset;
  const std::array<std::int64_t, 3> strides = hnd_strides(paged_layout_of(a));
  const flashinfer::paged_kv_t<T, std::int32_t> paged_kv(
      static_cast<std::uint32_t>(a.heads_kv), static_cast<std::uint32_t>(a.page_size), HeadDim,
      static_cast<std::uint32_t>(a.requests), flashinfer::QKVLayout::kHND,
      static_cast<T*>(const_cast<void*>(a.k_pages)), static_cast<T*>(const_cast<void*>(a.v_pages)), strides.data(),
      const_cast<std::int32_t*>(a.page_indices), const_cast<std::int32_t*>(a.kv_indptr),
      const_cast<std::int32_t*>(a.last_page_len));
  const std::int64_t q_stride_n = a.q_stride_n != 0 ? a.q_stride_n : std::int64_t{a.heads_q} * HeadDim;
  Params p;
  static_cast<StockParams<T>&>(p) = StockParams<T>(
      static_cast<T*>(const_cast<void*>(a.q)), paged_kv, /*maybe_custom_mask=*/nullptr,
      const_cast<std::int32_t*>(a.qo_indptr), /*maybe_mask_indptr=*/nullptr, /*maybe_q_rope_offset=*/nullptr,
      static_cast<T*>(a.o), a.lse, /*maybe_alibi_slopes=*/nullptr, static_cast<std::uint32_t>(a.heads_q),
      static_cast<std::int32_t>(q_stride_n), /*q_stride_h=*/HeadDim, a.window_left, a.logits_soft_cap, a.sm_scale,
      /*rope_scale=*/1.f, /*rope_theta=*/1e4f);
  extend(p);
  p.request_indices = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.request_indices_offset);
  p.qo_tile_indices = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.qo_tile_indices_offset);
  p.kv_tile_indices = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.kv_tile_indices_offset);
  p.o_indptr = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.o_indptr_offset);
  p.kv_chunk_size_ptr = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.kv_chunk_size_ptr_offset);
  p.padded_batch_size = static_cast<std::uint32_t>(plan.padded_batch_size);
  p.max_total_num_rows = static_cast<std::uint32_t>(plan.total_num_rows);
  T* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (plan.split_kv) {
    p.merge_indptr = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.merge_indptr_offset);
    tmp_v = GetPtrFromBaseOffset<T>(float_workspace, plan.v_offset);
    tmp_s = GetPtrFromBaseOffset<float>(float_workspace, plan.s_offset);
  }
  return call_flashinfer(
      [&]() -> cudaError_t {
        // Our own switch over the tiles kPrefillCtaTilesQ names (FlashInfer's DISPATCH_CTA_TILE_Q
        // would also compile 32, which its plan never picks at head dimension 128).
        const auto launch = [&](auto tile) {
          return flashinfer::BatchPrefillWithPagedKVCacheDispatched<decltype(tile)::value, HeadDim, HeadDim,
                                                                    kPosEncoding, kFp16QkReduction, Mask, Softmax,
                                                                    Params>(p, tmp_v, tmp_s, /*enable_pdl=*/false,
                                                                            stream);
        };
        switch (plan.cta_tile_q) {
          case 16: return launch(std::integral_constant<std::uint32_t, 16>{});
          case 64:
            if constexpr (MaxTileQ >= 64) return launch(std::integral_constant<std::uint32_t, 64>{});
            [[fallthrough]];
          case 128:
            // FA2DetermineCtaTileQ picks 128 rows only below head dimension 256.
            if constexpr (HeadDim < 256 && MaxTileQ >= 128)
              if (plan.cta_tile_q == 128) return launch(std::integral_constant<std::uint32_t, 128>{});
            [[fallthrough]];
          default:
            if (error != nullptr) *error = "the plan's cta_tile_q " + std::to_string(plan.cta_tile_q) + " is not compiled";
            return cudaErrorInvalidValue;
        }
      },
      error);
}

// The stock launch: no mask, FlashInfer's default softmax, every query tile.
template <class T, std::uint32_t HeadDim>
cudaError_t run_head_dim(const PagedPrefillArgs& a, const PagedPrefillPlan& plan, void* float_workspace,
                         void* int_workspace, cudaStream_t stream, std::string* error) {
  return launch_head_dim<T, HeadDim, kMask, Variant, StockParams<T>, 128>(a, plan, float_workspace, int_workspace,
                                                                          stream, error, [](StockParams<T>&) {});
}

template <class T>
cudaError_t run(const PagedPrefillArgs& a, const PagedPrefillPlan& plan, void* float_workspace, void* int_workspace,
                cudaStream_t stream, std::string* error) {
  if (auto reason = paged_prefill_unsupported_reason(a)) return refuse(*reason, error);
  if (paged_prefill_has_variant(a))
    return refuse("a causal mask, window, soft-cap or sinks runs through paged_prefill_run_variant_fp16", error);
  switch (a.head_dim) {
    case 64: return run_head_dim<T, 64>(a, plan, float_workspace, int_workspace, stream, error);
    case 128: return run_head_dim<T, 128>(a, plan, float_workspace, int_workspace, stream, error);
    default: return run_head_dim<T, 256>(a, plan, float_workspace, int_workspace, stream, error);
  }
}

}  // namespace decode_bench::flashinfer_launch::prefill_detail
