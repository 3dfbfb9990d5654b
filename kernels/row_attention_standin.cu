// STAND-IN implementation of kernels/row_attention.hpp, so the shared-prefix runner, its tests and
// sweeps run before the real prefix-phase kernel (tensor cores, split over tokens) is merged. The
// real implementation replaces this whole file. Naive but exact: one block per query row, its
// warps taking tokens in turn with an online softmax, merged in shared memory at the end. Every
// row re-reads its item's K/V range (no reuse across rows, no splits): correct, not fast.
#include <cmath>
#include <string>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention.hpp"

namespace decode_bench {
namespace {

constexpr int kStandinWarps = 4;

__device__ __forceinline__ float standin_to_float(float x) { return x; }
__device__ __forceinline__ float standin_to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float standin_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Grid: (num_rows); block: kStandinWarps warps. Lane l owns elements l, l + 32, ... of the row.
template <class KV, int D>
__global__ void __launch_bounds__(kStandinWarps * 32)
    standin_row_attention_kernel(KV kv, const RowAttentionItem* items, int num_items, const std::int32_t* row_q,
                                 const float* q, float* o, float* lse, float scale) {
  constexpr int E = D / 32;
  const int row = blockIdx.x;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __shared__ int item_of_row;
  __shared__ float warp_max[kStandinWarps], warp_sum[kStandinWarps];
  __shared__ float warp_acc[kStandinWarps][D];
  if (threadIdx.x == 0) item_of_row = -1;
  __syncthreads();
  for (int i = threadIdx.x; i < num_items; i += blockDim.x)
    if (row >= items[i].row_begin && row < items[i].row_end) item_of_row = i;
  __syncthreads();
  if (item_of_row < 0) return;  // every row belongs to an item (interface contract)
  const RowAttentionItem item = items[item_of_row];

  const float* qr = q + static_cast<std::int64_t>(row_q ? row_q[row] : row) * D;
  float qv[E], acc[E];
  for (int e = 0; e < E; ++e) {
    qv[e] = qr[lane + 32 * e] * scale;
    acc[e] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  for (std::int64_t t = item.token_begin + warp; t < item.token_end; t += kStandinWarps) {
    const std::int64_t off = kv.row_offset(item.kv_seq, item.kv_head, t);
    float s = 0.f;
    for (int e = 0; e < E; ++e) s += qv[e] * standin_to_float(kv.k[off + lane + 32 * e]);
    for (int w = 16; w > 0; w /= 2) s += __shfl_xor_sync(0xffffffffu, s, w);
    const float m_new = fmaxf(m, s);
    const float c = expf(m - m_new), p = expf(s - m_new);
    l = l * c + p;
    for (int e = 0; e < E; ++e) acc[e] = acc[e] * c + p * standin_to_float(kv.v[off + lane + 32 * e]);
    m = m_new;
  }
  if (lane == 0) {
    warp_max[warp] = m;
    warp_sum[warp] = l;
  }
  for (int e = 0; e < E; ++e) warp_acc[warp][lane + 32 * e] = acc[e];
  __syncthreads();
  float mx = -INFINITY;
  for (int w = 0; w < kStandinWarps; ++w) mx = fmaxf(mx, warp_max[w]);
  float* orow = o + static_cast<std::int64_t>(row) * D;
  if (mx == -INFINITY) {  // empty range: the empty state
    for (int i = threadIdx.x; i < D; i += blockDim.x) orow[i] = 0.f;
    if (threadIdx.x == 0) lse[row] = -INFINITY;
    return;
  }
  float total = 0.f;
  for (int w = 0; w < kStandinWarps; ++w)
    if (warp_max[w] != -INFINITY) total += warp_sum[w] * expf(warp_max[w] - mx);
  for (int i = threadIdx.x; i < D; i += blockDim.x) {
    float sum = 0.f;
    for (int w = 0; w < kStandinWarps; ++w)
      if (warp_max[w] != -INFINITY) sum += warp_acc[w][i] * expf(warp_max[w] - mx);
    orow[i] = sum / total;
  }
  if (threadIdx.x == 0) lse[row] = mx + logf(total);
}

template <class KV, int D>
cudaError_t launch_standin(const KV& kv, const RowAttentionProblem& p, cudaStream_t stream) {
  standin_row_attention_kernel<KV, D><<<p.num_rows, kStandinWarps * 32, 0, stream>>>(
      kv, p.items, p.num_items, p.row_q, p.q, p.o, p.lse, static_cast<float>(p.shape.softmax_scale()));
  return cudaGetLastError();
}

}  // namespace

std::optional<std::string> row_attention_unsupported_reason(const RowAttentionProblem& p) {
  if (const std::string why = p.shape.invalid_reason(); !why.empty()) return why;
  if (p.shape.head_dim != 64 && p.shape.head_dim != 128 && p.shape.head_dim != 256)
    return "head_dim " + std::to_string(p.shape.head_dim) + " has no compiled row-attention kernel (64, 128, 256)";
  if (p.num_items < 1 || p.num_rows < 1) return std::string("row attention needs at least one item and one row");
  return std::nullopt;
}

template <class KV>
cudaError_t plan_row_attention(const RowAttentionProblem& problem, const RowAttentionOptions& options,
                               RowAttentionPlan* plan) {
  if (!plan || row_attention_unsupported_reason(problem)) return cudaErrorInvalidValue;
  if (options.path == RowAttentionPath::tensor_core) return cudaErrorInvalidValue;  // the stand-in has none
  *plan = RowAttentionPlan{};
  plan->path = RowAttentionPath::simt;
  plan->splits = 1;
  plan->rows_per_block = 1;
  plan->tile_tokens = kStandinWarps;
  return cudaSuccess;
}

cudaError_t init_row_attention_workspace(const RowAttentionPlan& plan, void* workspace, cudaStream_t stream) {
  if (plan.workspace_init_bytes == 0) return cudaSuccess;
  if (!workspace || plan.workspace_init_bytes > plan.workspace_bytes) return cudaErrorInvalidValue;
  return cudaMemsetAsync(workspace, 0, plan.workspace_init_bytes, stream);
}

template <class KV>
cudaError_t run_row_attention(const KV& kv, const RowAttentionProblem& problem, const RowAttentionPlan&, void*,
                              cudaStream_t stream) {
  if (row_attention_unsupported_reason(problem)) return cudaErrorInvalidValue;
  if (!problem.items || !problem.q || !problem.o || !problem.lse) return cudaErrorInvalidValue;
  switch (problem.shape.head_dim) {
    case 64: return launch_standin<KV, 64>(kv, problem, stream);
    case 128: return launch_standin<KV, 128>(kv, problem, stream);
    case 256: return launch_standin<KV, 256>(kv, problem, stream);
  }
  return cudaErrorInvalidValue;
}

#define DECODE_BENCH_INSTANTIATE_STANDIN(KV)                                                                     \
  template cudaError_t plan_row_attention<KV>(const RowAttentionProblem&, const RowAttentionOptions&,           \
                                              RowAttentionPlan*);                                              \
  template cudaError_t run_row_attention<KV>(const KV&, const RowAttentionProblem&, const RowAttentionPlan&, void*, \
                                             cudaStream_t);
DECODE_BENCH_INSTANTIATE_STANDIN(ContiguousKV<float>)
DECODE_BENCH_INSTANTIATE_STANDIN(ContiguousKV<__half>)
DECODE_BENCH_INSTANTIATE_STANDIN(ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_INSTANTIATE_STANDIN(PagedKV<float>)
DECODE_BENCH_INSTANTIATE_STANDIN(PagedKV<__half>)
DECODE_BENCH_INSTANTIATE_STANDIN(PagedKV<__nv_bfloat16>)
#undef DECODE_BENCH_INSTANTIATE_STANDIN

}  // namespace decode_bench
