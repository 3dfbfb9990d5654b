#pragma once
// Host side of the short-sequence decode kernel (kernels/short_decode.cuh): plan (the group's
// split over blocks, the shared-memory layout, occupancy) and launch. Included by
// kernels/decode_dispatch.cuh, so it compiles in the decode instantiation files: one kernel per
// accessor type (FP16, BF16, FP8; FP32 is refused), every head dim and group at runtime.
#include <algorithm>
#include <type_traits>

#include "harness/cuda_check.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/device_attribute_cache.hpp"
#include "kernels/flash_decode_launch.cuh"  // page_divider
#include "kernels/kernel_occupancy_cache.hpp"
#include "kernels/short_decode.cuh"

namespace decode_bench {

// Tokens a plan stages a sequence (at least 1, so an all-empty batch still has a valid layout).
inline int short_decode_capacity(const DecodeProblem& p) {
  return static_cast<int>(std::clamp<std::int64_t>(p.max_len, 1, kShortMaxLen));
}

// The layout of a plan's blocks: heads_per_block query heads (the last part of a group may take
// fewer: the regions are sized for the most).
inline ShortDecodeLayout short_decode_layout_of(const DecodeProblem& p, int elem_bytes, int heads_per_block) {
  return short_decode_layout(p.shape.head_dim, elem_bytes, heads_per_block, short_decode_capacity(p));
}

// Whether a plan of this capacity runs the long stage (65-128 tokens, kernels/short_decode.cuh).
inline bool short_decode_long_stage(int capacity) { return capacity > kShortFirstStageLen; }

// The most dynamic shared memory any short plan of a stage asks for (first stage: d 256 at 2 bytes,
// 16 heads, 64 tokens; long stage: d 256 at FP8, 16 heads, 128 tokens): every plan opts the
// stage's kernels in to this much, so that plans of different sizes can share a process.
inline int short_decode_max_shared_bytes(bool long_stage) {
  return long_stage ? short_decode_layout(kMaxKernelHeadDim, 1, kShortMaxBlockHeads, static_cast<int>(kShortMaxLen)).bytes
                    : short_decode_layout(kMaxKernelHeadDim, 2, kShortMaxBlockHeads,
                                          static_cast<int>(kShortFirstStageLen)).bytes;
}

// The kernel instance whose compile-time head bound (kMaxHeads: 1, 2, 4, 8, 16) is the smallest
// that holds a block's heads, so the per-head accumulators are registers and no predicated-off head
// issues instructions at the common groups (1, 2, 4, 8).
template <class KV, int kStageTokens>
const void* short_decode_stage_kernel_for(int heads) {
  if (heads <= 1) return reinterpret_cast<const void*>(device::short_decode_kernel<KV, 1, kStageTokens>);
  if (heads <= 2) return reinterpret_cast<const void*>(device::short_decode_kernel<KV, 2, kStageTokens>);
  if (heads <= 4) return reinterpret_cast<const void*>(device::short_decode_kernel<KV, 4, kStageTokens>);
  if (heads <= 8) return reinterpret_cast<const void*>(device::short_decode_kernel<KV, 8, kStageTokens>);
  return reinterpret_cast<const void*>(device::short_decode_kernel<KV, kShortMaxBlockHeads, kStageTokens>);
}
template <class KV>
const void* short_decode_kernel_for(int heads, bool long_stage) {
  return long_stage ? short_decode_stage_kernel_for<KV, static_cast<int>(kShortMaxLen)>(heads)
                    : short_decode_stage_kernel_for<KV, static_cast<int>(kShortFirstStageLen)>(heads);
}

// The automatic path's choice (decode_prefers_short) for this accessor type: the SM count is read
// (cached) only for batches beyond the first stage, whose rule counts blocks against SMs; where it
// cannot be read the other paths plan (and report the error).
template <class KV>
bool short_decode_automatic(const DecodeProblem& p, const DecodeOptions& options) {
  int sms = 0;
  if (p.max_len > kShortFirstStageLen) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return false;
  }
  return decode_prefers_short(p, options, is_paged_accessor<KV>::value, sms);
}

