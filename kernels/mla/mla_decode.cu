// The MLA decode kernels' plan and launch (kernels/mla/mla_decode.hpp): the 64-row kernel
// (mla_decode.cuh) and the narrow one for rows <= 32 (mla_decode_narrow.cuh), FP16, BF16 and FP8
// latent caches, contiguous and paged; a wgmma plan is handed to run_mla_decode_wgmma
// (mla_decode_wgmma.hpp), whose splits this file's merge combines.
#include "kernels/mla/mla_decode.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/kernel_occupancy_cache.hpp"
#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_decode.cuh"
#include "kernels/mla/mla_decode_narrow.cuh"
#include "kernels/mla/mla_decode_wgmma.hpp"

namespace decode_bench {

const char* mla_kernel_name(MlaKernel kernel) {
  switch (kernel) {
    case MlaKernel::mma_narrow: return "mla_decode_mma_narrow";
    case MlaKernel::wgmma: return "mla_decode_wgmma";
    case MlaKernel::mma: break;
  }
  return "mla_decode_mma";
}

nlohmann::json MlaDecodePlan::to_json() const {
  nlohmann::json j = {{"kernel", mla_kernel_name(kernel)},
          {"rows", rows},
          {"rows_per_block", rows_per_block},
          {"row_blocks", row_blocks},
          {"num_splits", num_splits},
          {"split_tiles", split_tiles},
          {"tile_tokens", tile_tokens},
          {"stages", stages},
          {"threads", threads},
          {"shared_bytes", shared_bytes},
          {"workspace_bytes", workspace_bytes},
          {"dependent_merge", dependent_merge}};
  if (kernel == MlaKernel::wgmma) j["warpgroups"] = warpgroups;
  if (num_splits > 1) {
    j["merge_column_blocks"] = merge_column_blocks;
    j["fused_merge"] = fused_merge;
    j["cluster_merge"] = cluster_merge;
    j["spread_merge"] = spread_merge;
  }
  return j;
}

DType mla_io_dtype(DType latent_dtype) {
  switch (latent_dtype) {
    case DType::fp16:
    case DType::fp8_e4m3: return DType::fp16;
    case DType::bf16: return DType::bf16;
    default: break;
  }
  throw std::invalid_argument("no mla kernel reads a " + std::string(dtype_name(latent_dtype)) + " latent cache");
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

void set_mla_splits(MlaDecodePlan& p, int splits, std::int64_t tiles, int sm_count) {
  p.num_splits = static_cast<int>(std::min<std::int64_t>(splits, tiles));
  p.split_tiles = static_cast<int>((tiles + p.num_splits - 1) / p.num_splits);
  p.num_splits = static_cast<int>((tiles + p.split_tiles - 1) / p.split_tiles);
  if (p.num_splits > 1)
    p.workspace_bytes = static_cast<std::size_t>(p.num_splits) * p.batch * p.rows * (kMlaKernelRank + 1) * sizeof(float);
  p.merge_column_blocks =
      mla_merge_column_blocks(p.num_splits, static_cast<std::int64_t>(p.batch) * p.rows, std::max(1, sm_count));
}

namespace {

// The 64-row kernel.
MlaDecodePlan plan_mla_wide(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sm_count,
                            int splits) {
  using Tr = device::MlaTraits;
  MlaDecodePlan p;
  p.kernel = MlaKernel::mma;
  p.batch = batch;
  p.rows = shape.rows();
  p.rows_per_block = Tr::kRows;
  p.row_blocks = (p.rows + Tr::kRows - 1) / Tr::kRows;
  p.tile_tokens = Tr::kTile;
  p.stages = Tr::kStages;
  p.threads = Tr::kThreads;
  p.shared_bytes = Tr::shared_bytes(dtype_is_fp8(dtype));
  const std::int64_t tiles = std::max<std::int64_t>(1, (max_len + Tr::kTile - 1) / Tr::kTile);
  if (splits <= 0) {
    // One block per SM fits (shared memory); two waves of blocks, each split at least 4 tiles.
    const std::int64_t blocks = static_cast<std::int64_t>(batch) * p.row_blocks;
    const std::int64_t want = (2 * static_cast<std::int64_t>(sm_count) + blocks - 1) / std::max<std::int64_t>(blocks, 1);
    splits = static_cast<int>(std::clamp<std::int64_t>(want, 1, std::min<std::int64_t>(64, std::max<std::int64_t>(1, tiles / 4))));
  }
  set_mla_splits(p, splits, tiles, sm_count);
  return p;
}

// The narrow kernel: 16 rows per block up to 16 rows, else 32. One block per SM (its shared
// memory is over half an SM's), so a wave is sm_count blocks and a block's time is about its
// tiles' time on its SM's share of the DRAM bus. The split count minimizes, in tiles' times,
//   waves x (tiles per split + partial)  + (splits > 1: one more, the merge's launch)
// with partial the bytes a block's split partials cost (o and lse written, read by the merge) in
// tiles, charged only when there are splits: without the charge 128 sequences of 16K would take
// 64 splits (63 waves of 4 tiles against one wave of 256, 4 SMs idle) and move a fifth more bytes.
MlaDecodePlan plan_mla_narrow(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sm_count,
                              int splits) {
  constexpr int kMaxSplits = 128;
  const bool fp8 = dtype_is_fp8(dtype);
  MlaDecodePlan p;
  p.kernel = MlaKernel::mma_narrow;
  p.batch = batch;
  p.rows = shape.rows();
  p.rows_per_block = p.rows <= 16 ? 16 : 32;
  p.row_blocks = (p.rows + p.rows_per_block - 1) / p.rows_per_block;
  p.tile_tokens = device::MlaNarrowTraits<1>::kTile;
  p.stages = fp8 ? device::MlaNarrowTraits<1>::kRawStages : device::MlaNarrowTraits<1>::kStages;
  p.threads = device::MlaNarrowTraits<1>::kThreads;
  p.shared_bytes = p.rows_per_block == 16 ? device::MlaNarrowTraits<1>::shared_bytes(fp8)
                                          : device::MlaNarrowTraits<2>::shared_bytes(fp8);
  const std::int64_t tiles = std::max<std::int64_t>(1, (max_len + p.tile_tokens - 1) / p.tile_tokens);
  if (splits <= 0) {
    const std::int64_t blocks = static_cast<std::int64_t>(batch) * p.row_blocks;
    const std::int64_t slots = std::max(1, sm_count);
    const double tile_bytes = static_cast<double>(p.tile_tokens) * shape.key_dim() * dtype_bytes(dtype);
    const double partial = 2.0 * p.rows_per_block * (kMlaKernelRank + 1) * sizeof(float) / tile_bytes;
    double best_cost = -1;
    for (std::int64_t s = 1; s <= std::min<std::int64_t>(kMaxSplits, tiles); ++s) {
      const std::int64_t waves = (blocks * s + slots - 1) / slots;
      const double per_block = static_cast<double>((tiles + s - 1) / s) + (s > 1 ? partial : 0.0);
      const double cost = static_cast<double>(waves) * per_block + (s > 1 ? 1.0 : 0.0);
      if (best_cost < 0 || cost < best_cost) {
        best_cost = cost;
        splits = static_cast<int>(s);
      }
    }
  }
  set_mla_splits(p, splits, tiles, sm_count);
  return p;
}

// The kernel a plan names, and the launch shape it must have been planned with.
template <class KV>
struct MlaLaunch {
  void (*kernel)(KV, device::MlaArgs) = nullptr;
  int rows_per_block = 0, tile_tokens = 0, threads = 0;
  std::size_t shared_bytes = 0;
};

template <class T, class KV>
MlaLaunch<KV> mla_launch_of(const MlaDecodePlan& plan) {
  constexpr bool fp8 = dtype_is_fp8(dtype_of<T>::value);
  MlaLaunch<KV> l;
  if (plan.kernel == MlaKernel::mma) {
    using Tr = device::MlaTraits;
    l = {device::mla_decode_kernel<T, KV>, Tr::kRows, Tr::kTile, Tr::kThreads, static_cast<std::size_t>(Tr::shared_bytes(fp8))};
  } else if (plan.kernel == MlaKernel::mma_narrow && plan.rows_per_block == 16) {
    using Tr = device::MlaNarrowTraits<1>;
    l = {device::mla_decode_narrow_kernel<T, KV, 1>, Tr::kRows, Tr::kTile, Tr::kThreads,
         static_cast<std::size_t>(Tr::shared_bytes(fp8))};
  } else if (plan.kernel == MlaKernel::mma_narrow && plan.rows_per_block == 32) {
    using Tr = device::MlaNarrowTraits<2>;
    l = {device::mla_decode_narrow_kernel<T, KV, 2>, Tr::kRows, Tr::kTile, Tr::kThreads,
         static_cast<std::size_t>(Tr::shared_bytes(fp8))};
  }
  return l;
}

}  // namespace

MlaDecodePlan plan_mla_decode(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sm_count,
                              int splits, std::optional<MlaKernel> kernel) {
  if (kernel == MlaKernel::wgmma)
    throw std::invalid_argument("plan_mla_decode plans the mma.sync mla kernels; mla_decode_wgmma's plan is "
                                "plan_mla_decode_wgmma's");
  if (kernel == MlaKernel::mma_narrow && shape.rows() > kMlaNarrowMaxRows)
    throw std::invalid_argument("the pinned mla kernel mla_decode_mma_narrow does not compute this point: heads_q x "
                                "q_len " + std::to_string(shape.rows()) + " is over its " +
                                std::to_string(kMlaNarrowMaxRows) + " rows");
  const MlaKernel pick = kernel ? *kernel : shape.rows() <= kMlaNarrowMaxRows ? MlaKernel::mma_narrow : MlaKernel::mma;
  if (pick == MlaKernel::mma_narrow) return plan_mla_narrow(shape, dtype, batch, max_len, sm_count, splits);
  return plan_mla_wide(shape, dtype, batch, max_len, sm_count, splits);
}

template <class KV>
cudaError_t run_mla_decode(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens,
                           const MlaIo<typename KV::value_type>* q, MlaIo<typename KV::value_type>* o, float* lse,
                           void* workspace, const MlaDecodePlan& plan, cudaStream_t stream) {
  using T = typename KV::value_type;
  if (plan.kernel == MlaKernel::wgmma) {  // the warpgroup-MMA kernel (kernels/mla/mla_decode_wgmma.hpp)
    if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>)
      return run_mla_decode_wgmma(shape, cache, seq_lens, q, o, lse, workspace, plan, stream);
    else
      return cudaErrorInvalidValue;
  }
  const MlaLaunch<KV> launch = mla_launch_of<T, KV>(plan);
  if (!mla_decode_unsupported_reason(shape, dtype_of<T>::value).empty() || cache.head_dim != shape.key_dim() ||
      plan.rows != shape.rows() || plan.batch < 1 || (plan.num_splits > 1 && workspace == nullptr) ||
      launch.kernel == nullptr || plan.rows_per_block != launch.rows_per_block ||
      plan.tile_tokens != launch.tile_tokens || plan.threads != launch.threads ||
      plan.row_blocks != (plan.rows + launch.rows_per_block - 1) / launch.rows_per_block ||
      plan.shared_bytes != launch.shared_bytes || plan.fused_merge || plan.cluster_merge || plan.spread_merge)
    return cudaErrorInvalidValue;
  int blocks_per_sm = 0;  // the shared-memory limit set once per kernel, not on every launch
  if (const cudaError_t e = prepared_occupancy(reinterpret_cast<const void*>(launch.kernel), plan.shared_bytes, false,
                                               launch.threads, plan.shared_bytes, &blocks_per_sm);
      e != cudaSuccess)
    return e;
  const device::MlaArgs args = make_mla_args(shape, plan, seq_lens, q, o, lse, workspace);
  const dim3 grid(static_cast<unsigned>(plan.batch) * plan.row_blocks, plan.num_splits);
  launch.kernel<<<grid, launch.threads, plan.shared_bytes, stream>>>(cache, args);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess || !args.partial) return e;
  return run_mla_merge_splits(plan, workspace, o, lse, stream);
}

