#pragma once
// Host side of the short-sequence decode kernel (kernels/short_decode.cuh): plan (the group's
// split over blocks, the shared-memory layout, occupancy) and launch. Included by
// kernels/decode_dispatch.cuh, so it compiles in the decode instantiation files: one kernel per
// accessor type (FP16, BF16, FP8; FP32 is refused), every head dim and group at runtime.
// kVariant = true: the attention-variant kernels (one query token with a window, soft-cap or
// sinks), planned and launched by the same code, but instantiated only in
// kernels/instantiate/short_decode_variant_*.cu (kernels/short_decode_variant_launch.cuh).
#include <algorithm>
#include <type_traits>

#include "harness/cuda_check.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/device_attribute_cache.hpp"
#include "kernels/row_locator.cuh"  // page_divider
#include "kernels/kernel_occupancy_cache.hpp"
#include "kernels/short_decode.cuh"
#include "kernels/short_decode_variant.hpp"  // short_decode_tokens

namespace decode_bench {

// Tokens a plan stages a sequence (at least 1, so an all-empty batch still has a valid layout): the
// longest sequence, or a window's tokens (short_decode_tokens).
inline int short_decode_capacity(const DecodeProblem& p) {
  return static_cast<int>(std::clamp<std::int64_t>(short_decode_tokens(p), 1, kShortMaxLen));
}

// The layout of a plan's blocks for storage type T: heads_per_block query heads (the last part of a
// group may take fewer: the regions are sized for the most), rows to T's row multiple.
template <class T>
ShortDecodeLayout short_decode_layout_of(const DecodeProblem& p, int heads_per_block) {
  return short_decode_layout(p.shape.head_dim, sizeof(T), heads_per_block, short_decode_capacity(p),
                             device::kShortRowMultipleOf<T>);
}

// Whether a plan of this capacity runs the long stage (65-128 tokens, kernels/short_decode.cuh).
inline bool short_decode_long_stage(int capacity) { return capacity > kShortFirstStageLen; }

// The most dynamic shared memory any short plan of a stage asks for (first stage: d 256 at 2 bytes,
// 16 heads, 64 tokens; long stage: d 256 at FP8, 16 heads, 128 tokens): every plan opts the
// stage's kernels in to this much, so that plans of different sizes can share a process.
inline int short_decode_max_shared_bytes(bool long_stage) {
  // (Both stages' token limits are multiples of either row multiple.)
  static_assert(kShortFirstStageLen % kShortMmaRowMultiple == 0 && kShortMaxLen % kShortMmaRowMultiple == 0);
  return long_stage ? short_decode_layout(kMaxKernelHeadDim, 1, kShortMaxBlockHeads, static_cast<int>(kShortMaxLen),
                                          kShortRowMultiple).bytes
                    : short_decode_layout(kMaxKernelHeadDim, 2, kShortMaxBlockHeads,
                                          static_cast<int>(kShortFirstStageLen), kShortRowMultiple).bytes;
}

// The kernel instance: its arguments plain (ShortDecodeArgs) or the variants' (ShortDecodeVariantArgs).
template <class KV, bool kVariant, int kMaxHeads, int kStageTokens>
auto short_decode_kernel_ptr() {
  using Args = std::conditional_t<kVariant, device::ShortDecodeVariantArgs, device::ShortDecodeArgs>;
  return device::short_decode_kernel<KV, kMaxHeads, kStageTokens, Args>;
}
// f(kernel) for the kernel instance whose compile-time head bound (kMaxHeads) is the smallest that
// holds a block's heads, so the per-head accumulators are registers. Plain: bounds 1, 2, 4, 8, 16,
// so no predicated-off head issues instructions at the common groups (1, 2, 4, 8). Variants: 4, 8
// and 16 only (gpt-oss's 64 / 8 heads take 4 or 8 a block; a block of 1-3 heads runs bound 4, its
// other heads' uniform branches skipped), so their unit compiles 6 kernels an accessor type, not 10.
template <class KV, bool kVariant, int kStageTokens, class F>
decltype(auto) with_short_decode_stage_kernel(int heads, F&& f) {
  if constexpr (kVariant) {
    if (heads <= 4) return f(short_decode_kernel_ptr<KV, true, 4, kStageTokens>());
    if (heads <= 8) return f(short_decode_kernel_ptr<KV, true, 8, kStageTokens>());
    return f(short_decode_kernel_ptr<KV, true, kShortMaxBlockHeads, kStageTokens>());
  } else {
    if (heads <= 1) return f(short_decode_kernel_ptr<KV, false, 1, kStageTokens>());
    if (heads <= 2) return f(short_decode_kernel_ptr<KV, false, 2, kStageTokens>());
    if (heads <= 4) return f(short_decode_kernel_ptr<KV, false, 4, kStageTokens>());
    if (heads <= 8) return f(short_decode_kernel_ptr<KV, false, 8, kStageTokens>());
    return f(short_decode_kernel_ptr<KV, false, kShortMaxBlockHeads, kStageTokens>());
  }
}
template <class KV, bool kVariant, class F>
decltype(auto) with_short_decode_kernel(int heads, bool long_stage, F&& f) {
  return long_stage ? with_short_decode_stage_kernel<KV, kVariant, static_cast<int>(kShortMaxLen)>(heads, f)
                    : with_short_decode_stage_kernel<KV, kVariant, static_cast<int>(kShortFirstStageLen)>(heads, f);
}
template <class KV, bool kVariant = false>
const void* short_decode_kernel_for(int heads, bool long_stage) {
  return with_short_decode_kernel<KV, kVariant>(heads, long_stage,
                                                [](auto kernel) { return reinterpret_cast<const void*>(kernel); });
}

// The automatic path's choice (decode_prefers_short) for this accessor type: the SM count is read
// (cached) only for batches beyond the first stage, whose rule counts blocks against SMs; where it
// cannot be read the other paths plan (and report the error).
template <class KV>
bool short_decode_automatic(const DecodeProblem& p, const DecodeOptions& options) {
  int sms = 0;
  if (short_decode_tokens(p) > kShortFirstStageLen) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      return false;
  }
  return decode_prefers_short(p, options, is_paged_accessor<KV>::value, sms);
}