template <class KV>
cudaError_t plan_short_decode(const DecodeProblem& p, const DecodeOptions& options, DecodePlan* plan) {
  using T = typename KV::value_type;
  if constexpr (std::is_same_v<T, float>) {
    return cudaErrorInvalidValue;  // decode_short_unsupported_reason says why
  } else {
    if (decode_short_unsupported_reason(p, options)) return cudaErrorInvalidValue;
    int dev = 0, sms = 0, per_sm = 0;
    DB_RETURN_IF_ERROR(cudaGetDevice(&dev));
    DB_RETURN_IF_ERROR(cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int heads = short_decode_block_heads(p, sms);
    const ShortDecodeLayout layout = short_decode_layout_of(p, sizeof(T), heads);
    const bool long_stage = short_decode_long_stage(short_decode_capacity(p));
    // The shared-memory opt-in, the carveout and the occupancy through the table the row kernels
    // use (kernels/kernel_occupancy_cache.hpp): driver calls on the first plan only, not on every
    // step of a serving trace.
    DB_RETURN_IF_ERROR(prepared_occupancy(short_decode_kernel_for<KV>(heads, long_stage),
                                          static_cast<std::size_t>(short_decode_max_shared_bytes(long_stage)),
                                          options.tuning.carveout_max_shared,
                                          long_stage ? device::kShortLongThreads : device::kShortThreads,
                                          static_cast<std::size_t>(layout.bytes), &per_sm));
    if (per_sm == 0) return cudaErrorInvalidConfiguration;
    plan->kernel = DecodeKernel::flash_decode;
    plan->path = DecodePath::short_seq;
    plan->num_splits = plan->active_splits = 1;
    plan->heads_per_block = 1;  // KV heads a block reads
    plan->query_heads_per_block = heads;
    plan->chunk = plan->tile_tokens = short_decode_capacity(p);
    plan->blocks_per_sm = per_sm;
    plan->fused_merge = false;  // nothing to merge
    plan->workspace_bytes = plan->workspace_init_bytes = 0;
    plan->short_layout = layout;  // the launch uses it as planned
    return cudaSuccess;
  }
}

template <class KV>
cudaError_t run_short_decode(const KV& kv, const DecodeProblem& p, const DecodePlan& plan, cudaStream_t stream) {
  using T = typename KV::value_type;
  if constexpr (std::is_same_v<T, float>) {
    return cudaErrorInvalidValue;
  } else {
    // The plan must be this problem's: its staged tokens cover every sequence, its heads divide up
    // the group, its layout is sized for this head dim, storage and heads.
    // The long stage stages rows of at most kShortLongMaxRowBytes and at most kShortMaxLen of them.
    const int heads = plan.query_heads_per_block;
    const ShortDecodeLayout& layout = plan.short_layout;
    const bool long_stage = short_decode_long_stage(plan.tile_tokens);
    if (p.max_len > kShortMaxLen || plan.tile_tokens != short_decode_capacity(p) || heads < 1 ||
        heads > std::min(p.shape.group(), kShortMaxBlockHeads) || !head_dim_supported(p.shape.head_dim) ||
        layout.chunks * 16 != p.shape.head_dim * static_cast<int>(sizeof(T)) || layout.heads != heads ||
        layout.rows < plan.tile_tokens || layout.rows > kShortMaxLen ||
        layout.bytes > short_decode_max_shared_bytes(long_stage) ||
        (long_stage && layout.chunks * 16 > kShortLongMaxRowBytes))
      return cudaErrorInvalidValue;
    device::ShortDecodeArgs args{};
    args.q = p.q;
    args.lens = p.seq_lens;
    args.o = p.o;
    args.lse = p.lse;
    args.heads_q = p.shape.heads_q;
    args.head_dim = p.shape.head_dim;
    args.group = p.shape.group();
    args.heads = heads;
    args.capacity = plan.tile_tokens;
    args.q_scale = static_cast<float>(p.shape.softmax_scale()) * device::kShortLog2e;
    args.page_div = page_divider(kv);
    args.layout = layout;
    const dim3 grid(static_cast<unsigned>(p.num_seqs), static_cast<unsigned>(p.shape.heads_kv),
                    static_cast<unsigned>((args.group + heads - 1) / heads));
    args.timeline = take_block_timeline(std::int64_t{grid.x} * grid.y * grid.z, "short_decode");
    const int threads = long_stage ? device::kShortLongThreads : device::kShortThreads;
    const auto launch = [&](auto kernel) {
      kernel<<<grid, threads, layout.bytes, stream>>>(kv, args);
      return cudaGetLastError();
    };
    const auto launch_stage = [&](auto stage) {
      constexpr int kStage = decltype(stage)::value;
      if (heads <= 1) return launch(device::short_decode_kernel<KV, 1, kStage>);
      if (heads <= 2) return launch(device::short_decode_kernel<KV, 2, kStage>);
      if (heads <= 4) return launch(device::short_decode_kernel<KV, 4, kStage>);
      if (heads <= 8) return launch(device::short_decode_kernel<KV, 8, kStage>);
      return launch(device::short_decode_kernel<KV, kShortMaxBlockHeads, kStage>);
    };
    return long_stage ? launch_stage(std::integral_constant<int, static_cast<int>(kShortMaxLen)>{})
                      : launch_stage(std::integral_constant<int, static_cast<int>(kShortFirstStageLen)>{});
  }
}

}  // namespace decode_bench