cudaError_t init_mla_workspace(const MlaDecodePlan& plan, void* workspace, cudaStream_t stream) {
  const std::size_t bytes = mla_split_counter_bytes(plan);
  if (bytes == 0) return cudaSuccess;
  if (workspace == nullptr) return cudaErrorInvalidValue;
  return cudaMemsetAsync(mla_partials(plan, workspace).counters, 0, bytes, stream);
}

template <class Io>
cudaError_t run_mla_merge_splits(const MlaDecodePlan& plan, void* workspace, Io* o, float* lse, cudaStream_t stream) {
  if (plan.num_splits < 2 || workspace == nullptr) return cudaErrorInvalidValue;
  const std::int64_t rows_total = static_cast<std::int64_t>(plan.batch) * plan.rows;
  const MlaPartials part = mla_partials(plan, workspace);
  const auto* part_o = static_cast<const float*>(part.o);
  const auto* part_lse = static_cast<const float*>(part.lse);
  const int threads = mla_merge_threads(plan.num_splits);
  const bool many = threads == kMlaMergeThreadsMany;
  if (many && plan.merge_column_blocks != 1 && plan.merge_column_blocks != kMlaMergeQuarterBlocks)
    return cudaErrorInvalidValue;
  const int column_blocks = many ? plan.merge_column_blocks : 1;
  const dim3 grid(static_cast<unsigned>(rows_total), static_cast<unsigned>(column_blocks));
  const auto kernel = !many                ? device::mla_merge_few_splits_kernel<Io>
                      : column_blocks == 1 ? device::mla_merge_many_splits_kernel<Io, 1>
                                           : device::mla_merge_many_splits_kernel<Io, kMlaMergeQuarterBlocks>;
  return launch_merge_kernel(plan.dependent_merge, kernel, grid, dim3(threads), stream, part_o, part_lse,
                             plan.num_splits, rows_total, o, lse);
}

