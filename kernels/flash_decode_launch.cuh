#pragma once
// Host side of the split-K flash-decode kernel: compile-time dispatch on (head dim, GQA group),
// the split heuristic, and the launch (the split kernel, whose last block per head merges; or, with
// fused_merge off, a separate merge kernel after it).
#include <algorithm>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "harness/cuda_check.hpp"
#include "kernels/decode_balance.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/device_attribute_cache.hpp"
#include "kernels/flash_decode.cuh"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {

// Calls f.template run<D, GROUP>() for the problem's runtime head dim and GQA group, or returns
// cudaErrorInvalidValue when no kernel is compiled for them. D is the compiled head dim that serves
// head_dim (compiled_head_dim: the smallest of 64, 128, 256 not below it; the kernel masks the tail).
template <class F>
cudaError_t dispatch_head_dim_group(int head_dim, int group, const F& f) {
#define DB_DISPATCH_GROUP(D)                                  \
  switch (group) {                                            \
    case 1: return f.template run<D, 1>();                    \
    case 2: return f.template run<D, 2>();                    \
    case 4: return f.template run<D, 4>();                    \
    case 8: return f.template run<D, 8>();                    \
    default: return cudaErrorInvalidValue;                    \
  }
  if (!head_dim_supported(head_dim)) return cudaErrorInvalidValue;
  switch (compiled_head_dim(head_dim)) {
    case 64: DB_DISPATCH_GROUP(64)
    case 128: DB_DISPATCH_GROUP(128)
    case 256: DB_DISPATCH_GROUP(256)
    default: return cudaErrorInvalidValue;
  }
#undef DB_DISPATCH_GROUP
}

// Whether a block of Tr's warps can split them into heads_per_block equal groups over H_kv heads.
template <class Tr>
constexpr bool heads_per_block_fit(int heads_per_block, int heads_kv) {
  return heads_per_block >= 1 && Tr::kWarps % heads_per_block == 0 && heads_kv % heads_per_block == 0;
}

// Bytes of a work-list plan's items in the workspace, padded so the partials after them stay
// 16-byte (float4) aligned.
inline std::size_t padded_work_items_bytes(const DecodePlan& plan) {
  return (plan.work_items.size() * sizeof(DecodeWorkItem) + 255) / 256 * 256;
}

// The split kernel a plan of tiling Tr launches: the plain one, or its attention-variant twin
// (instantiated only in kernels/instantiate/decode_variant_*.cu; kernels/flash_decode_variant_launch.cuh).
template <class Tr, class KV, bool kVariant>
constexpr auto flash_decode_split_kernel_of() {
  if constexpr (kVariant) return device::flash_decode_split_variant_kernel<Tr, KV>;
  else return device::flash_decode_split_kernel<Tr, KV>;
}

