#pragma once
// decode-bench's FP8 caches carry one K and one V dequantization scale per KV head
// (kernels/fp8_quantize.hpp: value = stored x scale[g]). FlashInfer's stock FP8 decode takes one
// scalar for the whole tensor (the K scale folded into sm_scale, the V scale applied to o). Per-head
// scales go through FlashInfer's attention-variant hooks instead, so its kernel stays the one that
// runs: the variant below multiplies each logit by k_scale[kv_head] (LogitsTransform, before
// FlashInfer's own sm_scale * log2 e) and each output by v_scale[kv_head] (OutputTransform, with
// the softmax's 1/d that FlashInfer's default applies there). Both are exact rewrites of the
// dequantized attention: q . (s_k k) = s_k (q . k), and o = sum_t w_t s_v v_t = s_v sum_t w_t v_t.
// When FlashInfer splits a sequence, OutputTransform scales each chunk's partial before its merge;
// the merge is a convex combination, so the merged o carries s_v once, and the LSE (from the
// scaled logits) is the dequantized one.
//
// The scales reach the kernel as two device pointers in the launch's parameter struct: FlashInfer's
// own parameter structs (default_decode_params.cuh) with the pointers and the GQA group added, as
// FlashInfer's JIT variants add their extra tensors to the parameters.
#include <cstdint>

#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/variant_helper.cuh>
#include <flashinfer/attention/variants.cuh>
#include <flashinfer/math.cuh>

namespace decode_bench::flashinfer_launch {

// A FlashInfer decode parameter struct with decode-bench's per-KV-head scales.
template <class Base>
struct KvHeadScaleParams : Base {
  const float* kv_head_k_scale = nullptr;  // (num_kv_heads), device
  const float* kv_head_v_scale = nullptr;  // (num_kv_heads), device
  std::uint32_t group_size = 1;            // query heads per KV head
};

// FlashInfer's default softmax attention (no mask, window, soft cap or ALiBi) with the two hooks
// above. Query head h of a block reads KV head h / group_size (decode.cuh: qo_head = kv_head * bdy + ty).
struct KvHeadScaleAttention : flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                                           /*logits_soft_cap=*/false, /*alibi=*/false> {
  using Base = flashinfer::DefaultAttention<false, false, false, false>;

  template <typename Params>
  __device__ __host__ KvHeadScaleAttention(const Params& params, std::uint32_t batch_idx, std::uint8_t* smem_ptr)
      : Base(params, batch_idx, smem_ptr) {}

  REGISTER_LOGITS_TRANSFORM(params, logits, batch_idx, qo_idx, kv_idx, qo_head_idx, kv_head_idx, {
    return logits * __ldg(params.kv_head_k_scale + kv_head_idx);
  })

  REGISTER_OUTPUT_TRANSFORM(params, output, batch_idx, qo_idx, qo_head_idx, m, d, scale, {
    const float d_rcp = (m != -flashinfer::math::inf) ? flashinfer::math::ptx_rcp(d) : 0.f;
    return output * d_rcp * __ldg(params.kv_head_v_scale + qo_head_idx / params.group_size);
  })
};

}  // namespace decode_bench::flashinfer_launch
