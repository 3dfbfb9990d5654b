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

struct Geometry {
  int heads_q, group, head_dim, chunks;
  std::int64_t chunk_tokens;
  double scale;
};

// Block (b * H_q + h, c): tokens [c * chunk_tokens, min(len, (c + 1) * chunk_tokens)), with the
// KV head's dequantization scales (1 unless FP8).
struct BlockRange {
  int seq, head, kv_head;
  std::int64_t begin, end;
  double k_scale, v_scale;
};

template <class KV>
__device__ BlockRange block_range(const KV& kv, const Geometry& g, const std::int32_t* seq_lens) {
  BlockRange r;
  r.seq = blockIdx.x / g.heads_q;
  r.head = blockIdx.x % g.heads_q;
  r.kv_head = r.head / g.group;
  r.k_scale = kv_scale(kv.k_scale, r.kv_head);
  r.v_scale = kv_scale(kv.v_scale, r.kv_head);
  const std::int64_t len = seq_lens[r.seq];
  r.begin = min(len, blockIdx.y * g.chunk_tokens);
  r.end = min(len, r.begin + g.chunk_tokens);
  return r;
}

__device__ void load_q(double* q_s, const float* q, const Geometry& g, const BlockRange& r) {
  const float* qh = q + (static_cast<std::int64_t>(r.seq) * g.heads_q + r.head) * g.head_dim;
  for (int i = threadIdx.x; i < g.head_dim; i += blockDim.x) q_s[i] = qh[i];
  __syncthreads();
}

// s_t = (q . k_t) * scale, every lane of the warp gets it. Each K element is dequantized as the CPU
// reference does (stored * k_scale, exact in double) before its product with q.
template <class KV>
__device__ double score(const KV& kv, const double* q_s, const Geometry& g, const BlockRange& r, std::int64_t t) {
  const auto* k = kv.k + kv.row_offset(r.seq, r.kv_head, t);
  double dot = 0;
  for (int i = threadIdx.x % 32; i < g.head_dim; i += 32) dot += q_s[i] * (stored_to_double(k[i]) * r.k_scale);
  return warp_sum(dot) * g.scale;
}

// Pass 1: partial_max (B * H_q, chunks) = max of the chunk's scores (-inf when empty).
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
// maximum over all chunks of the (sequence, head). partial: (B * H_q, chunks, 1 + 2D).
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
  double m = -INFINITY;
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

// Pass 3, block b * H_q + h: the chunk partials summed and normalized.
__global__ void finalize_kernel(Geometry g, const std::int32_t* seq_lens, const double* partial_max,
                                const double* partial, GpuReferenceOutput out) {
  const std::int64_t bh = blockIdx.x;
  const bool empty = seq_lens[bh / g.heads_q] == 0;
  double m = -INFINITY, sum = 0;
  for (int c = 0; c < g.chunks; ++c) {
    m = fmax(m, partial_max[bh * g.chunks + c]);
    sum += partial[(bh * g.chunks + c) * (1 + 2 * g.head_dim)];
  }
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

Geometry geometry(const DecodeShape& shape, int batch, std::int64_t max_len) {
  const int chunks = gpu_reference_chunks(shape, batch, max_len);
  return {shape.heads_q, shape.group(), shape.head_dim, chunks,
          std::max<std::int64_t>(1, (max_len + chunks - 1) / chunks), shape.softmax_scale()};
}

}  // namespace

int gpu_reference_max_head_dim() { return kMaxHeadDim; }

int gpu_reference_chunks(const DecodeShape& shape, int batch, std::int64_t max_len) {
  // ~2048 blocks in all (a few waves on 132 SMs), but no chunk under 256 tokens.
  const std::int64_t heads = std::max<std::int64_t>(1, static_cast<std::int64_t>(batch) * shape.heads_q);
  const std::int64_t want = (2048 + heads - 1) / heads;
  const std::int64_t most = std::max<std::int64_t>(1, (max_len + 255) / 256);
  return static_cast<int>(std::clamp<std::int64_t>(want, 1, most));
}

std::size_t gpu_reference_workspace_doubles(const DecodeShape& shape, int batch, std::int64_t max_len) {
  const std::size_t cells = static_cast<std::size_t>(batch) * shape.heads_q * gpu_reference_chunks(shape, batch, max_len);
  return cells * (2 + 2 * static_cast<std::size_t>(shape.head_dim));
}

template <class KV>
cudaError_t gpu_reference_decode(const KV& kv, const DecodeShape& shape, int batch, std::int64_t max_len,
                                 const std::int32_t* seq_lens, const float* q, double* workspace,
                                 const GpuReferenceOutput& out, cudaStream_t stream) {
  if (!shape.invalid_reason().empty() || shape.head_dim > kMaxHeadDim || batch < 0 || max_len < 0)
    return cudaErrorInvalidValue;
  if (batch == 0) return cudaSuccess;
  const Geometry g = geometry(shape, batch, max_len);
  const dim3 grid(static_cast<unsigned>(batch * shape.heads_q), static_cast<unsigned>(g.chunks));
  double* partial_max = workspace;
  double* partial = workspace + static_cast<std::size_t>(batch) * shape.heads_q * g.chunks;
  const std::size_t q_bytes = sizeof(double) * shape.head_dim;
  chunk_max_kernel<<<grid, kThreads, q_bytes, stream>>>(kv, g, seq_lens, q, partial_max);
  chunk_sum_kernel<<<grid, kThreads, q_bytes * (1 + 2 * kWarps), stream>>>(kv, g, seq_lens, q, partial_max, partial);
  finalize_kernel<<<grid.x, 128, 0, stream>>>(g, seq_lens, partial_max, partial, out);
  return cudaGetLastError();
}

#define DECODE_BENCH_INSTANTIATE_GPU_REFERENCE(KV)                                                             \
  template cudaError_t gpu_reference_decode<KV>(const KV&, const DecodeShape&, int, std::int64_t,              \
                                                const std::int32_t*, const float*, double*,                    \
                                                const GpuReferenceOutput&, cudaStream_t);
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
