#include "kernels/gpu_reference.hpp"

#include <algorithm>
#include <cmath>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/kv_accessor.hpp"

namespace decode_bench {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = 32 * kWarps;
// Shared memory: q (D) + per warp accumulators for o and o_abs (2 * kWarps * D), all double.
constexpr int kMaxHeadDim = 48 * 1024 / (8 * (1 + 2 * kWarps));

__device__ __forceinline__ double stored_to_double(float x) { return x; }
__device__ __forceinline__ double stored_to_double(__half x) { return __half2float(x); }
__device__ __forceinline__ double stored_to_double(__nv_bfloat16 x) { return __bfloat162float(x); }
// FP8 through cuda_fp8.h's conversion (via FP16, exact: every E4M3 and E5M2 value is an FP16 value).
__device__ __forceinline__ double stored_to_double(__nv_fp8_e4m3 x) { return static_cast<float>(x); }
__device__ __forceinline__ double stored_to_double(__nv_fp8_e5m2 x) { return static_cast<float>(x); }

__device__ __forceinline__ double warp_sum(double x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// The variant's parameters ride along: q_len 1, window 0, cap 0 and no sinks are plain decode.
struct Geometry {
  int heads_q, group, head_dim, chunks, q_len;
  std::int64_t chunk_tokens, window;
  double scale, cap;      // cap 0: no soft-cap
  const float* sinks;     // (H_q), nullptr: no sinks
};

// The sink logit of query head h, -inf without sinks (then it changes no maximum).
__device__ __forceinline__ double sink_logit(const Geometry& g, int head) {
  return g.sinks == nullptr ? -INFINITY : static_cast<double>(g.sinks[head]);
}

// Block (row, c), row = (b * q_len + i) * H_q + h of the (B, q_len, H_q) query rows: the tokens of
// [c * chunk_tokens, (c + 1) * chunk_tokens) that query token i sees (visible_range; for plain
// decode all of [0, len)), with the KV head's dequantization scales (1 unless FP8).
struct BlockRange {
  int seq, head, kv_head;
  std::int64_t row, begin, end;
  double k_scale, v_scale;
};

template <class KV>
__device__ BlockRange block_range(const KV& kv, const Geometry& g, const std::int32_t* seq_lens) {
  BlockRange r;
  r.row = blockIdx.x;
  r.seq = static_cast<int>(r.row / (static_cast<std::int64_t>(g.q_len) * g.heads_q));
  const int token = static_cast<int>(r.row / g.heads_q % g.q_len);
  r.head = static_cast<int>(r.row % g.heads_q);
  r.kv_head = r.head / g.group;
  r.k_scale = kv_scale(kv.k_scale, r.kv_head);
  r.v_scale = kv_scale(kv.v_scale, r.kv_head);
  const VisibleRange vis = visible_range(seq_lens[r.seq], g.q_len, token, g.window);
  const std::int64_t end = vis.end > 0 ? vis.end : 0;  // a sequence shorter than q_len: nothing
  r.begin = min(end, max(vis.begin, blockIdx.y * g.chunk_tokens));
  r.end = max(r.begin, min(end, blockIdx.y * g.chunk_tokens + g.chunk_tokens));
  return r;
}

__device__ void load_q(double* q_s, const float* q, const Geometry& g, const BlockRange& r) {
  const float* qh = q + r.row * g.head_dim;
  for (int i = threadIdx.x; i < g.head_dim; i += blockDim.x) q_s[i] = qh[i];
  __syncthreads();
}

// s_t = (q . k_t) * scale, soft-capped when asked for, every lane of the warp gets it. Each K
// element is dequantized as the CPU reference does (stored * k_scale, exact in double) before its
// product with q.
template <class KV>
__device__ double score(const KV& kv, const double* q_s, const Geometry& g, const BlockRange& r, std::int64_t t) {
  const auto* k = kv.k + kv.row_offset(r.seq, r.kv_head, t);
  double dot = 0;
  for (int i = threadIdx.x % 32; i < g.head_dim; i += 32) dot += q_s[i] * (stored_to_double(k[i]) * r.k_scale);
  const double s = warp_sum(dot) * g.scale;
  return g.cap > 0 ? g.cap * tanh(s / g.cap) : s;
}

// Pass 1: partial_max (rows, chunks) = max of the chunk's scores (-inf when empty).
template <class KV>
__global__ void chunk_max_kernel(KV kv, Geometry g, const std::int32_t* seq_lens, const float* q, double* partial_max) {
  extern __shared__ double smem[];
  double* q_s = smem;
  __shared__ double warp_max[kWarps];
  const BlockRange r = block_range(kv, g, seq_lens);
  load_q(q_s, q, g, r);
  const int warp = threadIdx.x / 32;
  double m = -INFINITY;
  for (std::int64_t t = r.begin + warp; t < r.end; t += kWarps) m = fmax(m, score(kv, q_s, g, r, t));
  if (threadIdx.x % 32 == 0) warp_max[warp] = m;
  __syncthreads();
  if (threadIdx.x == 0) {
    double best = warp_max[0];
    for (int w = 1; w < kWarps; ++w) best = fmax(best, warp_max[w]);
    partial_max[static_cast<std::int64_t>(blockIdx.x) * g.chunks + blockIdx.y] = best;
  }
}

// Pass 2: per chunk sum_t w_t, sum_t w_t v_t and sum_t w_t |v_t| with w_t = exp(s_t - m), m the
// maximum over all chunks of the row and its sink logit. partial: (rows, chunks, 1 + 2D).
template <class KV>
__global__ void chunk_sum_kernel(KV kv, Geometry g, const std::int32_t* seq_lens, const float* q,
                                 const double* partial_max, double* partial) {
  extern __shared__ double smem[];
  double* q_s = smem;
  double* acc = smem + g.head_dim;  // (kWarps, 2, D)
  __shared__ double warp_w[kWarps];
  const BlockRange r = block_range(kv, g, seq_lens);
  load_q(q_s, q, g, r);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  double m = sink_logit(g, r.head);
  for (int c = 0; c < g.chunks; ++c) m = fmax(m, partial_max[static_cast<std::int64_t>(blockIdx.x) * g.chunks + c]);
  double* o_w = acc + static_cast<std::int64_t>(warp) * 2 * g.head_dim;
  double* a_w = o_w + g.head_dim;
  for (int i = lane; i < g.head_dim; i += 32) o_w[i] = a_w[i] = 0;
  double w_sum = 0;
  for (std::int64_t t = r.begin + warp; t < r.end; t += kWarps) {
    const double w = exp(score(kv, q_s, g, r, t) - m);
    w_sum += w;
    const auto* v = kv.v + kv.row_offset(r.seq, r.kv_head, t);
    for (int i = lane; i < g.head_dim; i += 32) {
      const double x = stored_to_double(v[i]) * r.v_scale;
      o_w[i] += w * x;
      a_w[i] += w * fabs(x);
    }
  }
  if (lane == 0) warp_w[warp] = w_sum;
  __syncthreads();
  double* out = partial + (static_cast<std::int64_t>(blockIdx.x) * g.chunks + blockIdx.y) * (1 + 2 * g.head_dim);
  if (threadIdx.x == 0) {
    double s = 0;
    for (int w = 0; w < kWarps; ++w) s += warp_w[w];
    out[0] = s;
  }
  for (int i = threadIdx.x; i < 2 * g.head_dim; i += blockDim.x) {
    double s = 0;
    for (int w = 0; w < kWarps; ++w) s += acc[static_cast<std::int64_t>(w) * 2 * g.head_dim + i];
    out[1 + i] = s;
  }
}

// Pass 3, block `row`: the chunk partials and the sink's e^(z - m) summed and normalized. A row
// that sees no token and has no sink (an empty sequence) sums to 0: o = 0, lse = -inf.
__global__ void finalize_kernel(Geometry g, const double* partial_max, const double* partial, GpuReferenceOutput out) {
  const std::int64_t bh = blockIdx.x;
  const double sink = sink_logit(g, static_cast<int>(bh % g.heads_q));
  double m = sink, sum = 0;
  for (int c = 0; c < g.chunks; ++c) {
    m = fmax(m, partial_max[bh * g.chunks + c]);
    sum += partial[(bh * g.chunks + c) * (1 + 2 * g.head_dim)];
  }
  if (g.sinks != nullptr) sum += exp(sink - m);
  const bool empty = sum == 0;
  for (int i = threadIdx.x; i < g.head_dim; i += blockDim.x) {
    double o = 0, a = 0;
    for (int c = 0; c < g.chunks; ++c) {
      const double* p = partial + (bh * g.chunks + c) * (1 + 2 * g.head_dim);
      o += p[1 + i];
      a += p[1 + g.head_dim + i];
    }
    out.o[bh * g.head_dim + i] = empty ? 0.0 : o / sum;
    out.o_abs[bh * g.head_dim + i] = empty ? 0.0 : a / sum;
  }
  if (threadIdx.x == 0) out.lse[bh] = empty ? -INFINITY : m + log(sum);
}

Geometry geometry(const DecodeShape& shape, const AttentionVariant& v, const float* sinks, int batch,
                  std::int64_t max_len) {
  const int chunks = gpu_reference_chunks(shape, batch, max_len, v.q_len);
  return {shape.heads_q,  shape.group(), shape.head_dim, chunks, v.q_len,
          std::max<std::int64_t>(1, (max_len + chunks - 1) / chunks),
          v.window,       shape.softmax_scale(), v.logits_soft_cap, v.sinks ? sinks : nullptr};
}

}  // namespace

int gpu_reference_max_head_dim() { return kMaxHeadDim; }

int gpu_reference_chunks(const DecodeShape& shape, int batch, std::int64_t max_len, int q_len) {
  // ~2048 blocks in all (a few waves on 132 SMs), but no chunk under 256 tokens.
  const std::int64_t heads =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(batch) * std::max(q_len, 1) * shape.heads_q);
  const std::int64_t want = (2048 + heads - 1) / heads;
  const std::int64_t most = std::max<std::int64_t>(1, (max_len + 255) / 256);
  return static_cast<int>(std::clamp<std::int64_t>(want, 1, most));
}

