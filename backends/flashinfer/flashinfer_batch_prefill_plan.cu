// FlashInfer's PrefillPlan (its scheduler for BatchPrefillWithPagedKVCache) and our checks of the
// shapes, shared by the FP16 and BF16 run translation units. No kernel is compiled here.
#include "backends/flashinfer/flashinfer_batch_prefill.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <sstream>

#include <flashinfer/attention/scheduler.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

// The arguments FlashInfer's Python wrappers (BatchPrefillWithPagedKVCacheWrapper, and
// BatchDecodeWithPagedKVCacheWrapper with use_tensor_cores) pass by default: no CUDA-graph padding
// (decode-bench plans each batch once, so the grid holds exactly the work items), no fixed split
// size, split allowed, no co-located decode CTAs, no uniform query length; the window is the
// launch's (window_left, -1 without one), as the wrapper passes its own to both.
constexpr bool kEnableCudaGraph = false;
constexpr std::int32_t kFixedSplitSize = -1;
constexpr bool kDisableSplitKv = false;
constexpr std::int64_t kNumColocatedCtas = 0;
constexpr std::int64_t kUniformQLen = 0;
constexpr std::uint32_t kDTypeBytes = 2;  // FP16 and BF16 alike: o and K/V element size

std::optional<std::string> indptr_host_reason(const PagedPrefillArgs& s, const std::int32_t* qo_indptr_host,
                                              const std::int32_t* kv_indptr_host) {
  if (qo_indptr_host == nullptr || kv_indptr_host == nullptr) return "qo_indptr_host and kv_indptr_host must be set";
  if (qo_indptr_host[0] != 0 || kv_indptr_host[0] != 0) return "qo_indptr_host[0] and kv_indptr_host[0] must be 0";
  for (int r = 0; r < s.requests; ++r) {
    if (qo_indptr_host[r + 1] <= qo_indptr_host[r] || kv_indptr_host[r + 1] <= kv_indptr_host[r]) {
      std::ostringstream m;
      m << "request " << r << " has " << qo_indptr_host[r + 1] - qo_indptr_host[r] << " query tokens and "
        << kv_indptr_host[r + 1] - kv_indptr_host[r]
        << " KV pages: FlashInfer's batch prefill is planned here for at least one of each";
      return m.str();
    }
  }
  if (qo_indptr_host[s.requests] != s.total_rows) {
    std::ostringstream m;
    m << "total_rows " << s.total_rows << " must be qo_indptr_host[" << s.requests << "] = "
      << qo_indptr_host[s.requests];
    return m.str();
  }
  return std::nullopt;
}

template <bool Materialize>
cudaError_t plan_impl(const PagedPrefillArgs& s, const std::int32_t* qo_indptr_host, const std::int32_t* kv_indptr_host,
                      void* float_ws, std::size_t float_bytes, void* int_ws, void* int_host, std::size_t int_bytes,
                      cudaStream_t stream, flashinfer::PrefillPlanInfo* info, std::size_t* float_out,
                      std::size_t* int_out) {
  auto* qo = const_cast<std::int32_t*>(qo_indptr_host);
  auto* kv = const_cast<std::int32_t*>(kv_indptr_host);
  const auto u = [](int v) { return static_cast<std::uint32_t>(v); };
  if constexpr (Materialize) {
    return flashinfer::PrefillPlan<std::int32_t>(
        float_ws, float_bytes, int_ws, int_host, int_bytes, *info, qo, kv, u(s.total_rows), u(s.requests),
        u(s.heads_q), u(s.heads_kv), u(s.head_dim), u(s.head_dim), u(s.page_size), kEnableCudaGraph, kDTypeBytes,
        s.window_left, kFixedSplitSize, kDisableSplitKv, kNumColocatedCtas, kUniformQLen, stream, kDTypeBytes);
  } else {
    return flashinfer::PrefillPlanWorkspaceSize<std::int32_t>(
        *float_out, *int_out, qo, kv, u(s.total_rows), u(s.requests), u(s.heads_q), u(s.heads_kv), u(s.head_dim),
        u(s.head_dim), u(s.page_size), kEnableCudaGraph, kDTypeBytes, s.window_left, kFixedSplitSize, kDisableSplitKv,
        kNumColocatedCtas, kUniformQLen, stream, kDTypeBytes);
  }
}

}  // namespace

std::optional<std::string> paged_prefill_unsupported_reason(const PagedPrefillArgs& s) {
  if (s.heads_q < 1 || s.heads_kv < 1 || s.heads_q % s.heads_kv != 0) {
    std::ostringstream m;
    m << "heads_q " << s.heads_q << " must be a positive multiple of heads_kv " << s.heads_kv;
    return m.str();
  }
  if (std::find(std::begin(kPrefillHeadDims), std::end(kPrefillHeadDims), s.head_dim) == std::end(kPrefillHeadDims)) {
    std::ostringstream m;
    m << "head_dim " << s.head_dim << ": the FlashInfer prefill launchers are compiled for head_dim 64, 128 and 256";
    return m.str();
  }
  if (s.requests < 1) return "requests " + std::to_string(s.requests) + " must be >= 1";
  if (s.total_rows < s.requests) return "total_rows " + std::to_string(s.total_rows) + " must be >= requests";
  if (s.page_size < 1) return "page_size " + std::to_string(s.page_size) + " must be >= 1";
  constexpr std::int64_t kMax32 = std::numeric_limits<std::int32_t>::max();
  if (s.q_stride_n != 0 && (s.q_stride_n < std::int64_t{s.heads_q} * s.head_dim || s.q_stride_n > kMax32))
    return "q_stride_n must be 0 (packed) or at least heads_q x head_dim and fit 31 bits (FlashInfer's IdType)";
  if (auto reason = paged_layout_reason(paged_layout_of(s))) return reason;
  if (!(s.sm_scale > 0)) return "sm_scale must be > 0";
  if (s.window_left < -1) return "window_left " + std::to_string(s.window_left) + " must be >= -1 (-1: no window)";
  if (!(s.logits_soft_cap >= 0)) return "logits_soft_cap must be >= 0 (0: off)";
  return std::nullopt;
}

