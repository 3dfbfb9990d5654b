#pragma once
// Uniform entry points of the GPU decode kernels, split FlashInfer-style into plan (host-side
// choices and workspace size, outside any timed region) and run (launches only, stream-ordered,
// graph-capturable). Both return cudaError_t; cudaErrorInvalidValue means the configuration is
// unsupported (see decode_unsupported_reason for the sentence).
//
// Instantiated for ContiguousKV<T> and PagedKV<T>, T in {float, __half, __nv_bfloat16,
// __nv_fp8_e4m3, __nv_fp8_e5m2}. FP8 accessors carry per-KV-head dequantization scales
// (kv_accessor.hpp); only flash_decode (either path) takes FP8 (the baseline refuses it).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/decode_balance.hpp"
#include "kernels/decode_problem.hpp"
#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/short_decode_layout.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {

// Which kernel family runs a flash_decode plan. tensor_core: the grouped query heads of each
// (sequence, KV head) as one row-attention item (kernels/row_attention.hpp, mma.sync), for FP16 /
// BF16 storage at GQA groups >= kRowAttentionMinGroup and groups the CUDA-core kernel has no
// compiled tiling for (3, 5-7, 9-16, MQA up to 128 query heads). FP8 storage takes it
// automatically only at the groups without a CUDA-core tiling (decode_prefers_tensor_core), and
// anywhere in 1-16 / MQA when DecodeOptions::path pins it. short_seq: plain decodes whose
// sequences all fit one shared-memory stage (max_len <= kShortMaxLen), one block per (sequence, KV
// head), no splits (kernels/short_decode.cuh; docs/kernels/short_decode.md).
enum class DecodePath { automatic, cuda_core, tensor_core, short_seq };
constexpr std::string_view decode_path_name(DecodePath p) {
  return p == DecodePath::tensor_core ? "tensor_core"
         : p == DecodePath::cuda_core ? "cuda_core"
         : p == DecodePath::short_seq ? "short_seq"
                                      : "automatic";
}
inline constexpr int kRowAttentionMinGroup = 3;

// Planning choices a caller may pin; the defaults leave each to the planner.
struct DecodeOptions {
  int splits = 0;           // flash_decode: blocks per (sequence, head block); <= 0: fill one wave
                            // of blocks, and do not split sequences shorter than a couple of tiles
  int heads_per_block = 0;  // flash_decode: KV heads one block streams side by side (dividing H_kv
                            // and the block's warps); <= 0: one (tuning probes try more)
  bool fused_merge = true;  // flash_decode: false merges the splits in a second kernel (probes)
  DecodePath path = DecodePath::automatic;  // flash_decode: pin the kernel family (probes, tests);
                                            // automatic with heads_per_block > 0 keeps the CUDA cores
  // The knobs this plan follows where the fields above leave a choice to the planner (the sweep's,
  // parsed once from the environment: kernels/tuning_policy.hpp); the tensor-core path hands it on.
  TuningPolicy tuning{};
};

struct DecodePlan {
  DecodeKernel kernel = DecodeKernel::flash_decode;
  int num_splits = 1;             // flash_decode: blocks per (sequence, head block); 1 = no merge
  int heads_per_block = 1;        // flash_decode: KV heads per block, each read by warps / this warps
  int active_splits = 1;          // of those, how many hold at least one token of the longest sequence
  std::int64_t chunk = 0;         // flash_decode: tokens per chunk; split s takes chunks s, s + num_splits, ...
  bool interleaved = false;       // flash_decode: chunk is one tile, so splits take turns tile by tile
  int tile_tokens = 0;            // flash_decode: tokens of one head per block iteration
  int blocks_per_sm = 0;          // occupancy of the main kernel
  bool fused_merge = false;       // flash_decode: the last split block of a head block merges (no second kernel)
  DecodePath path = DecodePath::cuda_core;  // flash_decode: the kernel family chosen (never automatic)
  RowAttentionPlan rows;          // path tensor_core: the row-attention plan (num_splits etc. mirror it)
  DecodeTiling tiling = DecodeTiling::standard;  // path cuda_core: the compiled tiling
  int query_heads_per_block = 0;  // path short_seq: query heads of the group one block takes (the
                                  // group runs over ceil(group / this) blocks); 0 on the other paths
  ShortDecodeLayout short_layout;  // path short_seq: the blocks' shared memory, as the launch uses it
  // Ragged batches with host lengths (DecodeProblem::host_seq_lens): one block per (work item, head
  // block), each item a split of one sequence (kernels/decode_balance.hpp); num_splits is then the
  // largest split count, chunk one tile (chunk_bound under DECODE_BENCH_FD_WORK_CHUNKS=ranges).
  // Empty: the uniform grid. init_decode_workspace uploads them.
  std::vector<DecodeWorkItem> work_items;
  std::int64_t chunk_bound = 0;   // work list: tokens of one KV head per item at most
  std::size_t workspace_bytes = 0;
  // The first workspace_init_bytes of the workspace must be zero before the first run on it
  // (init_decode_workspace); every complete run leaves them zero again.
  std::size_t workspace_init_bytes = 0;
};