// Plan and launch for one explicit tiling (traits); the public entry points below pick the tuned
// traits for the runtime head dim and group, tuning probes pass others. kVariant: the twins of the
// attention variants (the plan is the plain one's of the same tokens; the caller passes a windowed
// problem as full attention over its window).
template <class Tr, class KV, bool kVariant = false>
cudaError_t plan_flash_decode_with(const DecodeProblem& p, const DecodeOptions& options, DecodePlan* plan) {
  int dev = 0, sms = 0, per_sm = 0;
  DB_RETURN_IF_ERROR(cudaGetDevice(&dev));
  DB_RETURN_IF_ERROR(cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  // Above 48 KiB of shared memory (dynamic plus the static merge scratch) a kernel must opt in;
  // the attribute sticks, so planning (outside any timed region) is where it is set.
  if constexpr (Tr::kSharedBytes > 0)
    DB_RETURN_IF_ERROR(cudaFuncSetAttribute(flash_decode_split_kernel_of<Tr, KV, kVariant>(),
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, Tr::kSharedBytes));
  if (options.tuning.carveout_max_shared)
    DB_RETURN_IF_ERROR(cudaFuncSetAttribute(flash_decode_split_kernel_of<Tr, KV, kVariant>(),
                                            cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared));
  DB_RETURN_IF_ERROR(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flash_decode_split_kernel_of<Tr, KV, kVariant>(),
                                                                   Tr::kThreads, Tr::kSharedBytes));
  if (per_sm == 0) return cudaErrorInvalidConfiguration;
  // One KV head per block unless asked: on the H100, 2, 4 and 8 heads per block were slower at
  // every page size and contiguous too (32 x 64K FP16; commit 328fb71, docs/history/kernel-notes.md,
  // "Commits 328fb71 to b6e4dff: the default tiling, and what shuffled small pages cost").
  const int heads_per_block = options.heads_per_block > 0 ? options.heads_per_block : 1;
  if (!heads_per_block_fit<Tr>(heads_per_block, p.shape.heads_kv)) return cudaErrorInvalidValue;
  const int tile = Tr::kTileTokens / heads_per_block;  // tokens of one head per block iteration
  const std::int64_t len = std::max<std::int64_t>(p.max_len, 1);
  const std::int64_t head_blocks = static_cast<std::int64_t>(p.num_seqs) * (p.shape.heads_kv / heads_per_block);
  plan->kernel = DecodeKernel::flash_decode;
  plan->heads_per_block = heads_per_block;
  plan->tile_tokens = tile;
  plan->blocks_per_sm = per_sm;
  plan->fused_merge = options.fused_merge;
  // Ragged batch with host lengths and nothing pinned: the load-balanced work list.
  const std::span<const std::int32_t> host_lens =
      p.host_seq_lens ? std::span<const std::int32_t>(p.host_seq_lens, p.num_seqs) : std::span<const std::int32_t>{};
  if (options.splits <= 0 && options.fused_merge && lengths_are_ragged(host_lens) &&
      static_cast<std::int64_t>(host_lens.size()) <= kMaxWorkItems && options.tuning.fd_balance) {
    BalancedWork work;
    try {
      work = balance_decode_work(host_lens, p.shape.heads_kv / heads_per_block, sms * per_sm, tile);
    } catch (const std::invalid_argument&) {
      return cudaErrorInvalidValue;  // a negative host length
    }
    plan->work_items = work.items;
    plan->chunk_bound = work.chunk_bound;
    plan->num_splits = plan->active_splits = work.max_splits;
    // Splits of a sequence take turns tile by tile (the access order of a grid-stride read), not
    // one range of chunk_bound tokens each: on the H100 zipf batch ranges were as fast or slower in
    // every case (docs/history/kernel-notes.md, "Short and ragged batches (CUDA-core flash-decode,
    // 2026-11-23)").
    const bool tiles = options.tuning.fd_work_chunks != WorkChunksOverride::ranges;
    plan->chunk = tiles ? tile : work.chunk_bound;
    plan->interleaved = tiles && work.max_splits > 1;
    // Workspace: [split counters, zeroed once][work items][partial o][partial lse], regions padded
    // to 256 bytes; counters and partials only when some sequence is split.
    plan->workspace_init_bytes =
        work.partial_splits > 0 ? (static_cast<std::size_t>(head_blocks) * sizeof(unsigned) + 255) / 256 * 256 : 0;
    plan->workspace_bytes = plan->workspace_init_bytes + padded_work_items_bytes(*plan) +
                            static_cast<std::size_t>(work.partial_splits) * p.shape.heads_q * (Tr::kHeadDim + 1) *
                                sizeof(float);
    return cudaSuccess;
  }
  int splits = options.splits;
  if (splits <= 0) {
    // One full wave of blocks over all (sequence, head block) pairs, but no chunk shorter than two
    // tiles: below that the partial write and merge cost more than the parallelism returns.
    const std::int64_t wave = static_cast<std::int64_t>(sms) * std::max(per_sm, 1);
    const std::int64_t by_wave = std::max<std::int64_t>(1, wave / head_blocks);
    const std::int64_t by_length = std::max<std::int64_t>(1, len / (2 * tile));
    splits = static_cast<int>(std::min(by_wave, by_length));
    splits = scaled_splits(splits, options.tuning.fd_split_scale);  // 1 unless DECODE_BENCH_FD_SPLIT_SCALE
  }
  std::int64_t chunk = (len + splits - 1) / splits;
  // Whole tiles per split when chunks are long, so only the last split has a masked tail.
  if (chunk > tile) chunk = (chunk + tile - 1) / tile * tile;
  // Splits of a long sequence take turns tile by tile rather than each reading one far-apart
  // range: all blocks then read inside a window of splits x tile rows, the access order of a
  // grid-stride copy. On the H100 this read 2M-token FP16 and 32 x 64K faster, nearer the DRAM
  // ceiling (probe; docs/history/kernel-notes.md, "Commits 69ee5ad and 5efe1fc: ncu first, then
  // interleaved splits and a cp.async pipeline").
  const bool interleave = splits > 1 && chunk > tile;
  if (interleave) chunk = tile;
  plan->num_splits = splits;
  plan->active_splits = static_cast<int>(std::min<std::int64_t>(splits, (len + chunk - 1) / chunk));
  plan->chunk = chunk;
  plan->interleaved = interleave;
  // Workspace (splits > 1): [split counters, zeroed once][partial o][partial lse]; the counters
  // region is padded to 256 bytes so the partials stay 16-byte (float4) aligned. Sized for the
  // compiled D; partial rows of a smaller head dim h use h floats of each D.
  plan->workspace_init_bytes =
      splits == 1 ? 0 : (static_cast<std::size_t>(head_blocks) * sizeof(unsigned) + 255) / 256 * 256;
  plan->workspace_bytes = splits == 1 ? 0
                                      : plan->workspace_init_bytes + static_cast<std::size_t>(p.num_seqs) *
                                                                         p.shape.heads_q * splits *
                                                                         (Tr::kHeadDim + 1) * sizeof(float);
  return cudaSuccess;
}

