#pragma once
// Attention sinks (gpt-oss; kernels/attention_variant.hpp: one logit z_h per query head joining the
// softmax's denominator only, o = sum_t e^{s_t} v_t / (e^{z_h} + sum_t e^{s_t}), lse = log(e^{z_h} +
// sum_t e^{s_t})) inside FlashInfer's FA2 prefill kernel, through its variant hooks: FlashInfer's
// default softmax (with or without its soft-cap), plus the update_m_d hook its kernel calls before
// OutputTransform with the block's final running maximum m and sum d (both in its base-2 units of
// the scaled logits: m is max_t s_t log2 e, d = sum_t 2^{s_t log2 e - m}), where the sink joins the
// state as one more logit z_h log2 e. The kernel writes the lse from the updated m and d, and the
// output is rescaled to the new maximum and divided by the new sum.
//
// A split sequence: each KV chunk is its own state, merged afterwards by weights 2^{lse_c}. The sink
// joins chunk 0's state only (kv_tile_idx 0), so the merge counts it once: sum_c 2^{lse_c} is the
// full denominator and chunk 0's o is weighted by its own tokens' share, exactly as without a split.
// FlashInfer's CUDA-core decode kernels call no such hook, so only the prefill path takes sinks.
#include <cstdint>

#include <flashinfer/attention/default_prefill_params.cuh>
#include <flashinfer/attention/variant_helper.cuh>
#include <flashinfer/attention/variants.cuh>
#include <flashinfer/math.cuh>

namespace decode_bench::flashinfer_launch {

// A FlashInfer parameter struct with the sink logits added, as FlashInfer's JIT variants add their
// extra tensors to the parameters.
template <class Base>
struct SinkParams : Base {
  const float* sinks = nullptr;  // (num_qo_heads), device, natural-log logits
};

template <bool SoftCap>
struct SinkAttention : flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false, SoftCap,
                                                    /*alibi=*/false> {
  using Base = flashinfer::DefaultAttention<false, false, SoftCap, false>;

  template <typename Params>
  __device__ __host__ SinkAttention(const Params& params, std::uint32_t batch_idx, std::uint8_t* smem_ptr)
      : Base(params, batch_idx, smem_ptr) {}

  // `scale` carries the rescaling of the output to the new maximum into OutputTransform.
  REGISTER_M_D_UPDATE(params, kv_tile_idx, qo_head_idx, m, d, scale, {
    if (kv_tile_idx != 0) {
      scale = 1.f;
      return;
    }
    const float sink = __ldg(params.sinks + qo_head_idx) * flashinfer::math::log2e;
    const float m_new = fmaxf(float(m), sink);
    scale = flashinfer::math::ptx_exp2(float(m) - m_new);  // 0 where no token was visible (m = -inf)
    d = d * scale + flashinfer::math::ptx_exp2(sink - m_new);
    m = m_new;
  })

  REGISTER_OUTPUT_TRANSFORM(params, output, batch_idx, qo_idx, qo_head_idx, m, d, scale, {
    const float d_rcp = (m != -flashinfer::math::inf) ? flashinfer::math::ptx_rcp(d) : 0.f;
    return output * scale * d_rcp;
  })
};

}  // namespace decode_bench::flashinfer_launch
