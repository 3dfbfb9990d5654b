#pragma once
// The split merge of a uniform grid through distributed shared memory (compute capability 9.0):
// the `splits` blocks of one (item, row block) are launched as one thread-block cluster
// (cluster dims (1, splits, 1): RowAttentionPlan::cluster_merge for the row kernels,
// MlaDecodePlan::cluster_merge for the warpgroup-MMA MLA kernel), each leaves its rows' state in its
// own shared memory, and after one cluster barrier every block folds a share of the rows from all
// of them and writes the outputs (fold_states_in_cluster). The fused merge (merge_if_last) moves
// the same states through L2: the partial stores, the counter's acquire-release add and the last
// block's loads are dependent round trips after the stream ends, all on one block; here they are a
// barrier and one load of each state over the cluster's network, spread over every block of the
// cluster.
//
// The row kernels' layout of a block's state in its shared memory (`state`, 4-byte aligned, free by
// then):
//   float o[kRows][D]   its rows' outputs over its token range, normalised (dims >= head_dim unread)
//   float lse[kRows]    their log-sum-exps (natural log; -inf: no token in the range)
// Rows >= nrows are never read. Every block of the cluster has the same row0 and nrows (the
// cluster spans grid.y only).
#include <cmath>
#include <cstdint>

#include "kernels/cp_async.cuh"  // shared_address
#include "kernels/row_attention_common.cuh"

namespace decode_bench::device {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900

__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_blocks() {
  unsigned n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
// Every thread of the cluster: this block's shared-memory writes before it are visible to every
// block's reads after it (release / acquire at cluster scope).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// The same barrier ordering nothing but itself: once past it, every block has finished what it did
// before (its reads of the others' shared memory). ptxas puts a GPU-scope memory barrier before a
// releasing arrive, which would wait for this block's output stores to be acknowledged.
__device__ __forceinline__ void cluster_sync_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
}
// The address of the same shared-memory word in block `rank` of the cluster.
__device__ __forceinline__ std::uint32_t cluster_address(std::uint32_t local, unsigned rank) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}
__device__ __forceinline__ float load_cluster_f32(std::uint32_t addr) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ float4 load_cluster_f32x4(std::uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr)
               : "memory");
  return v;
}

// Called by every thread of every block of the cluster, after each has written the states of rows
// 0 .. nrows - 1 in its own shared memory: row r's output at o_base + 4 (r x o_stride + c) (c < 4 x
// cols4, normalised), its log-sum-exp at lse_base + 4 r (natural log; -inf: no token in the range).
// Folds them: store_o(r, c4, float4) for each float4 column c4 of each row, store_lse(r, float)
// once a row. Thread t of block b takes the (row, float4 column) pairs b x kThreads + t,
// + splits x kThreads, ...; each loads every split's LSE of its row and the splits' columns together
// before using any: loaded one after another (the weight of each split computed between), the loads
// of a pair were as many cluster round trips as splits, and the fold took longer than the fused
// merge's L2 round trips (H100, Falcon-7B).
template <int kThreads, class StoreO, class StoreLse>
__device__ __forceinline__ void fold_states_in_cluster(std::uint32_t o_base, std::uint32_t lse_base, int o_stride,
                                                       int nrows, int cols4, const StoreO& store_o,
                                                       const StoreLse& store_lse) {
  const unsigned rank = cluster_rank();
  const int n = static_cast<int>(cluster_blocks());
  cluster_sync();  // every block's state written
  const int first = static_cast<int>(rank) * kThreads + static_cast<int>(threadIdx.x);
  for (int i = first; i < nrows * cols4; i += n * kThreads) {
    const int r = i / cols4, c = i - r * cols4;
    const std::uint32_t lse_addr = lse_base + 4u * r, o_addr = o_base + 4u * (r * o_stride + 4 * c);
    // Every split's LSE and columns loaded before any is used: one round trip over the cluster.
    float l[kClusterMergeMaxSplits];
    float4 v[kClusterMergeMaxSplits];
#pragma unroll
    for (int s = 0; s < kClusterMergeMaxSplits; ++s) {
      if (s < n) {
        l[s] = load_cluster_f32(cluster_address(lse_addr, s));
        v[s] = load_cluster_f32x4(cluster_address(o_addr, s));
      } else {
        l[s] = -INFINITY;
        v[s] = make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
    float m = -INFINITY;
#pragma unroll
    for (int s = 0; s < kClusterMergeMaxSplits; ++s) m = fmaxf(m, l[s]);
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    float sum = 0.f;
    if (m != -INFINITY) {
#pragma unroll
      for (int s = 0; s < kClusterMergeMaxSplits; ++s) {
        const float e = expf(l[s] - m);  // an empty range (lse -inf) weighs 0; its o is finite (zeros)
        acc.x = fmaf(e, v[s].x, acc.x), acc.y = fmaf(e, v[s].y, acc.y), acc.z = fmaf(e, v[s].z, acc.z),
        acc.w = fmaf(e, v[s].w, acc.w);
        sum += e;
      }
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    store_o(r, c, make_float4(acc.x * inv, acc.y * inv, acc.z * inv, acc.w * inv));
    if (c == 0) store_lse(r, sum > 0.f ? m + logf(sum) : -INFINITY);
  }
  cluster_sync_relaxed();  // no block leaves (its shared memory gone) while another still reads it
}

// The row kernels' fold: the state layout above (o[kRows][D], then lse[kRows]) into a.o and a.lse,
// rows row0 .. row0 + nrows - 1 of the problem.
template <int D, int kRows, int kThreads>
__device__ __forceinline__ void merge_rows_in_cluster(const RowAttentionArgs& a, int row0, int nrows, const float* state) {
  const int h = a.head_dim;
  const std::uint32_t o_base = shared_address(state), lse_base = o_base + kRows * D * 4u;
  fold_states_in_cluster<kThreads>(
      o_base, lse_base, D, nrows, h / 4,
      [&](int r, int c, float4 v) { reinterpret_cast<float4*>(a.o + static_cast<std::int64_t>(row0 + r) * h)[c] = v; },
      [&](int r, float lse) { a.lse[row0 + r] = lse; });
}

#endif  // __CUDA_ARCH__ >= 900

}  // namespace decode_bench::device
