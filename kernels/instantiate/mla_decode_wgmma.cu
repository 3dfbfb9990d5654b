// The warpgroup-MMA MLA decode kernel's launch (sm_90a only: kernels/CMakeLists.txt), FP16 and
// BF16 latent caches, contiguous and paged, both tilings (64-token tiles in 2 stages, 32 in 4):
// 8 kernel instances; and their residency (mla_decode_wgmma_resident_clusters, _resident_blocks).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/device_attribute_cache.hpp"  // cached_device_attribute
#include "kernels/kernel_occupancy_cache.hpp"
#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_args.hpp"
#include "kernels/mla/mla_decode_wgmma.cuh"
#include "kernels/mla/mla_decode_wgmma.hpp"
#include "kernels/row_attention.hpp"  // kClusterMergeMaxSplits
#include "kernels/row_locator.cuh"  // page_divider

namespace decode_bench {

// The plan's constants are the kernel's, for either tiling.
template <int Tile>
constexpr bool mla_wgmma_traits_match() {
  using Tr = device::MlaWgmmaTraits<Tile>;
  return Tr::kRows == kMlaWgmmaRows && Tr::kStages == mla_wgmma_stages(Tile) && Tr::kWarpgroups == kMlaWgmmaWarpgroups &&
         Tr::shared_bytes() == mla_wgmma_shared_bytes(Tile) && Tr::kVd == kMlaKernelRank &&
         Tr::kKd == kMlaKernelRank + kMlaKernelRope;
}
static_assert(mla_wgmma_traits_match<64>() && mla_wgmma_traits_match<32>(), "the plan's constants are the kernel's");

bool mla_decode_wgmma_compiled() { return true; }

namespace {

// One tiling's launch: the plan's shape checked against the kernel's, then the kernel and the merge.
template <int Tile, class KV>
cudaError_t launch_mla_decode_wgmma(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens,
                                    const typename KV::value_type* q, typename KV::value_type* o, float* lse,
                                    void* workspace, const MlaDecodePlan& plan, cudaStream_t stream) {
  using Tr = device::MlaWgmmaTraits<Tile>;
  using T = typename KV::value_type;
  if (plan.kernel != MlaKernel::wgmma || plan.warpgroups != Tr::kWarpgroups || plan.threads != Tr::kThreads ||
      plan.rows_per_block != Tr::kRows || plan.tile_tokens != Tr::kTile || plan.stages != Tr::kStages ||
      plan.shared_bytes != Tr::shared_bytes() || !mla_decode_unsupported_reason(shape, dtype_of<T>::value).empty() ||
      shape.rows() < 1 || cache.head_dim != Tr::kKd || plan.rows != shape.rows() || plan.batch < 1 ||
      plan.num_splits < 1 || plan.split_tiles < 1 || plan.row_blocks != (plan.rows + Tr::kRows - 1) / Tr::kRows ||
      (plan.num_splits > 1 && !plan.cluster_merge && workspace == nullptr) ||
      (plan.fused_merge && (plan.num_splits < 2 || plan.num_splits > kMlaMergeFewMax)) ||
      (plan.cluster_merge && (plan.fused_merge || plan.num_splits < 2 || plan.num_splits > kClusterMergeMaxSplits)) ||
      (plan.spread_merge && !plan.fused_merge))
    return cudaErrorInvalidValue;
  auto* kernel = device::mla_decode_wgmma_kernel<T, KV, Tile>;
  // The shared-memory limit set once per kernel, not on every launch (a timed region holds launches).
  int blocks_per_sm = 0;
  if (const cudaError_t e = prepared_occupancy(reinterpret_cast<const void*>(kernel), plan.shared_bytes, false,
                                               Tr::kThreads, plan.shared_bytes, &blocks_per_sm);
      e != cudaSuccess)
    return e;
  const device::MlaArgs args = make_mla_args(shape, plan, seq_lens, q, o, lse, workspace);
  const dim3 grid(static_cast<unsigned>(plan.batch) * plan.row_blocks, plan.num_splits);
  if (plan.cluster_merge) {  // each row block's splits one cluster, which writes the answer
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config = cluster_launch_config(grid, Tr::kThreads, plan.shared_bytes, stream, &attribute);
    return cudaLaunchKernelEx(&config, kernel, cache, args, page_divider(cache));
  }
  if (plan.spread_merge) {  // every block resident at once: each row block's splits wait for each other
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config =
        cooperative_launch_config(grid, Tr::kThreads, plan.shared_bytes, stream, &attribute);
    return cudaLaunchKernelEx(&config, kernel, cache, args, page_divider(cache));
  }
  kernel<<<grid, Tr::kThreads, plan.shared_bytes, stream>>>(cache, args, page_divider(cache));
  // A fused plan's last split blocks wrote the answer (mla_merge_if_last_split).
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess || !args.partial || plan.fused_merge) return e;
  return run_mla_merge_splits(plan, workspace, o, lse, stream);
}

// One tiling's kernel as the residency queries ask about it (every instance of a tiling takes the
// same threads and shared memory, one block an SM), its shared-memory limit set, and its blocks an SM.
template <int Tile>
cudaError_t prepared_tiling(const void** kernel, int* blocks_per_sm) {
  using Tr = device::MlaWgmmaTraits<Tile>;
  *kernel = reinterpret_cast<const void*>(device::mla_decode_wgmma_kernel<__half, ContiguousKV<__half>, Tile>);
  return prepared_occupancy(*kernel, Tr::shared_bytes(), false, Tr::kThreads, Tr::shared_bytes(), blocks_per_sm);
}

// The resident clusters of one tiling's kernel.
template <int Tile>
cudaError_t resident_clusters(int splits, int* clusters) {
  using Tr = device::MlaWgmmaTraits<Tile>;
  const void* kernel = nullptr;
  int blocks_per_sm = 0;
  if (const cudaError_t e = prepared_tiling<Tile>(&kernel, &blocks_per_sm); e != cudaSuccess) return e;
  return prepared_max_active_clusters(kernel, Tr::kThreads, Tr::shared_bytes(), splits, true, clusters);
}

// The resident blocks of one tiling's kernel: its blocks an SM times the SMs.
template <int Tile>
cudaError_t resident_blocks(int* blocks) {
  const void* kernel = nullptr;
  int blocks_per_sm = 0, device = 0, sms = 0;
  if (const cudaError_t e = prepared_tiling<Tile>(&kernel, &blocks_per_sm); e != cudaSuccess) return e;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return e;
  if (const cudaError_t e = cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    return e;
  *blocks = blocks_per_sm * sms;
  return cudaSuccess;
}

}  // namespace

cudaError_t mla_decode_wgmma_resident_blocks(int tile, int* blocks) {
  *blocks = 0;
  switch (tile) {
    case 64: return resident_blocks<64>(blocks);
    case 32: return resident_blocks<32>(blocks);
    default: return cudaErrorInvalidValue;
  }
}

cudaError_t mla_decode_wgmma_resident_clusters(int tile, int splits, int* clusters) {
  *clusters = 0;
  if (splits < 1 || splits > kClusterMergeMaxSplits) return cudaErrorInvalidValue;
  switch (tile) {
    case 64: return resident_clusters<64>(splits, clusters);
    case 32: return resident_clusters<32>(splits, clusters);
    default: return cudaErrorInvalidValue;
  }
}

template <class KV>
cudaError_t run_mla_decode_wgmma(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens,
                                 const typename KV::value_type* q, typename KV::value_type* o, float* lse,
                                 void* workspace, const MlaDecodePlan& plan, cudaStream_t stream) {
  switch (plan.tile_tokens) {
    case 64:
      return launch_mla_decode_wgmma<64>(shape, cache, seq_lens, q, o, lse, workspace, plan, stream);
    case 32:
      return launch_mla_decode_wgmma<32>(shape, cache, seq_lens, q, o, lse, workspace, plan, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

DECODE_BENCH_MLA_DECODE_WGMMA_INSTANCES

}  // namespace decode_bench