std::size_t gpu_reference_workspace_doubles(const DecodeShape& shape, int batch, std::int64_t max_len, int q_len) {
  const std::size_t cells = static_cast<std::size_t>(batch) * std::max(q_len, 1) * shape.heads_q *
                            gpu_reference_chunks(shape, batch, max_len, q_len);
  return cells * (2 + 2 * static_cast<std::size_t>(shape.head_dim));
}

template <class KV>
cudaError_t gpu_reference_decode_variant(const KV& kv, const DecodeShape& shape, const AttentionVariant& variant,
                                         const float* sinks, int batch, std::int64_t max_len,
                                         const std::int32_t* seq_lens, const float* q, double* workspace,
                                         const GpuReferenceOutput& out, cudaStream_t stream) {
  if (!shape.invalid_reason().empty() || shape.head_dim > kMaxHeadDim || batch < 0 || max_len < 0)
    return cudaErrorInvalidValue;
  // The sequences' lengths live on the device: variant_invalid_reason checks all but them.
  if (variant_invalid_reason(variant, {}) || (variant.sinks && sinks == nullptr)) return cudaErrorInvalidValue;
  if (batch == 0) return cudaSuccess;
  const Geometry g = geometry(shape, variant, sinks, batch, max_len);
  const std::size_t rows = static_cast<std::size_t>(batch) * variant.q_len * shape.heads_q;
  const dim3 grid(static_cast<unsigned>(rows), static_cast<unsigned>(g.chunks));
  double* partial_max = workspace;
  double* partial = workspace + rows * g.chunks;
  const std::size_t q_bytes = sizeof(double) * shape.head_dim;
  chunk_max_kernel<<<grid, kThreads, q_bytes, stream>>>(kv, g, seq_lens, q, partial_max);
  chunk_sum_kernel<<<grid, kThreads, q_bytes * (1 + 2 * kWarps), stream>>>(kv, g, seq_lens, q, partial_max, partial);
  finalize_kernel<<<grid.x, 128, 0, stream>>>(g, partial_max, partial, out);
  return cudaGetLastError();
}

#define DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(KV)                                                             \
  template cudaError_t gpu_reference_decode_variant<KV>(const KV&, const DecodeShape&, const AttentionVariant&,  \
                                                        const float*, int, std::int64_t, const std::int32_t*,     \
                                                        const float*, double*, const GpuReferenceOutput&,         \
                                                        cudaStream_t);
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(ContiguousKV<float>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(ContiguousKV<__half>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(PagedKV<float>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(PagedKV<__half>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(PagedKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(ContiguousKV<__nv_fp8_e4m3>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(ContiguousKV<__nv_fp8_e5m2>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(PagedKV<__nv_fp8_e4m3>)
DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(PagedKV<__nv_fp8_e5m2>)
#undef DECODE_BENCH_INSTANTIATE_GPU_REFERENCE

}  // namespace decode_bench
