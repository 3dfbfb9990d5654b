// The warpgroup-MMA MLA decode kernel's launch (sm_90a only: kernels/CMakeLists.txt), FP16 and
// BF16 latent caches, contiguous and paged.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
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
  if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(plan.shared_bytes));
      e != cudaSuccess)
    return e;
  device::MlaWgmmaArgs args{};
  args.seq_lens = seq_lens;
  args.q = q;
  args.batch = plan.batch;
  args.rows = plan.rows;
  args.heads_q = shape.heads_q;
  args.q_len = shape.q_len;
  args.chunk = plan.split_tiles * Tr::kTile;
  args.scale_log2 = static_cast<float>(shape.softmax_scale * 1.4426950408889634);
  args.partial = plan.num_splits > 1;
  // The partials' layout is run_mla_decode's (o per split, then lse per split): run_mla_merge_splits reads it.
  const std::int64_t rows_total = static_cast<std::int64_t>(plan.batch) * plan.rows;
  float* o_part = static_cast<float*>(workspace);
  args.o = args.partial ? o_part : o;
  args.lse = args.partial ? o_part + static_cast<std::int64_t>(plan.num_splits) * rows_total * Tr::kVd : lse;
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