template cudaError_t run_mla_merge_splits<__half>(const MlaDecodePlan&, void*, __half*, float*, cudaStream_t);
template cudaError_t run_mla_merge_splits<__nv_bfloat16>(const MlaDecodePlan&, void*, __nv_bfloat16*, float*,
                                                         cudaStream_t);

#define DECODE_BENCH_MLA_DECODE(KV)                                                                          \
  template cudaError_t run_mla_decode<KV>(const MlaShape&, const KV&, const std::int32_t*,                \
                                          const MlaIo<KV::value_type>*, MlaIo<KV::value_type>*, float*, void*, \
                                          const MlaDecodePlan&, cudaStream_t);
DECODE_BENCH_MLA_DECODE(ContiguousKV<__half>)
DECODE_BENCH_MLA_DECODE(PagedKV<__half>)
DECODE_BENCH_MLA_DECODE(ContiguousKV<__nv_bfloat16>)
DECODE_BENCH_MLA_DECODE(PagedKV<__nv_bfloat16>)
DECODE_BENCH_MLA_DECODE(ContiguousKV<__nv_fp8_e4m3>)
DECODE_BENCH_MLA_DECODE(PagedKV<__nv_fp8_e4m3>)
#undef DECODE_BENCH_MLA_DECODE

}  // namespace decode_bench
