#pragma once
// The body of single_decode<KV> (flashinfer_single_decode.hpp): FlashInfer's
// SingleDecodeWithKVCacheDispatched at head dimension 128, no positional encoding, q and o in
// io_type_of<KV>; the six GQA groups of its dispatch table, each one kernel per shared-memory stage
// count, and the MergeStates kernel of its split path. 16-bit K/V run FlashInfer's default softmax
// variant (no mask, window, soft cap or ALiBi); FP8 K/V the same with decode-bench's per-KV-head
// scales (flashinfer_kv_head_scale.cuh). Included by one translation unit per K/V type
// (flashinfer_single_decode_<dtype>.cu), which instantiates it.
#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/variants.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"
#include "backends/flashinfer/flashinfer_kv_head_scale.cuh"
#include "backends/flashinfer/flashinfer_single_decode.hpp"
#include "backends/flashinfer/flashinfer_support.hpp"

namespace decode_bench::flashinfer_launch {

template <InstantiatedKv KV>
cudaError_t single_decode(const SingleDecodeArgs<KV>& a, void* workspace, std::size_t workspace_bytes,
                          cudaStream_t stream, std::string* error) {
  using IO = io_type_of<KV>;
  using StockParams = flashinfer::SingleDecodeParams<IO, KV, IO>;
  using Params = std::conditional_t<is_fp8_kv<KV>, KvHeadScaleParams<StockParams>, StockParams>;
  using Variant = std::conditional_t<is_fp8_kv<KV>, KvHeadScaleAttention,
                                     flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                                                  /*logits_soft_cap=*/false, /*alibi=*/false>>;
  if (auto reason = single_decode_unsupported_reason(a)) return refuse(*reason, error);
  if (workspace != nullptr && workspace_bytes < single_decode_workspace_bytes(a)) {
    return refuse("workspace of " + std::to_string(workspace_bytes) + " bytes, " +
                      std::to_string(single_decode_workspace_bytes(a)) + " needed",
                  error);
  }
  Params p;
  p.q = const_cast<IO*>(a.q);
  p.k = const_cast<KV*>(a.k);
  p.v = const_cast<KV*>(a.v);
  p.o = a.o;
  p.lse = a.lse;
  p.kv_len = static_cast<std::uint32_t>(a.kv_len);
  p.num_qo_heads = static_cast<std::uint32_t>(a.heads_q);
  p.num_kv_heads = static_cast<std::uint32_t>(a.heads_kv);
  p.q_stride_n = static_cast<std::uint32_t>(a.heads_q * a.head_dim);
  p.q_stride_h = static_cast<std::uint32_t>(a.head_dim);
  p.kv_stride_n = static_cast<std::uint32_t>(a.kv_token_stride);
  p.kv_stride_h = static_cast<std::uint32_t>(a.kv_head_stride);
  p.window_left = -1;
  p.sm_scale = a.sm_scale;
  p.rope_rcp_scale = 1.f;
  p.rope_rcp_theta = 1.f;
  if constexpr (is_fp8_kv<KV>) {
    p.kv_head_k_scale = a.k_scale;
    p.kv_head_v_scale = a.v_scale;
    p.group_size = static_cast<std::uint32_t>(a.heads_q / a.heads_kv);
  }
  auto* tmp = workspace_bytes > 0 ? static_cast<IO*>(workspace) : nullptr;
  return call_flashinfer(
      [&] {
        return flashinfer::SingleDecodeWithKVCacheDispatched<kHeadDim, flashinfer::PosEncodingMode::kNone, Variant>(
            p, tmp, stream);
      },
      error);
}

}  // namespace decode_bench::flashinfer_launch
