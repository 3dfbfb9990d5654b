// FlashInfer's BatchDecodeWithPagedKVCacheDispatched, its work estimation and DecodePlan,
// instantiated for FP16 Q/K/V/O, int32 page tables, head dimension 128, no positional encoding and
// its default softmax variant: the six GQA groups of its dispatch table, each one decode kernel, and
// the VariableLengthMergeStates kernel of its split path.
#include "backends/flashinfer/flashinfer_batch_decode.hpp"

#include <limits>
#include <sstream>

#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

using Params = flashinfer::BatchDecodeParams<__half, __half, __half, std::int32_t>;
using Variant = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                             /*logits_soft_cap=*/false, /*alibi=*/false>;
constexpr auto kPosEncoding = flashinfer::PosEncodingMode::kNone;
// FlashInfer's plan sizes its work list for CUDA graphs (a fixed grid) only when asked; decode-bench
// plans each batch once, so the plain plan (grid of exactly the work items) is the one measured.
constexpr bool kEnableCudaGraph = false;

std::optional<std::string> indptr_host_reason(const PagedDecodeArgs& s, const std::int32_t* indptr_host) {
  if (indptr_host == nullptr) return "indptr_host must be set";
  if (indptr_host[0] != 0) return "indptr_host[0] must be 0";
  for (int b = 0; b < s.batch; ++b) {
    if (indptr_host[b + 1] <= indptr_host[b]) {
      // A sequence's length is (pages - 1) * page_size + last_page_len: FlashInfer has no empty one.
      std::ostringstream m;
      m << "sequence " << b << " has no page (indptr_host[" << b << "] = " << indptr_host[b] << ", indptr_host["
        << b + 1 << "] = " << indptr_host[b + 1] << "): FlashInfer's batch decode needs at least one token per sequence";
      return m.str();
    }
  }
  return std::nullopt;
}

// DecodePlan / DecodePlanWorkspaceSize with the work estimation of the problem's GQA group.
template <class Body>
cudaError_t with_work_estimation(int group, Body&& body) {
  DISPATCH_GQA_GROUP_SIZE(static_cast<std::uint32_t>(group), GROUP_SIZE, {
    return body(flashinfer::BatchDecodeWithPagedKVCacheWorkEstimationDispatched<GROUP_SIZE, kHeadDim, kPosEncoding,
                                                                                Variant, Params>);
  });
  return cudaErrorInvalidValue;  // not reached: the dispatch throws on any other group
}

}  // namespace

std::optional<std::string> paged_decode_unsupported_reason(const PagedDecodeArgs& s) {
  if (auto reason = cuda_core_decode_unsupported_reason(s.heads_q, s.heads_kv, s.head_dim)) return reason;
  if (s.batch < 1) return "batch " + std::to_string(s.batch) + " must be >= 1";
  if (s.page_size < 1) return "page_size " + std::to_string(s.page_size) + " must be >= 1";
  const bool packed = s.page_stride == 0 && s.head_stride == 0 && s.token_stride == 0;
  if (!packed) {
    if (s.token_stride < s.head_dim || s.head_stride < s.head_dim || s.page_stride < s.head_dim) {
      return "page_stride, head_stride and token_stride must all be 0 (packed pages) or >= head_dim";
    }
    // FlashInfer keeps the strides in 32 bits (its page offsets are 64-bit).
    constexpr std::int64_t kMax = std::numeric_limits<std::uint32_t>::max();
    if (s.page_stride > kMax || s.head_stride > kMax || s.token_stride > kMax) {
      return "page_stride, head_stride and token_stride must fit 32 bits (FlashInfer's paged_kv_t)";
    }
  } else if (static_cast<std::int64_t>(s.heads_kv) * s.page_size * s.head_dim >
             std::numeric_limits<std::uint32_t>::max()) {
    return "a page of heads_kv x page_size x head_dim elements must fit 32 bits (FlashInfer's paged_kv_t)";
  }
  if (!(s.sm_scale > 0)) return "sm_scale must be > 0";
  return std::nullopt;
}

cudaError_t paged_decode_workspace_bytes_fp16(const PagedDecodeArgs& s, const std::int32_t* indptr_host,
                                              std::size_t* float_bytes, std::size_t* int_bytes,
                                              std::string* error) {
  if (auto reason = paged_decode_unsupported_reason(s)) return refuse(*reason, error);
  if (auto reason = indptr_host_reason(s, indptr_host)) return refuse(*reason, error);
  return call_flashinfer(
      [&] {
        return with_work_estimation(s.heads_q / s.heads_kv, [&](auto estimate) {
          return flashinfer::DecodePlanWorkspaceSize<kHeadDim, kPosEncoding, Variant, Params>(
              *float_bytes, *int_bytes, const_cast<std::int32_t*>(indptr_host), static_cast<std::uint32_t>(s.batch),
              static_cast<std::uint32_t>(s.heads_q), static_cast<std::uint32_t>(s.page_size), kEnableCudaGraph,
              /*stream=*/nullptr, estimate);
        });
      },
      error);
}

