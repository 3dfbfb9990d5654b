// The MLA decode kernel's plan and launch (kernels/mla/mla_decode.hpp), FP16 and BF16 latent
// caches, contiguous and paged.
#include "kernels/mla/mla_decode.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_decode.cuh"
#include "kernels/mla/mla_decode_wgmma.hpp"

namespace decode_bench {

nlohmann::json MlaDecodePlan::to_json() const {
  if (kernel == MlaDecodeKernel::wgmma) return mla_decode_wgmma_plan_json(*this);
  return {{"kernel", "mla_decode_mma"},
          {"rows", rows},
          {"rows_per_block", device::MlaTraits::kRows},
          {"row_blocks", row_blocks},
          {"num_splits", num_splits},
          {"split_tiles", split_tiles},
          {"tile_tokens", device::MlaTraits::kTile},
          {"stages", device::MlaTraits::kStages},
          {"threads", threads},
          {"shared_bytes", shared_bytes},
          {"workspace_bytes", workspace_bytes}};
}

std::string mla_decode_unsupported_reason(const MlaShape& shape, DType dtype) {
  if (const std::string r = shape.invalid_reason(); !r.empty()) return r;
  if (shape.kv_lora_rank != kMlaKernelRank || shape.rope_dim != kMlaKernelRope)
    return "the mla kernel is compiled for kv_lora_rank " + std::to_string(kMlaKernelRank) + " and rope_dim " +
           std::to_string(kMlaKernelRope) + " (got " + std::to_string(shape.kv_lora_rank) + " and " +
           std::to_string(shape.rope_dim) + ")";
  if (dtype != DType::fp16 && dtype != DType::bf16 && dtype != DType::fp8_e4m3)
    return "the mla kernel reads fp16, bf16 or fp8_e4m3 latent caches, not " + std::string(dtype_name(dtype));
  return {};
}

MlaDecodePlan plan_mla_decode(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sm_count,
                              int splits) {
  using Tr = device::MlaTraits;
  MlaDecodePlan p;
  p.batch = batch;
  p.rows = shape.rows();
  p.row_blocks = (p.rows + Tr::kRows - 1) / Tr::kRows;
  p.threads = Tr::kThreads;
  p.shared_bytes = Tr::shared_bytes(dtype_is_fp8(dtype));
  const std::int64_t tiles = std::max<std::int64_t>(1, (max_len + Tr::kTile - 1) / Tr::kTile);
  if (splits <= 0) {
    // One block per SM fits (shared memory); two waves of blocks, each split at least 4 tiles.
    const std::int64_t blocks = static_cast<std::int64_t>(batch) * p.row_blocks;
    const std::int64_t want = (2 * static_cast<std::int64_t>(sm_count) + blocks - 1) / std::max<std::int64_t>(blocks, 1);
    splits = static_cast<int>(std::clamp<std::int64_t>(want, 1, std::min<std::int64_t>(64, std::max<std::int64_t>(1, tiles / 4))));
  }
  p.num_splits = static_cast<int>(std::min<std::int64_t>(splits, tiles));
  p.split_tiles = static_cast<int>((tiles + p.num_splits - 1) / p.num_splits);
  p.num_splits = static_cast<int>((tiles + p.split_tiles - 1) / p.split_tiles);  // no split left empty by rounding
  if (p.num_splits > 1)
    p.workspace_bytes = static_cast<std::size_t>(p.num_splits) * batch * p.rows * (Tr::kVd + 1) * sizeof(float);
  return p;
}

template <class KV>
cudaError_t run_mla_decode(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens, const float* q,
                           float* o, float* lse, void* workspace, const MlaDecodePlan& plan, cudaStream_t stream) {
  using Tr = device::MlaTraits;
  using T = typename KV::value_type;
  if (plan.kernel == MlaDecodeKernel::wgmma) {  // the warpgroup-MMA kernel (kernels/mla/mla_decode_wgmma.hpp)
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
      return run_mla_decode_wgmma(shape, cache, seq_lens, q, o, lse, workspace, plan, stream);
    else
      return cudaErrorInvalidValue;
  }
  if (!mla_decode_unsupported_reason(shape, dtype_of<T>::value).empty() || cache.head_dim != Tr::kKd ||
      plan.rows != shape.rows() || plan.batch < 1 || (plan.num_splits > 1 && workspace == nullptr) ||
      plan.shared_bytes != static_cast<std::size_t>(Tr::shared_bytes(dtype_is_fp8(dtype_of<T>::value))))
    return cudaErrorInvalidValue;
  auto* kernel = device::mla_decode_kernel<T, KV>;
  if (const cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(plan.shared_bytes));
      e != cudaSuccess)
    return e;
  device::MlaArgs args{};
  args.seq_lens = seq_lens;
  args.q = q;
  args.batch = plan.batch;
  args.rows = plan.rows;
  args.heads_q = shape.heads_q;
  args.q_len = shape.q_len;
  args.chunk = plan.split_tiles * Tr::kTile;
  args.scale_log2 = static_cast<float>(shape.softmax_scale * 1.4426950408889634);
  args.partial = plan.num_splits > 1;
  const std::int64_t rows_total = static_cast<std::int64_t>(plan.batch) * plan.rows;
  float* o_part = static_cast<float*>(workspace);
  float* lse_part = args.partial ? o_part + static_cast<std::int64_t>(plan.num_splits) * rows_total * Tr::kVd : nullptr;
  args.o = args.partial ? o_part : o;
  args.lse = args.partial ? lse_part : lse;
  const dim3 grid(static_cast<unsigned>(plan.batch) * plan.row_blocks, plan.num_splits);
  kernel<<<grid, Tr::kThreads, plan.shared_bytes, stream>>>(cache, args);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess || !args.partial) return e;
  device::mla_merge_splits_kernel<<<static_cast<unsigned>(rows_total), Tr::kVd / 4, 0, stream>>>(
      o_part, lse_part, plan.num_splits, rows_total, o, lse);
  return cudaGetLastError();
}

cudaError_t run_mla_merge_splits(const MlaDecodePlan& plan, void* workspace, float* o, float* lse, cudaStream_t stream) {
  using Tr = device::MlaTraits;
  if (plan.num_splits < 2 || workspace == nullptr) return cudaErrorInvalidValue;
  const std::int64_t rows_total = static_cast<std::int64_t>(plan.batch) * plan.rows;
  float* o_part = static_cast<float*>(workspace);
  float* lse_part = o_part + static_cast<std::int64_t>(plan.num_splits) * rows_total * Tr::kVd;
  device::mla_merge_splits_kernel<<<static_cast<unsigned>(rows_total), Tr::kVd / 4, 0, stream>>>(
      o_part, lse_part, plan.num_splits, rows_total, o, lse);
  return cudaGetLastError();
}

#define DECODE_BENCH_MLA_DECODE(KV)                                                                                   \
  template cudaError_t run_mla_decode<KV>(const MlaShape&, const KV&, const std::int32_t*, const float*, float*,   \
                                          float*, void*, const MlaDecodePlan&, cudaStream_t);
DECODE_BENCH_MLA_DECODE(ContiguousKV<__half>)
DECODE_BENCH_MLA_DECODE(PagedKV<__half>)
DECODE_BENCH_MLA_DECODE(ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_MLA_DECODE(PagedKV<__nv_bfloat16>)
DECODE_BENCH_MLA_DECODE(ContiguousKV<__nv_fp8_e4m3>)
DECODE_BENCH_MLA_DECODE(PagedKV<__nv_fp8_e4m3>)
#undef DECODE_BENCH_MLA_DECODE

}  // namespace decode_bench
