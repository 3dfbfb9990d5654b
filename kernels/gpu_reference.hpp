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
#include <cstddef>
#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/decode_shape.hpp"

namespace decode_bench {

// Device outputs, caller-owned: o_ref, o_abs_ref: (B, H_q, D); lse_ref: (B, H_q) (-inf for an empty sequence).
struct GpuReferenceOutput {
  double* o = nullptr;
  double* o_abs = nullptr;
  double* lse = nullptr;
};

// Token chunks per (sequence, head): enough blocks to fill the GPU, chunks of >= 256 tokens.
int gpu_reference_chunks(const DecodeShape& shape, int batch, std::int64_t max_len);
// Scratch the reference needs, in doubles.
std::size_t gpu_reference_workspace_doubles(const DecodeShape& shape, int batch, std::int64_t max_len);
// Largest head_dim the kernels' shared memory holds.
int gpu_reference_max_head_dim();

// seq_lens: (batch) int32 on the device, each <= max_len; q: (B, H_q, D) float on the device.
template <class KV>
cudaError_t gpu_reference_decode(const KV& kv, const DecodeShape& shape, int batch, std::int64_t max_len,
                                 const std::int32_t* seq_lens, const float* q, double* workspace,
                                 const GpuReferenceOutput& out, cudaStream_t stream);

}  // namespace decode_bench