// The variant twins' arguments of a problem (kernels/flash_decode_variant_args.cuh).
inline device::FlashDecodeVariantArgs flash_decode_variant_args(const RowAttentionVariant& v) {
  device::FlashDecodeVariantArgs va;
  va.sinks = v.sinks;
  if (v.logits_soft_cap > 0) {
    va.cap_log2 = v.logits_soft_cap * device::kLog2e;
    va.inv_cap_log2 = 1.f / va.cap_log2;
  }
  va.window = v.window;
  return va;
}

template <class Tr, class KV, bool kVariant = false>
cudaError_t run_flash_decode_with(const KV& kv, const DecodeProblem& p, const DecodePlan& plan, void* workspace,
                                  cudaStream_t stream) {
  constexpr int D = Tr::kHeadDim;
  if (plan.chunk > INT32_MAX || p.max_len >= (std::int64_t{1} << 31)) return cudaErrorInvalidValue;
  const int heads_per_block = plan.heads_per_block;
  if (!heads_per_block_fit<Tr>(heads_per_block, p.shape.heads_kv)) return cudaErrorInvalidValue;
  device::FlashDecodeArgs args{};
  args.q = p.q;
  args.lens = p.seq_lens;
  args.o = p.o;
  args.lse = p.lse;
  args.heads_q = p.shape.heads_q;
  args.head_dim = p.shape.head_dim;
  args.head_blocks = p.shape.heads_kv / heads_per_block;
  args.warps_per_head = Tr::kWarps / heads_per_block;
  args.num_splits = plan.num_splits;
  args.chunk = static_cast<int>(plan.chunk);
  args.q_scale = static_cast<float>(p.shape.softmax_scale()) * device::kLog2e;
  args.page_div = page_divider(kv);
  const bool work_list = !plan.work_items.empty();
  if (work_list) {
    // Items first (the heads of one item launch together, the longest items first).
    if (workspace == nullptr || !plan.fused_merge || plan.work_items.size() > kMaxWorkItems) return cudaErrorInvalidValue;
    char* const base = static_cast<char*>(workspace);
    if (plan.workspace_init_bytes > 0) args.split_counters = reinterpret_cast<unsigned*>(base);
    args.items = reinterpret_cast<const DecodeWorkItem*>(base + plan.workspace_init_bytes);
    args.partial_o = reinterpret_cast<float*>(base + plan.workspace_init_bytes + padded_work_items_bytes(plan));
    const std::size_t partial_states =
        (plan.workspace_bytes - plan.workspace_init_bytes - padded_work_items_bytes(plan)) / ((D + 1) * sizeof(float));
    args.partial_lse = args.partial_o + partial_states * D;
  } else if (plan.num_splits > 1) {
    if (workspace == nullptr) return cudaErrorInvalidValue;
    char* const base = static_cast<char*>(workspace);
    if (plan.fused_merge) args.split_counters = reinterpret_cast<unsigned*>(base);
    args.partial_o = reinterpret_cast<float*>(base + plan.workspace_init_bytes);
    args.partial_lse = args.partial_o + static_cast<std::size_t>(p.num_seqs) * p.shape.heads_q * plan.num_splits * D;
  }
  const dim3 grid = work_list ? dim3(p.shape.heads_kv / heads_per_block, static_cast<unsigned>(plan.work_items.size()), 1)
                              : dim3(plan.num_splits, p.shape.heads_kv / heads_per_block, p.num_seqs);
  args.timeline = take_block_timeline(std::int64_t{grid.x} * grid.y * grid.z, "flash_decode");
  if constexpr (kVariant) {
    const device::FlashDecodeVariantArgs va = flash_decode_variant_args(p.variant);
    device::flash_decode_split_variant_kernel<Tr, KV><<<grid, Tr::kThreads, Tr::kSharedBytes, stream>>>(kv, args, va);
    DB_RETURN_IF_ERROR(cudaGetLastError());
    if (!work_list && plan.num_splits > 1 && !plan.fused_merge) {
      args.timeline = take_block_timeline(std::int64_t{p.shape.heads_q} * p.num_seqs, "fd_merge");
      device::merge_partials_variant_kernel<D>
          <<<dim3(p.shape.heads_q, p.num_seqs), device::kMergeThreads, 0, stream>>>(args, va);
      DB_RETURN_IF_ERROR(cudaGetLastError());
    }
  } else {
    device::flash_decode_split_kernel<Tr, KV><<<grid, Tr::kThreads, Tr::kSharedBytes, stream>>>(kv, args);
    DB_RETURN_IF_ERROR(cudaGetLastError());
    if (!work_list && plan.num_splits > 1 && !plan.fused_merge) {
      args.timeline = take_block_timeline(std::int64_t{p.shape.heads_q} * p.num_seqs, "fd_merge");
      device::merge_partials_kernel<D><<<dim3(p.shape.heads_q, p.num_seqs), device::kMergeThreads, 0, stream>>>(args);
      DB_RETURN_IF_ERROR(cudaGetLastError());
    }
  }
  return cudaSuccess;
}

