// The warpgroup-MMA MLA decode kernel's launch (sm_90a only: kernels/CMakeLists.txt), FP16 and
// BF16 latent caches, contiguous and paged.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kernel_occupancy_cache.hpp"
#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_args.hpp"
#include "kernels/mla/mla_decode_wgmma.cuh"
#include "kernels/mla/mla_decode_wgmma.hpp"

namespace decode_bench {

static_assert(device::MlaWgmmaTraits::kRows == kMlaWgmmaRows && device::MlaWgmmaTraits::kTile == kMlaWgmmaTile &&
                  device::MlaWgmmaTraits::kStages == kMlaWgmmaStages &&
                  device::MlaWgmmaTraits::kWarpgroups == kMlaWgmmaWarpgroups &&
                  device::MlaWgmmaTraits::kVd == kMlaKernelRank && device::MlaWgmmaTraits::kKd == kMlaKernelRank + kMlaKernelRope,
              "the plan's constants are the kernel's");

bool mla_decode_wgmma_compiled() { return true; }

template <class KV>
cudaError_t run_mla_decode_wgmma(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens, const float* q,
                                 float* o, float* lse, void* workspace, const MlaDecodePlan& plan, cudaStream_t stream) {
  using Tr = device::MlaWgmmaTraits;
  using T = typename KV::value_type;
  if (plan.kernel != MlaKernel::wgmma || plan.warpgroups != Tr::kWarpgroups || plan.threads != Tr::kThreads ||
      plan.rows_per_block != Tr::kRows || plan.tile_tokens != Tr::kTile || plan.stages != Tr::kStages ||
      plan.shared_bytes != Tr::shared_bytes() || !mla_decode_unsupported_reason(shape, dtype_of<T>::value).empty() ||
      shape.rows() < kMlaWgmmaMinRows || cache.head_dim != Tr::kKd || plan.rows != shape.rows() || plan.batch < 1 ||
      plan.num_splits < 1 || plan.split_tiles < 1 || plan.row_blocks != (plan.rows + Tr::kRows - 1) / Tr::kRows ||
      (plan.num_splits > 1 && workspace == nullptr))
    return cudaErrorInvalidValue;
  auto* kernel = device::mla_decode_wgmma_kernel<T, KV>;
  // The shared-memory limit set once per kernel, not on every launch (a timed region holds launches).
  int blocks_per_sm = 0;
  if (const cudaError_t e = prepared_occupancy(reinterpret_cast<const void*>(kernel), plan.shared_bytes, false,
                                               Tr::kThreads, plan.shared_bytes, &blocks_per_sm);
      e != cudaSuccess)
    return e;
  const device::MlaArgs args = make_mla_args(shape, plan, seq_lens, q, o, lse, workspace);
  const dim3 grid(static_cast<unsigned>(plan.batch) * plan.row_blocks, plan.num_splits);
  kernel<<<grid, Tr::kThreads, plan.shared_bytes, stream>>>(cache, args);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess || !args.partial) return e;
  return run_mla_merge_splits(plan, workspace, o, lse, stream);
}

#define DECODE_BENCH_MLA_DECODE_WGMMA(KV)                                                                             \
  template cudaError_t run_mla_decode_wgmma<KV>(const MlaShape&, const KV&, const std::int32_t*, const float*, float*, \
                                                float*, void*, const MlaDecodePlan&, cudaStream_t);
DECODE_BENCH_MLA_DECODE_WGMMA(ContiguousKV<__half>)
DECODE_BENCH_MLA_DECODE_WGMMA(PagedKV<__half>)
DECODE_BENCH_MLA_DECODE_WGMMA(ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_MLA_DECODE_WGMMA(PagedKV<__nv_bfloat16>)
#undef DECODE_BENCH_MLA_DECODE_WGMMA

}  // namespace decode_bench