// Why this problem cannot run on the compiled kernels, or nullopt.
std::optional<std::string> decode_unsupported_reason(const DecodeProblem& problem);
// The same, and whether this kernel takes the problem's storage type (the baseline has no FP8 path).
std::optional<std::string> decode_kernel_unsupported_reason(DecodeKernel kernel, const DecodeProblem& problem);

// Whether flash_decode runs this problem on the tensor-core row-attention path (DecodePath
// automatic), and whether it can (any other choice is refused by plan_decode). The tuning policy
// matters for attention variants only (DECODE_BENCH_FD_VARIANT_PATH).
bool decode_prefers_tensor_core(const DecodeProblem& problem, const TuningPolicy& tuning = {});
bool decode_tensor_core_supported(const DecodeProblem& problem);

// The short-sequence path (DecodePath::short_seq, kernels/short_decode_support.cpp): why it cannot
// run this problem under these options (nullopt: it can), and whether plan_decode takes it when
// the path is automatic (over paged K/V or not, on a GPU of `sms` SMs): up to kShortFirstStageLen
// tokens wherever it can run; from there to kShortMaxLen where DECODE_BENCH_FD_SHORT_MAX_LEN says
// (auto: decodes the tensor-core row path would otherwise take, by their blocks an SM: paged at one
// or fewer, up to kShortLongAutoMaxLenAtTwoPerSm tokens at one to two, any beyond two);
// never where the options pin splits, heads per block, the separate merge or a tiling of the other
// paths, or DECODE_BENCH_FD_SHORT_SEQ=off.
// Two compile-time stages: up to kShortFirstStageLen tokens, blocks of kShortWarps warps staging rows
// of up to 512 bytes (d 256 at 2 bytes); beyond, up to kShortMaxLen, blocks of kShortLongWarps warps
// staging rows of up to kShortLongMaxRowBytes (d 128 at 2 bytes, d 256 at FP8).
inline constexpr std::int64_t kShortMaxLen = 128;
inline constexpr std::int64_t kShortFirstStageLen = 64;
inline constexpr int kShortLongMaxRowBytes = 256;
inline constexpr std::int64_t kShortLongAutoMaxLenAtTwoPerSm = 96;
std::optional<std::string> decode_short_unsupported_reason(const DecodeProblem& problem, const DecodeOptions& options);
bool decode_prefers_short(const DecodeProblem& problem, const DecodeOptions& options, bool paged, int sms);
// Query heads one short-path block takes: the whole group where that gives at least
// kShortTargetBlocksPerSm blocks an SM over `items` (sequence, KV head) pairs, else the group split
// over just enough blocks (each but the last still at least one head a warp), and never more than
// kShortMaxBlockHeads (the q rows and scores in shared memory).
inline constexpr int kShortMaxBlockHeads = 16;
inline constexpr int kShortWarps = 4;      // warps of a first-stage block (up to 64 tokens)
inline constexpr int kShortLongWarps = 8;  // warps of a long-stage block (65-128 tokens)
inline constexpr int kShortTargetBlocksPerSm = 4;
int short_decode_heads_per_block(int group, std::int64_t items, int sms);
// The long stage's (65-128 tokens): the group split over at most as many blocks as leave no more
// blocks than SMs (idle SMs take a part; a second block on an SM would only queue behind the
// first), within the same bounds (at most kShortMaxBlockHeads heads, at least kShortWarps heads a
// block but the last).
int short_decode_long_heads_per_block(int group, std::int64_t items, int sms);
// Query heads a block of this problem's plan takes, by its stage (max_len up to kShortFirstStageLen
// or beyond).
int short_decode_block_heads(const DecodeProblem& problem, int sms);

// The decode step as row-attention items (seq, kv_head), rows = the group's query heads.
RowAttentionProblem decode_as_row_attention(const DecodeProblem& problem);

template <class KV>
cudaError_t plan_decode(DecodeKernel kernel, const DecodeProblem& problem, const DecodeOptions& options,
                        DecodePlan* plan);

// Zeroes the part of a fresh workspace the kernels expect zero (the fused merge's counters) and
// uploads a work-list plan's items after it (host memory: the call returns once they are copied).
// Call once after allocating (or poisoning) it, outside any timed region.
cudaError_t init_decode_workspace(const DecodePlan& plan, void* workspace, cudaStream_t stream);

template <class KV>
cudaError_t run_decode(const KV& kv, const DecodeProblem& problem, const DecodePlan& plan, void* workspace,
                       cudaStream_t stream);

}  // namespace decode_bench