cudaError_t paged_decode_plan_fp16(const PagedDecodeArgs& s, const std::int32_t* indptr_host, void* float_workspace,
                                   std::size_t float_bytes, void* int_workspace, void* int_workspace_host,
                                   std::size_t int_bytes, cudaStream_t stream, PagedDecodePlan* plan,
                                   std::string* error) {
  if (auto reason = paged_decode_unsupported_reason(s)) return refuse(*reason, error);
  if (auto reason = indptr_host_reason(s, indptr_host)) return refuse(*reason, error);
  if (int_workspace == nullptr || int_workspace_host == nullptr) {
    return refuse("the integer workspace (device and host) must be set", error);
  }
  flashinfer::DecodePlanInfo info;
  const cudaError_t status = call_flashinfer(
      [&] {
        return with_work_estimation(s.heads_q / s.heads_kv, [&](auto estimate) {
          return flashinfer::DecodePlan<kHeadDim, kPosEncoding, Variant, Params>(
              float_workspace, float_bytes, int_workspace, int_workspace_host, int_bytes, info,
              const_cast<std::int32_t*>(indptr_host), static_cast<std::uint32_t>(s.batch),
              static_cast<std::uint32_t>(s.heads_q), static_cast<std::uint32_t>(s.page_size), kEnableCudaGraph,
              stream, estimate);
        });
      },
      error);
  if (status != cudaSuccess) return status;
  // The plan copied the host work list asynchronously: the host buffer is free once the copy is done.
  if (const cudaError_t sync = cudaStreamSynchronize(stream); sync != cudaSuccess) {
    if (error != nullptr) *error = cudaGetErrorString(sync);
    return sync;
  }
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

cudaError_t paged_decode_run_fp16(const PagedDecodeArgs& a, const PagedDecodePlan& plan, void* float_workspace,
                                  void* int_workspace, cudaStream_t stream, std::string* error) {
  if (auto reason = paged_decode_unsupported_reason(a)) return refuse(*reason, error);
  if (a.q == nullptr || a.k_pages == nullptr || a.v_pages == nullptr || a.page_indices == nullptr ||
      a.indptr == nullptr || a.last_page_len == nullptr || a.o == nullptr) {
    return refuse("q, k_pages, v_pages, page_indices, indptr, last_page_len and o must be set", error);
  }
  if (plan.padded_batch_size < 1 || int_workspace == nullptr) return refuse("run needs a plan and its workspace", error);
  if (plan.split_kv && float_workspace == nullptr) return refuse("a split plan needs its float workspace", error);
  using flashinfer::GetPtrFromBaseOffset;
  Params p;
  p.q = const_cast<__half*>(a.q);
  const bool packed = a.page_stride == 0;
  // HND order: page, head, entry (FlashInfer's kv_strides for QKVLayout::kHND).
  const std::int64_t strides[3] = {packed ? std::int64_t{a.heads_kv} * a.page_size * kHeadDim : a.page_stride,
                                   packed ? std::int64_t{a.page_size} * kHeadDim : a.head_stride,
                                   packed ? std::int64_t{kHeadDim} : a.token_stride};
  p.paged_kv = flashinfer::paged_kv_t<__half, std::int32_t>(
      static_cast<std::uint32_t>(a.heads_kv), static_cast<std::uint32_t>(a.page_size), kHeadDim,
      static_cast<std::uint32_t>(a.batch), flashinfer::QKVLayout::kHND, const_cast<__half*>(a.k_pages),
      const_cast<__half*>(a.v_pages), strides, const_cast<std::int32_t*>(a.page_indices),
      const_cast<std::int32_t*>(a.indptr), const_cast<std::int32_t*>(a.last_page_len));
  p.o = a.o;
  p.lse = a.lse;
  p.num_qo_heads = static_cast<std::uint32_t>(a.heads_q);
  p.q_stride_n = a.heads_q * kHeadDim;
  p.q_stride_h = kHeadDim;
  p.window_left = -1;
  p.sm_scale = a.sm_scale;
  p.rope_rcp_scale = 1.f;
  p.rope_rcp_theta = 1.f;
  p.padded_batch_size = static_cast<std::uint32_t>(plan.padded_batch_size);
  p.request_indices = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.request_indices_offset);
  p.kv_tile_indices = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.kv_tile_indices_offset);
  p.o_indptr = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.o_indptr_offset);
  p.kv_chunk_size_ptr = GetPtrFromBaseOffset<std::int32_t>(int_workspace, plan.kv_chunk_size_ptr_offset);
  __half* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (plan.split_kv) {
    tmp_v = GetPtrFromBaseOffset<__half>(float_workspace, plan.v_offset);
    tmp_s = GetPtrFromBaseOffset<float>(float_workspace, plan.s_offset);
  }
  return call_flashinfer(
      [&] {
        return flashinfer::BatchDecodeWithPagedKVCacheDispatched<kHeadDim, kPosEncoding, Variant>(
            p, tmp_v, tmp_s, /*enable_pdl=*/false, stream);
      },
      error);
}

}  // namespace decode_bench::flashinfer_launch
