// A decode-attention backend built outside decode-bench's tree: a small split-K decode behind the
// C plugin ABI of <decode_bench/backend.h>. `decode-bench sweep --backend-lib libexample_split_k.so
// --set backend=example_split_k` verifies it against the float64 reference, times it and counts it
// like any in-tree backend (README.md).
//
// What it computes: q and o in fp32, K/V in fp32, fp16 or bf16, contiguous or paged, any head_dim
// up to 256, any GQA group. Two kernels:
//   split:  one block per (split, query head, sequence) walks its share of the sequence's tokens
//           (four warps, one token per warp at a time, online softmax), and writes the unnormalised
//           output, the running max and the sum of exponentials of its tokens;
//   merge:  one block per (query head, sequence) rescales the splits to a common max and writes o
//           and the natural-log LSE (-inf for an empty sequence, whose o is 0).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <new>

#include <decode_bench/backend.h>

namespace {

constexpr int kWarps = 4;            // tokens in flight per block
constexpr int kMaxHeadDim = 256;
constexpr int kPerLane = kMaxHeadDim / 32;
constexpr int kTokensPerSplit = 256;  // the automatic split count's chunk
constexpr int kMaxAutoSplits = 128;

__device__ float to_float(float x) { return x; }
__device__ float to_float(__half x) { return __half2float(x); }
__device__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Element offset of the row of token t of sequence b, KV head g.
template <bool kPaged>
__device__ long long row_offset(const decode_bench_problem& p, int b, int g, int t) {
  if (kPaged) {
    const decode_bench_paged_kv& kv = p.paged;
    const int page = kv.page_indices[kv.indptr[b] + t / kv.page_size];
    return ((static_cast<long long>(page) * kv.heads_kv + g) * kv.page_size + t % kv.page_size) * kv.head_dim;
  }
  const decode_bench_contiguous_kv& kv = p.contiguous;
  return b * kv.slot_stride + g * kv.head_stride + static_cast<long long>(t) * kv.head_dim;
}

// partials: (batch, heads_q, splits, head_dim + 2): the unnormalised output, then max and sum.
template <class T, bool kPaged>
__global__ void __launch_bounds__(kWarps * 32) split_kernel(decode_bench_problem p, int splits, float* partials) {
  const int s = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int D = p.head_dim;
  const int g = h / (p.heads_q / p.heads_kv);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int len = p.seq_lens[b];
  const int chunk = (len + splits - 1) / splits;
  const int t_begin = min(len, s * chunk), t_end = min(len, t_begin + chunk);
  const T* k_base = static_cast<const T*>(kPaged ? p.paged.k : p.contiguous.k);
  const T* v_base = static_cast<const T*>(kPaged ? p.paged.v : p.contiguous.v);

  const float* q = static_cast<const float*>(p.q) + (static_cast<long long>(b) * p.heads_q + h) * D;
  float qr[kPerLane], acc[kPerLane];
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + 32 * i;
    qr[i] = d < D ? q[d] * p.softmax_scale : 0.f;
    acc[i] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  for (int t = t_begin + warp; t < t_end; t += kWarps) {
    const long long off = row_offset<kPaged>(p, b, g, t);
    float dot = 0.f;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int d = lane + 32 * i;
      if (d < D) dot += qr[i] * to_float(k_base[off + d]);
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, o);
    const float m_new = fmaxf(m, dot);
    const float carry = expf(m - m_new);  // 0 on the first token (m = -inf)
    const float weight = expf(dot - m_new);
    l = l * carry + weight;
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
      const int d = lane + 32 * i;
      if (d < D) acc[i] = acc[i] * carry + weight * to_float(v_base[off + d]);
    }
    m = m_new;
  }

  // The warps' states onto one: every warp's max, its weight against the block's max.
  __shared__ float warp_m[kWarps], warp_l[kWarps], warp_acc[kWarps][kMaxHeadDim];
  if (lane == 0) {
    warp_m[warp] = m;
    warp_l[warp] = l;
  }
#pragma unroll
  for (int i = 0; i < kPerLane; ++i) {
    const int d = lane + 32 * i;
    if (d < D) warp_acc[warp][d] = acc[i];
  }
  __syncthreads();
  float block_m = -INFINITY;
  for (int w = 0; w < kWarps; ++w) block_m = fmaxf(block_m, warp_m[w]);
  float scale[kWarps];
  float block_l = 0.f;
  for (int w = 0; w < kWarps; ++w) {
    scale[w] = warp_m[w] == -INFINITY ? 0.f : expf(warp_m[w] - block_m);
    block_l += warp_l[w] * scale[w];
  }
  float* out = partials + ((static_cast<long long>(b) * p.heads_q + h) * splits + s) * (D + 2);
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float o = 0.f;
    for (int w = 0; w < kWarps; ++w) o += warp_acc[w][d] * scale[w];
    out[d] = o;
  }
  if (threadIdx.x == 0) {
    out[D] = block_m;
    out[D + 1] = block_l;
  }
}

