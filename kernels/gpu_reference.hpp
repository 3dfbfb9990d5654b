#pragma once
// Float64 reference for one decode step on the device: the same math as kernels/cpu_reference.hpp
// (per query head h, KV head g = h / group: scores s_t = (q_h . k_{g,t}) * scale, their maximum m,
// w_t = exp(s_t - m), sum = sum_t w_t, o_h = sum_t w_t v_t / sum, o_abs_h = sum_t w_t |v_t| / sum,
// lse_h = m + log(sum)), for every sequence of a batch, through the kernels' accessors, every
// stored element read exactly and times the accessor's per-KV-head scale (FP8; 1 otherwise). Only the
// order of the double additions differs (token chunks run in parallel), so it agrees with the
// CPU reference to ~1e-15 relative.
//
// Three launches: chunk maxima, then per chunk sum_t w_t (v, |v|) against the global maximum,
// then the chunk partials summed into (o, o_abs, lse). Scores are recomputed in the second pass
// instead of stored, so the scratch is only O(B * H_q * chunks * D).
//
// The attention variants (kernels/attention_variant.hpp) are parameters of the same three kernels,
// with the definitions of kernels/cpu_reference_variant.hpp: one block row per query row of
// (B, q_len, H_q); query token i sees visible_range(length, q_len, i, window) (a chunk is cut to
// it); a soft-cap maps the scaled score s to cap * tanh(s / cap) in double; a sink logit z_h joins
// the maximum and the denominator (so the lse) and adds nothing to o. At the defaults every one of
// them acts as nothing, so plain decode runs the same operations in the same order as before.
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/attention_variant.hpp"
#include "kernels/decode_shape.hpp"

namespace decode_bench {

// Device outputs, caller-owned: o_ref, o_abs_ref: (B, q_len, H_q, D); lse_ref: (B, q_len, H_q) (-inf
// for a row that sees no token and has no sink, e.g. an empty sequence of plain decode).
struct GpuReferenceOutput {
  double* o = nullptr;
  double* o_abs = nullptr;
  double* lse = nullptr;
};

// Token chunks per query row: enough blocks to fill the GPU, chunks of >= 256 tokens.
int gpu_reference_chunks(const DecodeShape& shape, int batch, std::int64_t max_len, int q_len = 1);
// Scratch the reference needs, in doubles.
std::size_t gpu_reference_workspace_doubles(const DecodeShape& shape, int batch, std::int64_t max_len, int q_len = 1);
// Largest head_dim the kernels' shared memory holds.
int gpu_reference_max_head_dim();

// seq_lens: (batch) int32 on the device, each <= max_len and >= variant.q_len; q: (B, q_len, H_q, D)
// float on the device; sinks: (H_q) float on the device when variant.sinks (else unread); workspace:
// gpu_reference_workspace_doubles(shape, batch, max_len, variant.q_len). cudaErrorInvalidValue for a
// malformed shape or variant, a head_dim over the limit, or sinks asked for without the array.
template <class KV>
cudaError_t gpu_reference_decode_variant(const KV& kv, const DecodeShape& shape, const AttentionVariant& variant,
                                         const float* sinks, int batch, std::int64_t max_len,
                                         const std::int32_t* seq_lens, const float* q, double* workspace,
                                         const GpuReferenceOutput& out, cudaStream_t stream);

// Plain decode: q (B, H_q, D).
template <class KV>
cudaError_t gpu_reference_decode(const KV& kv, const DecodeShape& shape, int batch, std::int64_t max_len,
                                 const std::int32_t* seq_lens, const float* q, double* workspace,
                                 const GpuReferenceOutput& out, cudaStream_t stream) {
  return gpu_reference_decode_variant(kv, shape, AttentionVariant{}, nullptr, batch, max_len, seq_lens, q, workspace,
                                      out, stream);
}

}  // namespace decode_bench