// Plans with the standard tiling, then (GQA group 1, and group 2 where its short tiling is compiled)
// replans with the tiling choose_decode_tiling picks, or the tuning policy pins
// (DECODE_BENCH_FD_TILING): the short one, or the deep one where it is compiled (group 1 plain
// decodes, FP16 and BF16 at head dim 128); elsewhere the standard plan stands.
template <class KV, bool kVariant = false>
struct PlanFlashDecode {
  const DecodeProblem& p;
  const DecodeOptions& options;
  DecodePlan* plan;
  template <int D, int GROUP>
  cudaError_t run() const {
    using T = typename KV::value_type;
    DB_RETURN_IF_ERROR((plan_flash_decode_with<device::FlashDecodeTraits<T, D, GROUP>, KV, kVariant>(p, options, plan)));
    if constexpr (device::has_short_tiling<T, D, GROUP, kVariant>) {
      const TilingOverride pin = options.tuning.fd_tiling;
      int dev = 0, sms = 0;
      DB_RETURN_IF_ERROR(cudaGetDevice(&dev));
      DB_RETURN_IF_ERROR(cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev));
      TilingQuery q;
      q.group = GROUP;
      q.pinned = options.splits > 0 || options.heads_per_block > 0;
      q.head_blocks = static_cast<std::int64_t>(p.num_seqs) * p.shape.heads_kv;
      q.standard_slots = static_cast<std::int64_t>(sms) * plan->blocks_per_sm;
      q.standard_tile = plan->tile_tokens;
      if (p.host_seq_lens) q.lengths = std::span<const std::int32_t>(p.host_seq_lens, p.num_seqs);
      q.max_len = p.max_len;
      q.paged = is_paged_accessor<KV>::value;
      q.masked_head_dim = p.shape.head_dim < D;
      double clock_dram = 0;
      DB_RETURN_IF_ERROR(clock_dram_bytes_per_s(dev, &clock_dram));
      q.wide_bus = wide_bus_per_sm(clock_dram, sms);
      const DecodeTiling tiling = pin == TilingOverride::automatic  ? choose_decode_tiling(q)
                                  : pin == TilingOverride::short_batch ? DecodeTiling::short_batch
                                  : pin == TilingOverride::deep        ? DecodeTiling::deep
                                                                       : DecodeTiling::standard;
      if constexpr (!kVariant && device::has_deep_tiling<T, D, GROUP>) {
        if (tiling == DecodeTiling::deep) {
          *plan = DecodePlan{};
          DB_RETURN_IF_ERROR(
              (plan_flash_decode_with<device::DeepFlashDecodeTraits<T, D, GROUP>, KV, kVariant>(p, options, plan)));
          plan->tiling = DecodeTiling::deep;
          return cudaSuccess;
        }
      }
      if (tiling == DecodeTiling::short_batch) {
        *plan = DecodePlan{};
        DecodeOptions short_options = options;
        const int heads = options.tuning.fd_short_heads;  // 1 unless DECODE_BENCH_FD_SHORT_HEADS
        if (options.heads_per_block <= 0 && heads > 1 && p.shape.heads_kv % heads == 0) short_options.heads_per_block = heads;
        DB_RETURN_IF_ERROR(
            (plan_flash_decode_with<device::ShortFlashDecodeTraits<T, D, GROUP>, KV, kVariant>(p, short_options, plan)));
        plan->tiling = DecodeTiling::short_batch;
      }
    }
    return cudaSuccess;
  }
};