__global__ void merge_kernel(decode_bench_problem p, int splits, const float* partials) {
  const int h = blockIdx.x, b = blockIdx.y;
  const int D = p.head_dim;
  const long long row = static_cast<long long>(b) * p.heads_q + h;
  const float* in = partials + row * splits * (D + 2);
  float m = -INFINITY;
  for (int s = 0; s < splits; ++s) m = fmaxf(m, in[s * (D + 2) + D]);
  float l = 0.f;
  for (int s = 0; s < splits; ++s) {
    const float ms = in[s * (D + 2) + D];
    if (ms != -INFINITY) l += in[s * (D + 2) + D + 1] * expf(ms - m);
  }
  float* o = static_cast<float*>(p.o) + row * D;
  for (int d = threadIdx.x; d < D; d += blockDim.x) {
    float sum = 0.f;
    for (int s = 0; s < splits; ++s) {
      const float ms = in[s * (D + 2) + D];
      if (ms != -INFINITY) sum += in[s * (D + 2) + d] * expf(ms - m);
    }
    o[d] = l > 0.f ? sum / l : 0.f;
  }
  if (threadIdx.x == 0) p.lse[row] = l > 0.f ? m + logf(l) : -INFINITY;
}

struct Instance {
  decode_bench_problem problem;
  int splits = 0;
  float* partials = nullptr;
  char plan_json[128] = "";
};

void write_message(char* buffer, size_t size, const char* text) {
  snprintf(buffer, size, "%s", text);
}

template <class T>
cudaError_t launch(const Instance& in, cudaStream_t stream) {
  const decode_bench_problem& p = in.problem;
  const dim3 split_grid(in.splits, p.heads_q, p.batch);
  if (p.layout == DECODE_BENCH_LAYOUT_PAGED)
    split_kernel<T, true><<<split_grid, kWarps * 32, 0, stream>>>(p, in.splits, in.partials);
  else
    split_kernel<T, false><<<split_grid, kWarps * 32, 0, stream>>>(p, in.splits, in.partials);
  merge_kernel<<<dim3(p.heads_q, p.batch), 128, 0, stream>>>(p, in.splits, in.partials);
  return cudaGetLastError();
}

decode_bench_instance* create() { return reinterpret_cast<decode_bench_instance*>(new (std::nothrow) Instance); }
void destroy(decode_bench_instance* instance) { delete reinterpret_cast<Instance*>(instance); }

int supports(const decode_bench_instance*, const decode_bench_problem* p, char* reason, size_t size) {
  if (p->kv_dtype != DECODE_BENCH_DTYPE_FP32 && p->kv_dtype != DECODE_BENCH_DTYPE_FP16 &&
      p->kv_dtype != DECODE_BENCH_DTYPE_BF16) {
    write_message(reason, size, "dtype: example_split_k reads fp32, fp16 and bf16 K/V, not fp8");
    return 1;
  }
  if (p->batch > 65535) {  // one grid z index per sequence
    snprintf(reason, size, "batch %d: example_split_k launches at most 65535 sequences", p->batch);
    return 1;
  }
  if (p->head_dim > kMaxHeadDim) {
    snprintf(reason, size, "head_dim %d: example_split_k takes at most %d", p->head_dim, kMaxHeadDim);
    return 1;
  }
  return 0;
}

decode_bench_dtype io_dtype(const decode_bench_instance*, const decode_bench_problem*) { return DECODE_BENCH_DTYPE_FP32; }

int plan(decode_bench_instance* instance, const decode_bench_problem* p, decode_bench_workspace* ws, char* error,
         size_t size) {
  Instance& in = *reinterpret_cast<Instance*>(instance);
  if (p->io_dtype != DECODE_BENCH_DTYPE_FP32) {
    write_message(error, size, "example_split_k reads q and writes o in fp32");
    return 1;
  }
  in.problem = *p;
  if (p->splits > 0) {
    in.splits = p->splits;
  } else {
    const long long auto_splits = (p->max_len + kTokensPerSplit - 1) / kTokensPerSplit;
    in.splits = static_cast<int>(auto_splits < 1 ? 1 : auto_splits > kMaxAutoSplits ? kMaxAutoSplits : auto_splits);
  }
  const size_t bytes = sizeof(float) * static_cast<size_t>(p->batch) * p->heads_q * in.splits * (p->head_dim + 2);
  in.partials = static_cast<float*>(ws->allocate(ws->ctx, bytes));
  if (in.partials == nullptr) {
    snprintf(error, size, "could not allocate %zu bytes of split partials", bytes);
    return 1;
  }
  snprintf(in.plan_json, sizeof in.plan_json, "{\"family\": \"example_split_k\", \"splits\": %d}", in.splits);
  return 0;
}

int run(decode_bench_instance* instance, cudaStream_t stream) {
  const Instance& in = *reinterpret_cast<Instance*>(instance);
  switch (in.problem.kv_dtype) {
    case DECODE_BENCH_DTYPE_FP32: return launch<float>(in, stream);
    case DECODE_BENCH_DTYPE_FP16: return launch<__half>(in, stream);
    case DECODE_BENCH_DTYPE_BF16: return launch<__nv_bfloat16>(in, stream);
    default: return cudaErrorInvalidValue;
  }
}

const char* plan_json(const decode_bench_instance* instance) {
  return reinterpret_cast<const Instance*>(instance)->plan_json;
}

const decode_bench_backend kBackends[] = {
    {"example_split_k", "1.0.0", create, destroy, supports, io_dtype, plan, run, plan_json},
};

}  // namespace

extern "C" DECODE_BENCH_PLUGIN_EXPORT int decode_bench_plugin_abi_version(void) {
  return DECODE_BENCH_BACKEND_ABI_VERSION;
}

extern "C" DECODE_BENCH_PLUGIN_EXPORT const decode_bench_backend* decode_bench_plugin_backends(int* count) {
  *count = static_cast<int>(sizeof kBackends / sizeof kBackends[0]);
  return kBackends;
}