std::optional<std::string> paged_prefill_variant_unsupported_reason(const PagedPrefillArgs& s, int qo_len) {
  if (!paged_prefill_has_variant(s)) return std::nullopt;
  const bool window = s.window_left >= 0, cap = s.logits_soft_cap != 0, sinks = s.sinks != nullptr;
  std::ostringstream m;
  if (s.head_dim != kPrefillVariantHeadDim) {
    m << "head_dim " << s.head_dim << ": the variants of the FlashInfer prefill launchers are compiled for head_dim "
      << kPrefillVariantHeadDim;
    return m.str();
  }
  if (s.causal && (window || cap || sinks))
    return std::string("a causal mask (several query tokens a request) with a window, soft-cap or sinks is not "
                       "compiled: causal alone is");
  if (window && (cap || sinks))
    return std::string("a window with a soft-cap or sinks is not compiled: a window alone is");
  if (!s.causal && qo_len != 1)
    return "qo_len " + std::to_string(qo_len) + " without the causal mask: the variants without it are compiled for "
           "one query token a request";
  const int group = s.heads_kv > 0 ? s.heads_q / s.heads_kv : 0;
  const std::int64_t packed = std::int64_t{qo_len} * group;
  const int max_tile = s.causal ? kPrefillCausalMaxTileQ : kPrefillVariantMaxTileQ;
  if (packed > max_tile) {
    m << qo_len << " query token(s) x GQA group " << group << " = " << packed
      << " packed rows: FlashInfer's plan takes a query tile above " << max_tile
      << ", which is not compiled for this variant (up to " << max_tile << " rows are)";
    return m.str();
  }
  return std::nullopt;
}

cudaError_t paged_prefill_workspace_bytes(const PagedPrefillArgs& s, const std::int32_t* qo_indptr_host,
                                          const std::int32_t* kv_indptr_host, std::size_t* float_bytes,
                                          std::size_t* int_bytes, std::string* error) {
  if (auto reason = paged_prefill_unsupported_reason(s)) return refuse(*reason, error);
  if (auto reason = indptr_host_reason(s, qo_indptr_host, kv_indptr_host)) return refuse(*reason, error);
  return call_flashinfer(
      [&] {
        return plan_impl<false>(s, qo_indptr_host, kv_indptr_host, nullptr, 0, nullptr, nullptr, 0, nullptr, nullptr,
                                float_bytes, int_bytes);
      },
      error);
}

cudaError_t paged_prefill_plan(const PagedPrefillArgs& s, const std::int32_t* qo_indptr_host,
                               const std::int32_t* kv_indptr_host, void* float_workspace, std::size_t float_bytes,
                               void* int_workspace, void* int_workspace_host, std::size_t int_bytes,
                               cudaStream_t stream, PagedPrefillPlan* plan, std::string* error) {
  if (auto reason = paged_prefill_unsupported_reason(s)) return refuse(*reason, error);
  if (auto reason = indptr_host_reason(s, qo_indptr_host, kv_indptr_host)) return refuse(*reason, error);
  if (int_workspace == nullptr || int_workspace_host == nullptr)
    return refuse("the integer workspace (device and host) must be set", error);
  flashinfer::PrefillPlanInfo info;
  const cudaError_t status = call_flashinfer(
      [&] {
        return plan_impl<true>(s, qo_indptr_host, kv_indptr_host, float_workspace, float_bytes, int_workspace,
                               int_workspace_host, int_bytes, stream, &info, nullptr, nullptr);
      },
      error);
  if (status != cudaSuccess) return status;
  if (const cudaError_t sync = wait_for_plan_copy(stream, error); sync != cudaSuccess) return sync;
  plan->padded_batch_size = info.padded_batch_size;
  plan->total_num_rows = info.total_num_rows;
  plan->cta_tile_q = info.cta_tile_q;
  plan->split_kv = info.split_kv;
  plan->kv_chunk_tokens = *flashinfer::GetPtrFromBaseOffset<std::int32_t>(int_workspace_host,
                                                                          info.kv_chunk_size_ptr_offset);
  plan->partial_rows = info.split_kv ? flashinfer::GetPtrFromBaseOffset<std::int32_t>(
                                           int_workspace_host, info.o_indptr_offset)[s.requests]
                                     : 0;
  plan->request_indices_offset = info.request_indices_offset;
  plan->qo_tile_indices_offset = info.qo_tile_indices_offset;
  plan->kv_tile_indices_offset = info.kv_tile_indices_offset;
  plan->merge_indptr_offset = info.merge_indptr_offset;
  plan->o_indptr_offset = info.o_indptr_offset;
  plan->kv_chunk_size_ptr_offset = info.kv_chunk_size_ptr_offset;
  plan->v_offset = info.v_offset;
  plan->s_offset = info.s_offset;
  plan->block_valid_mask_offset = info.block_valid_mask_offset;
  plan->float_workspace_bytes = float_bytes;
  plan->int_workspace_bytes = int_bytes;
  return cudaSuccess;
}

}  // namespace decode_bench::flashinfer_launch