template <class KV, bool kVariant = false>
struct RunFlashDecode {
  const KV& kv;
  const DecodeProblem& p;
  const DecodePlan& plan;
  void* workspace;
  cudaStream_t stream;
  template <int D, int GROUP>
  cudaError_t run() const {
    using T = typename KV::value_type;
    if (plan.tiling == DecodeTiling::deep) {
      if constexpr (!kVariant && device::has_deep_tiling<T, D, GROUP>)
        return run_flash_decode_with<device::DeepFlashDecodeTraits<T, D, GROUP>, KV, kVariant>(kv, p, plan, workspace,
                                                                                             stream);
      else
        return cudaErrorInvalidValue;  // compiled for plain FP16 / BF16 decodes at head dim 128, group 1 only
    }
    if (plan.tiling == DecodeTiling::short_batch) {
      if constexpr (device::has_short_tiling<T, D, GROUP, kVariant>)
        return run_flash_decode_with<device::ShortFlashDecodeTraits<T, D, GROUP>, KV, kVariant>(kv, p, plan, workspace,
                                                                                              stream);
      else
        return cudaErrorInvalidValue;  // group 1; group 2's FP16 and BF16 plain decodes at head dim 128
    }
    return run_flash_decode_with<device::FlashDecodeTraits<T, D, GROUP>, KV, kVariant>(kv, p, plan, workspace, stream);
  }
};

template <class KV>
cudaError_t plan_flash_decode(const DecodeProblem& p, const DecodeOptions& options, DecodePlan* plan) {
  return dispatch_head_dim_group(p.shape.head_dim, p.shape.group(), PlanFlashDecode<KV>{p, options, plan});
}

template <class KV>
cudaError_t run_flash_decode(const KV& kv, const DecodeProblem& p, const DecodePlan& plan, void* workspace,
                             cudaStream_t stream) {
  return dispatch_head_dim_group(p.shape.head_dim, p.shape.group(), RunFlashDecode<KV>{kv, p, plan, workspace, stream});
}

}  // namespace decode_bench