// kVariant: the problem's variant is not plain (the plain kernels refuse one, and the other way round).
template <class KV, bool kVariant = false>
cudaError_t plan_short_decode(const DecodeProblem& p, const DecodeOptions& options, DecodePlan* plan) {
  using T = typename KV::value_type;
  if constexpr (std::is_same_v<T, float>) {
    return cudaErrorInvalidValue;  // decode_short_unsupported_reason says why
  } else {
    if (decode_short_unsupported_reason(p, options) || p.variant.plain() == kVariant) return cudaErrorInvalidValue;
    int dev = 0, sms = 0, per_sm = 0;
    DB_RETURN_IF_ERROR(cudaGetDevice(&dev));
    DB_RETURN_IF_ERROR(cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int heads = short_decode_block_heads(p, sms);
    const ShortDecodeLayout layout = short_decode_layout_of<T>(p, heads);
    const bool long_stage = short_decode_long_stage(short_decode_capacity(p));
    // The shared-memory opt-in, the carveout and the occupancy through the table the row kernels
    // use (kernels/kernel_occupancy_cache.hpp): driver calls on the first plan only, not on every
    // step of a serving trace.
    DB_RETURN_IF_ERROR(prepared_occupancy(short_decode_kernel_for<KV, kVariant>(heads, long_stage),
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

template <class KV, bool kVariant = false>
cudaError_t run_short_decode(const KV& kv, const DecodeProblem& p, const DecodePlan& plan, cudaStream_t stream) {
  using T = typename KV::value_type;
  if constexpr (std::is_same_v<T, float>) {
    return cudaErrorInvalidValue;
  } else {
    if (p.variant.plain() == kVariant) return cudaErrorInvalidValue;
    // The plan must be this problem's: its staged tokens cover every sequence, its heads divide up
    // the group, its layout is sized for this head dim, storage and heads.
    // The long stage stages rows of at most kShortLongMaxRowBytes and at most kShortMaxLen of them.
    const int heads = plan.query_heads_per_block;
    const ShortDecodeLayout& layout = plan.short_layout;
    const bool long_stage = short_decode_long_stage(plan.tile_tokens);
    if (short_decode_tokens(p) > kShortMaxLen || plan.tile_tokens != short_decode_capacity(p) || heads < 1 ||
        heads > std::min(p.shape.group(), kShortMaxBlockHeads) || !head_dim_supported(p.shape.head_dim) ||
        layout.chunks * 16 != p.shape.head_dim * static_cast<int>(sizeof(T)) || layout.heads != heads ||
        layout.rows < plan.tile_tokens || layout.rows > kShortMaxLen ||
        layout.rows % device::kShortRowMultipleOf<T> != 0 ||
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
    args.q_scale = static_cast<float>(p.shape.softmax_scale()) * device::kLog2e;
    args.page_div = page_divider(kv);
    args.layout = layout;
    const dim3 grid(static_cast<unsigned>(p.num_seqs), static_cast<unsigned>(p.shape.heads_kv),
                    static_cast<unsigned>((args.group + heads - 1) / heads));
    args.timeline = take_block_timeline(std::int64_t{grid.x} * grid.y * grid.z, "short_decode");
    const int threads = long_stage ? device::kShortLongThreads : device::kShortThreads;
    if constexpr (kVariant) {
      device::ShortDecodeVariantArgs variant;
      static_cast<device::ShortDecodeArgs&>(variant) = args;
      variant.window = p.variant.window;
      // The cap in the scores' log2 domain (the kernel applies c2 x tanh(s2 / c2)).
      variant.cap_log2 = p.variant.logits_soft_cap > 0 ? p.variant.logits_soft_cap * device::kLog2e : 0.f;
      variant.inv_cap_log2 = variant.cap_log2 > 0 ? 1.f / variant.cap_log2 : 0.f;
      variant.sinks = p.variant.sinks;
      return with_short_decode_kernel<KV, true>(heads, long_stage, [&](auto kernel) {
        kernel<<<grid, threads, layout.bytes, stream>>>(kv, variant);
        return cudaGetLastError();
      });
    } else {
      return with_short_decode_kernel<KV, false>(heads, long_stage, [&](auto kernel) {
        kernel<<<grid, threads, layout.bytes, stream>>>(kv, args);
        return cudaGetLastError();
      });
    }
  }
}

}  // namespace decode_bench
