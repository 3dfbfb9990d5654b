#pragma once
// decode-bench's own MLA decode kernel (kernels/mla/mla_decode.cuh), as callers see it: the plan
// (how the sequence is split, the launch shape, the workspace) and the launch.
//
// One block holds 64 query rows of one sequence (rows = heads_q x q_len, row r = position r /
// heads_q, head r % heads_q) and streams one token range of the sequence's latent cache through
// shared memory, each 32-token tile read once for all its rows. A sequence's row blocks are
// neighbours in the grid, so with more than 64 rows the second block reads the tiles the first
// just brought into L2. Short batches split each sequence's tokens over several blocks and a merge
// kernel combines the splits by their log-sum-exp.
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>

#include "kernels/dtype.hpp"
#include "kernels/mla/mla_shape.hpp"

namespace decode_bench {

// The kernel's compiled shape: DeepSeek-V3's and Kimi K2's latent row.
inline constexpr int kMlaKernelRank = 512;
inline constexpr int kMlaKernelRope = 64;

// Which kernel a plan launches: the mma.sync kernel here, or the warpgroup-MMA kernel
// (kernels/mla/mla_decode_wgmma.hpp, whose planner sets the fields after `kernel`).
enum class MlaDecodeKernel { mma, wgmma };

struct MlaDecodePlan {
  int batch = 0;
  int rows = 0;          // heads_q x q_len per sequence
  int row_blocks = 0;    // ceil(rows / 64)
  int num_splits = 1;    // token ranges per sequence (1: no merge)
  int split_tiles = 0;   // 32-token tiles per split of the longest sequence (the split's length rule)
  int threads = 0;
  std::size_t shared_bytes = 0;
  std::size_t workspace_bytes = 0;  // split partials (o and lse per split and row); 0 without splits
  MlaDecodeKernel kernel = MlaDecodeKernel::mma;
  int warpgroups = 0;  // wgmma: 128-thread warpgroups per block (split_tiles count its 64-token tiles)
  nlohmann::json to_json() const;
};

// Empty when the kernel computes this point, else why not (compiled latent shape, storage type:
// fp16, bf16, fp8_e4m3).
std::string mla_decode_unsupported_reason(const MlaShape& shape, DType dtype);

// Splits so that about two waves of blocks cover the device (at least 4 tiles per split, at most
// 64 splits); splits = 0 picks, any other value is taken as given (clamped to the tiles of
// max_len).
// dtype: the latent cache's storage type (FP8 stages bytes and widens them: more shared memory).
MlaDecodePlan plan_mla_decode(const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sm_count,
                              int splits = 0);

// cache: ContiguousKV<T> or PagedKV<T> of one head, head_dim 576, K and V the same array (device
// memory), T = __half, __nv_bfloat16 or __nv_fp8_e4m3 (then k_scale = v_scale = the cache's one
// scale in device memory, or nullptr for 1). seq_lens: (batch) device int32. q: (batch, rows, 576) FP32
// (rounded to T inside); o: (batch, rows, 512) FP32; lse: (batch, rows) FP32 natural log (-inf
// where no token is visible, o then 0). workspace: plan.workspace_bytes of device memory.
template <class KV>
cudaError_t run_mla_decode(const MlaShape& shape, const KV& cache, const std::int32_t* seq_lens, const float* q,
                           float* o, float* lse, void* workspace, const MlaDecodePlan& plan, cudaStream_t stream);

// The split merge of run_mla_decode alone: combines plan.num_splits partials in `workspace` (the
// layout run_mla_decode writes) into o and lse by their log-sum-exp. The warpgroup-MMA kernel's
// launch shares it.
cudaError_t run_mla_merge_splits(const MlaDecodePlan& plan, void* workspace, float* o, float* lse, cudaStream_t stream);

}  // namespace decode_bench
