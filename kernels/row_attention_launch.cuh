#pragma once
// Host side of row attention: path and tiling choice, the split heuristic, workspace layout and the
// launch. Included only by kernels/instantiate/row_attention_*.cu (one per layout x storage type)
// and by kernels/decode_dispatch.cuh (grouped decode on the tensor-core path).
#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "harness/cuda_check.hpp"
#include "kernels/decode_problem.hpp"
#include "kernels/device_attribute_cache.hpp"
#include "kernels/kernel_occupancy_cache.hpp"
#include "kernels/log2_domain.cuh"  // kLog2eDouble
#include "kernels/tuning_policy.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/row_attention_balance.hpp"  // row_chunk_range, nonempty_chunks
#include "kernels/row_attention_merge.cuh"
#include "kernels/row_attention_mma.cuh"
#include "kernels/row_attention_simt.cuh"
#include "kernels/row_attention_wgmma.hpp"
#include "kernels/row_block_rows.hpp"
#include "kernels/row_merge_model.hpp"

namespace decode_bench {

namespace row_attention_detail {

template <class KV>
constexpr bool kHasTensorCorePath = !std::is_same_v<typename KV::value_type, float>;
template <class KV, int D>
constexpr bool kHasWideTiling = kHasTensorCorePath<KV> && sizeof(typename KV::value_type) == 2 && D <= 128;
// The packed-split kernel (hi + lo storage types, compiled at D 128 only: the head dim of the model
// shapes, and three kernels per storage file rather than nine).
template <class KV, int D>
constexpr bool kHasPackedKernel = kHasTensorCorePath<KV> && device::MmaStorage<typename KV::value_type>::kSplit && D == 128;
// The work-stealing twins of the narrow and packed kernels (RowAttentionPlan::steal_pool): FP16 and
// BF16 at D 128 only, the grouped-decode shapes they were measured on, so the other storage types
// and head dims compile no second kernel.
template <class KV, int D>
constexpr bool kHasStealKernel = kHasTensorCorePath<KV> && sizeof(typename KV::value_type) == 2 && D == 128;

// Whether a grouped decode at head dim 128 plans about one block per SM by default
// (plan_row_attention): FP16, and BF16 on the packed-split kernel (groups of at most 8), over
// contiguous K/V. Paged K/V keeps two blocks per SM even with each row's offset resolved by one
// lane of the warp that stages it (stage_kv_tile): at one block per SM that staging measured
// slower than two blocks per SM for paged FP16 1 x 64K and 16 x 4K, while the staging itself made
// 64 x 1K faster at the same plan (H100, commit 5b8dd7b, decode-row-probe against 34ba5b4 in the
// same call; docs/history/kernel-notes.md, "Paged rows resolved once per warp").
// H100, 32 / 8 heads, decode-row-probe, one block per SM against two (docs/history/kernel-notes.md,
// "The packed split: BF16 at FP16's mma count" and "Where the grouped decode's time goes: a fixed
// cost, not the stream"):
//   BF16 packed (commit c00bc78): faster at one; unpacked at commit 75635a1 slower at one: the
//     hi + lo mma pair outran one block's share of the stream.
//   Paged FP16 16 x 4K slower at one (commit 75635a1), also with the block-table entries fetched
//     a tile ahead (commit b613bd9, reverted); paged BF16 packed slower at one too.
//   E4M3 on the tensor-core path 16 x 4K packed slower at one; FP8 decodes on CUDA cores anyway.

// The attention variants' kernels (kVariant: the narrow and wide tilings, FP8 the narrow one only):
// FP16, BF16 and FP8 at D 128, and BF16 at D 64 (gpt-oss's head dim, the models preset's), what the
// presets use (kernels/row_attention_variant.hpp).
template <class KV, int D>
constexpr bool kHasVariantKernel =
    kHasTensorCorePath<KV> && (D == 128 || (D == 64 && dtype_of<typename KV::value_type>::value == DType::bf16));

// The warpgroup-MMA kernel: FP16 and BF16 storage at D 64 and 128
// (kernels/instantiate/row_attention_wgmma_{fp16,bf16}.cu).
template <class KV, int D>
constexpr bool kHasWgmmaKernel =
    (std::is_same_v<typename KV::value_type, __half> || std::is_same_v<typename KV::value_type, __nv_bfloat16>) &&
    (D == 64 || D == 128);

template <class KV>
constexpr bool one_block_per_sm_decode(bool packed) {
  using T = typename KV::value_type;
  return !is_paged_accessor<KV>::value && (std::is_same_v<T, __half> || (std::is_same_v<T, __nv_bfloat16> && packed));
}

// The kernel, its dynamic shared memory and tile for one (path, head dim, rows per block).
struct KernelChoice {
  const void* kernel = nullptr;
  std::size_t shared_bytes = 0;
  std::size_t max_shared_bytes = 0;  // the most any plan of this kernel asks for (its opt-in limit)
  int tile = 0;
  int stages = 0;
  int threads = 0;
};

// stages: the tensor-core kernel's K/V stages (0: its most); the SIMT kernel has two. wide: the
// tensor-core tiling of 8 warps x 2 row tiles (RowMmaWideTraits; FP16 / BF16 at D <= 128 only).
// packed: the narrow tiling's packed-split kernel (kHasPackedKernel; 16-row blocks).
// steal: the work-stealing twin (kHasStealKernel; the narrow and packed tilings only).
// wgmma: the warpgroup-MMA kernel (FP16 at D 64 and 128 in blocks of 64 or 128 rows, BF16 in blocks
// of 32; its own stages; present only in a build for Hopper: kernels/row_attention_wgmma.hpp).
// variant: the attention variants' twin of the narrow or wide kernel (kHasVariantKernel).
template <class KV, int D>
KernelChoice choose_kernel(RowAttentionPath path, int rows_per_block, int stages, bool wide, bool packed,
                           bool steal = false, bool wgmma = false, bool variant = false, int wgmma_tile = 64) {
  if (variant && wgmma) {  // the warpgroup-MMA kernel's one-token variant twin (wgmma_row_variant_kernel)
    if constexpr (kHasWgmmaKernel<KV, D>) {
      const WgmmaRowKernel w = wgmma_row_variant_kernel<KV>(rows_per_block, D);
      if (path != RowAttentionPath::tensor_core || w.kernel == nullptr || wide || packed || steal ||
          wgmma_tile != w.tile || (stages > 0 && stages != w.stages))
        return {};
      return {w.kernel, w.shared_bytes, w.shared_bytes, w.tile, w.stages, w.threads};
    }
    return {};
  }
  if (variant) {
    if constexpr (kHasVariantKernel<KV, D>) {
      if (path != RowAttentionPath::tensor_core || packed || steal || wgmma) return {};
      const auto pick = [&](auto traits, const void* kernel) -> KernelChoice {
        using Tr = decltype(traits);
        if (stages <= 0) stages = Tr::kMaxStages;
        if (stages < 2 || stages > Tr::kMaxStages || rows_per_block > Tr::kMaxRows) return {};
        return {kernel, Tr::shared_bytes(rows_per_block, stages), Tr::shared_bytes(Tr::kMaxRows, Tr::kMaxStages),
                Tr::kTile, stages, Tr::kThreads};
      };
      // Compiled in kernels/instantiate/row_attention_variant_*.cu, apart from the plain kernels.
      if (wide) {
        if constexpr (kHasWideTiling<KV, D>)
          return pick(device::RowMmaWideTraits<KV, D>{}, row_attention_variant_kernel<KV, D>(true));
        return {};
      }
      return pick(device::RowMmaTraits<KV, D>{}, row_attention_variant_kernel<KV, D>(false));
    }
    return {};
  }
  if (wgmma) {
    if constexpr (kHasWgmmaKernel<KV, D>) {
      const WgmmaRowKernel w = wgmma_row_kernel<KV>(rows_per_block, D, wgmma_tile);
      if (path != RowAttentionPath::tensor_core || w.kernel == nullptr || wide || packed || steal ||
          (stages > 0 && stages != w.stages))
        return {};
      return {w.kernel, w.shared_bytes, w.shared_bytes, w.tile, w.stages, w.threads};
    }
    return {};
  }
  if constexpr (kHasTensorCorePath<KV>) {
    if (path == RowAttentionPath::tensor_core) {
      const auto pick = [&](auto traits, const void* kernel) -> KernelChoice {
        using Tr = decltype(traits);
        if (stages <= 0) stages = Tr::kMaxStages;
        if (stages < 2 || stages > Tr::kMaxStages || rows_per_block > Tr::kMaxRows) return {};
        return {kernel, Tr::shared_bytes(rows_per_block, stages), Tr::shared_bytes(Tr::kMaxRows, Tr::kMaxStages),
                Tr::kTile, stages, Tr::kThreads};
      };
      if (steal) {
        if constexpr (kHasStealKernel<KV, D>) {
          if (wide) return {};
          if (packed) {
            if constexpr (kHasPackedKernel<KV, D>)
              if (rows_per_block == 16)
                return pick(device::RowMmaTraits<KV, D>{},
                            reinterpret_cast<const void*>(&device::row_attention_mma_kernel<KV, D, 4, 1, true, true>));
            return {};
          }
          return pick(device::RowMmaTraits<KV, D>{},
                      reinterpret_cast<const void*>(&device::row_attention_mma_kernel<KV, D, 4, 1, false, true>));
        }
        return {};
      }
      if (packed) {
        if constexpr (kHasPackedKernel<KV, D>)
          if (!wide && rows_per_block == 16)
            return pick(device::RowMmaTraits<KV, D>{},
                        reinterpret_cast<const void*>(&device::row_attention_mma_kernel<KV, D, 4, 1, true>));
        return {};
      }
      if (wide) {
        if constexpr (kHasWideTiling<KV, D>)
          return pick(device::RowMmaWideTraits<KV, D>{},
                      reinterpret_cast<const void*>(&device::row_attention_mma_kernel<KV, D, 8, 2>));
        return {};
      }
      return pick(device::RowMmaTraits<KV, D>{}, reinterpret_cast<const void*>(&device::row_attention_mma_kernel<KV, D>));
    }
  }
  if (wide || packed || steal) return {};
  return {reinterpret_cast<const void*>(&device::row_attention_simt_kernel<KV, D>),
          device::RowSimtTraits<KV, D>::kSharedBytes, device::RowSimtTraits<KV, D>::kSharedBytes,
          device::RowSimtTraits<KV, D>::kTile, 2, device::RowSimtTraits<KV, D>::kThreads};
}

// The kernel compiled for the head dim that serves head_dim (compiled_head_dim; the tail is masked).
template <class KV>
KernelChoice choose_kernel(int head_dim, RowAttentionPath path, int rows_per_block, int stages, bool wide,
                           bool packed = false, bool steal = false, bool wgmma = false, bool variant = false,
                           int wgmma_tile = 64) {
  if (!head_dim_supported(head_dim)) return {};
  switch (compiled_head_dim(head_dim)) {
    case 64: return choose_kernel<KV, 64>(path, rows_per_block, stages, wide, packed, steal, wgmma, variant, wgmma_tile);
    case 128: return choose_kernel<KV, 128>(path, rows_per_block, stages, wide, packed, steal, wgmma, variant, wgmma_tile);
    case 256: return choose_kernel<KV, 256>(path, rows_per_block, stages, wide, packed, steal, wgmma, variant, wgmma_tile);
    default: return {};
  }
}

// The warpgroup-MMA kernel's host-length twin (RowAttentionPlan::uniform_len) serving head_dim in
// blocks of rows_per_block rows over `tile`-token tiles, or none (nullptr kernel): compiled for
// the blocks kernels/row_attention_wgmma_table.cuh lists.
template <class KV>
WgmmaRowKernel host_length_twin(int head_dim, int rows_per_block, int tile) {
  if constexpr (kHasWgmmaKernel<KV, 64> || kHasWgmmaKernel<KV, 128>)
    if (head_dim_supported(head_dim))
      return wgmma_row_kernel<KV>(rows_per_block, compiled_head_dim(head_dim), tile, true);
  return {};
}

// The warpgroup-MMA kernel's streamed grid (RowAttentionPlan::stream_blocks) for blocks of
// rows_per_block rows at head_dim, or none (nullptr kernel): compiled for FP16 and BF16 at d 128.
template <class KV>
WgmmaRowKernel stream_kernel(int head_dim, int rows_per_block) {
  if constexpr (kHasWgmmaKernel<KV, 128>)
    if (head_dim_supported(head_dim) && compiled_head_dim(head_dim) == 128)
      return wgmma_row_stream_kernel<KV>(rows_per_block, 128);
  return {};
}

// The streaming kernel that can run plan's items of p, or none (nullptr kernel): the host-length
// twin's unsplit items of one row block, no cluster merge, at most kRowStreamMaxRows query rows and
// at least kRowStreamMinTiles tiles an item, at a head dim it is compiled for. The planner asks it
// before it streams a plan, the launch again before it runs one.
template <class KV>
WgmmaRowKernel stream_kernel_for(const RowAttentionProblem& p, const RowAttentionPlan& plan) {
  if (!plan.wgmma || plan.uniform_len == 0 || plan.splits != 1 || plan.row_blocks != 1 || plan.cluster_merge ||
      p.max_item_rows > kRowStreamMaxRows)
    return {};
  const WgmmaRowKernel stream = stream_kernel<KV>(p.shape.head_dim, plan.rows_per_block);
  if (stream.kernel == nullptr || (plan.uniform_len + stream.tile - 1) / stream.tile < kRowStreamMinTiles) return {};
  return stream;
}

// Readies a kernel for planning and launch: its opt-in limit on dynamic shared memory (and the
// most shared memory when carveout_max_shared: DECODE_BENCH_CARVEOUT), then its resident blocks
// per SM at this choice.
// Above 48 KiB a kernel must opt in; the attribute sticks, so planning sets it (untimed). It is set
// to the kernel's largest size, never this plan's: one kernel serves plans of different rows and
// stages (a shared-prefix phase of 64 rows and a grouped decode of 16 in the same launch
// sequence), and a later plan must not lower the limit under an earlier one's launch.
// Each driver call once per kernel and shape (kernels/kernel_occupancy_cache.hpp): plans run
// every step of a serving trace.
inline cudaError_t prepare_kernel(const KernelChoice& c, bool carveout_max_shared, int* blocks_per_sm) {
  return prepared_occupancy(c.kernel, c.max_shared_bytes, carveout_max_shared, c.threads, c.shared_bytes,
                            blocks_per_sm);
}

// Splits per item: the fewest that minimise the estimated makespan, waves x (tiles per block + 1)
// (the +1 stands for a block's prologue, epilogue and merge share), so a grid neither leaves
// SMs idle nor cuts a range into blocks shorter than their fixed costs.
inline int choose_splits(std::int64_t blocks_per_split, std::int64_t slots, std::int64_t tiles) {
  const std::int64_t max_splits = std::clamp<std::int64_t>(tiles, 1, 65535);
  int best = 1;
  double best_cost = 0;
  for (std::int64_t s = 1; s <= max_splits; ++s) {
    const std::int64_t waves = (blocks_per_split * s + slots - 1) / slots;
    const double cost = static_cast<double>(waves) * (static_cast<double>((tiles + s - 1) / s) + 1.0);
    if (s == 1 || cost < best_cost * 0.98) best = static_cast<int>(s), best_cost = cost;
    if (blocks_per_split * s >= 4 * slots) break;
  }
  return best;
}

// Both grids' workspace, from the plan's entries and partial states: [counters (num_items,
// row_blocks), twice with work stealing (the merge's, the pool's), zeroed once; only with partial
// states][work-list entries][partial o (partial_states,
// head_dim)][partial lse (partial_states)], the first two regions padded to 256 bytes.
inline void size_workspace(const RowAttentionProblem& p, RowAttentionPlan* plan) {
  const std::size_t counters = static_cast<std::size_t>(p.num_items) * plan->row_blocks * sizeof(unsigned) *
                               (plan->steal_pool > 0 ? 2 : 1);  // the merge's, then the pool's
  plan->workspace_init_bytes = plan->partial_states > 0 ? (counters + 255) / 256 * 256 : 0;
  plan->workspace_bytes = plan->workspace_init_bytes + row_work_entries_bytes(*plan) +
                          static_cast<std::size_t>(plan->partial_states) * (p.shape.head_dim + 1) * sizeof(float);
}

// The work-list plan of a ragged decode batch (kernels/row_attention_balance.hpp) into a plan whose
// path and tiling fields are set; partial states only when some item is split.
inline cudaError_t plan_row_work_list(const RowAttentionProblem& p, std::span<const std::int32_t> lens,
                                      std::int64_t slots, RowAttentionPlan* plan) {
  RowWorkList work;
  try {
    work = balance_row_work(lens, p.shape.heads_kv, p.shape.group(), plan->row_blocks,
                            static_cast<int>(std::min<std::int64_t>(slots, INT32_MAX)), plan->tile_tokens);
  } catch (const std::invalid_argument&) {
    return cudaErrorInvalidValue;  // a negative host length, or a plan past 32-bit indices
  }
  if (*std::max_element(lens.begin(), lens.end()) > p.max_item_tokens) return cudaErrorInvalidValue;
  plan->splits = work.max_chunks;
  plan->chunk_bound = work.chunk_bound;
  plan->partial_states = work.partial_states;
  plan->work_entries = std::move(work.entries);
  plan->work_seq_items = std::move(work.seq_items);
  size_workspace(p, plan);
  return cudaSuccess;
}

}  // namespace row_attention_detail

template <class KV>
cudaError_t plan_row_attention(const RowAttentionProblem& p, const RowAttentionOptions& options,
                               RowAttentionPlan* plan) {
  using namespace row_attention_detail;
  if (row_attention_unsupported_reason(p) || p.kv_dtype != dtype_of<typename KV::value_type>::value)
    return cudaErrorInvalidValue;
  RowAttentionPath path = options.path;
  if (path == RowAttentionPath::automatic)
    path = kHasTensorCorePath<KV> ? RowAttentionPath::tensor_core : RowAttentionPath::simt;
  if (path == RowAttentionPath::tensor_core && !kHasTensorCorePath<KV>) return cudaErrorInvalidValue;
  // The attention variants: their twins of the narrow and wide kernels, and of the warpgroup-MMA
  // kernel for one query token (row_attention_variant.hpp).
  const bool variant = !p.variant.plain();
  if (variant && path != RowAttentionPath::tensor_core) return cudaErrorInvalidValue;
  const int rows = std::max(p.max_item_rows, 1);
  // Items of more than 32 rows (a shared prefix) take the wide tiling where it is compiled: 8 warps
  // of 2 row tiles, so each K/V fragment serves two mma. Blocks of 128 or 256 rows (each staged tile
  // serving them all) where the range is long; 64 rows where it is short (under 32 tiles), except
  // decode items of 65-128 rows, one 128-row block at any range (kernels/row_block_rows.hpp); since a
  // 256-row block's fixed costs (Q, epilogue, the split merge) outweigh a few tiles: H100, N 256
  // P 1K, 256 rows x 4 splits (d874af7) against 64 rows x 1 split on the narrow tiling (cf8bc3f);
  // N 64 P 1K, wide against narrow (f6c74ad) (decode-row-probe,
  // git show 9372013:results/reference/probe/h100-*-row-probe*.txt; docs/history/kernel-notes.md,
  // "ncu on row attention, the split merge and a wide tiling").
  // Except FP16 items of 33-64 rows at d 128 over at least 128 tiles (8K tokens): there the narrow
  // tiling (4 warps, each its own 16-row tile, sharing every staged tile) ran faster since the
  // ldmatrix offsets were kept in registers (SwizzledChunks): shared prefix N 64, h100 preset,
  // overlapped, at P 8K and 32K; slower at P 1K (16 tiles) (commit 32c8776,
  // git show 9372013:results/reference/probe/h100-32c8776-sp-coresidency/; docs/history/kernel-notes.md,
  // "The level-state merge, a warp per state"). Not measured between 16 and 128 tiles,
  // nor for BF16 (whose narrow kernel runs two mma a product) or other head dims: wide there.
  // The tuning policy pins either tiling (DECODE_BENCH_ROW_TILING).
  const RowAttentionTiling tiling =
      options.tiling != RowAttentionTiling::automatic ? options.tiling : options.tuning.row_tiling;
  const bool wide_ok = path == RowAttentionPath::tensor_core &&
                       choose_kernel<KV>(p.shape.head_dim, path, 64, 0, true).kernel != nullptr;
  const std::int64_t item_tiles = (p.max_item_tokens + 63) / 64;
  const bool narrow_long_64 = tiling == RowAttentionTiling::automatic && p.kv_dtype == DType::fp16 &&
                              p.shape.head_dim == 128 && rows > 32 && rows <= 64 && item_tiles >= 128;
  int dev = 0, sms = 0, per_sm = 0;
  DB_RETURN_IF_ERROR(cudaGetDevice(&dev));
  DB_RETURN_IF_ERROR(cached_device_attribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  // Items of more than 64 rows, and of 33-64 rows over at least 128 tiles (8K tokens), take the
  // warpgroup-MMA kernel where it runs (FP16 at head dims up to 128, compiled for 64 and 128, on
  // compute capability 9.0, in a build for it; MQA's 71 heads at d 64 among them): blocks of 64
  // rows (one warpgroup) for items of up to 64 rows, 128 (two, each staged tile serving both)
  // above; DECODE_BENCH_ROW_WGMMA_ROWS pins either. Shorter 64-row items keep the wide tiling:
  // H100, commit 29187b1 against ab097ac (cascade preset, S 128, overlapped), N 64 at P 1K and 4K
  // ran slower on wgmma, where P 8K and every item of 256 or 1024 rows ran faster
  // (git show 9372013:results/reference/29187b1/; docs/history/kernel-notes.md, "The shared-prefix
  // phase on Hopper's warpgroup MMA"). Pinned by the tiling, it takes items of any row count; where
  // it does not run, the rules below decide.
  // BF16 runs it in blocks of one warpgroup of 32 rows (the packed split, row_attention_wgmma.cuh;
  // an item of more rows in several), where the grouped-decode rule below takes it or the tiling
  // pins it; the rules for larger items were measured on FP16 only. DECODE_BENCH_ROW_WGMMA_ROWS
  // pins FP16 blocks, and leaves BF16 on mma.sync.
  const bool wgmma_packed = wgmma_warpgroup_rows<typename KV::value_type>() == 32;
  const int wgmma_rows_pinned = options.tuning.row_wgmma_rows;
  const int wgmma_rows = wgmma_rows_pinned > 0 ? wgmma_rows_pinned
                         : wgmma_packed        ? 32
                         : rows <= 64          ? 64
                                               : 128;
  // Attention variants of one query token (a window, a soft-cap, sinks) over decode items take its
  // variant twin where that is compiled (one-warpgroup blocks: FP16 at d 128, BF16 at d 64), under
  // the same rules as plain attention.
  const bool wgmma_variant_ok = !variant || (p.variant.q_len == 1 && implicit_decode_items(p));
  const bool wgmma_ok = wgmma_variant_ok && path == RowAttentionPath::tensor_core &&
                        choose_kernel<KV>(p.shape.head_dim, path, wgmma_rows, 0, false, false, false, true, variant)
                                .kernel != nullptr &&
                        wgmma_row_kernel_runs_on(dev);
  // Grouped decodes (decode items of at most 16 rows, FP16 and BF16 at d 128) take it too, in
  // one-warpgroup blocks: one wgmma for S and one for P V a tile free the issue slots the mma.sync
  // kernel's tile loop spends at one or two blocks an SM. Measured on the H100 against mma.sync
  // pinned, groups 4, 7, 8 and 16 at 1 x 32K to 128 x 512, FP16 and BF16: faster or level at every
  // point (docs/kernels/rows_wgmma.md, "Grouped decodes"). At d 64 BF16 only, at any batch, split
  // about two blocks an SM (below): faster than mma.sync at gpt-oss's 64 / 8 heads; FP16 was
  // slower at one of its points (docs/kernels/rows_wgmma.md, "Grouped decodes at d 64").
  const bool grouped_decode = implicit_decode_items(p) && rows <= 16;  // decode items of at most 16 rows
  const bool wgmma_grouped_decode =
      grouped_decode && (p.shape.head_dim == 128 || (p.shape.head_dim == 64 && wgmma_packed));
  const bool wgmma = wgmma_ok && (tiling == RowAttentionTiling::wgmma ||
                                  (tiling == RowAttentionTiling::automatic &&
                                   ((!wgmma_packed && (rows > 64 || (rows > 32 && item_tiles >= 128))) ||
                                    wgmma_grouped_decode)));
  const bool wide = !wgmma && wide_ok && tiling != RowAttentionTiling::narrow && !narrow_long_64 &&
                    (rows > 32 || (tiling == RowAttentionTiling::wide && rows > 16));
  const int rows_per_block = path == RowAttentionPath::simt ? 16
                       : wgmma ? wgmma_rows
                       : wide ? wide_row_block_rows(rows, item_tiles, p.items == nullptr)
                       : rows <= 16 ? 16
                       : rows <= 32 ? 32
                                    : 64;
  // BF16 / FP8 items of at most 8 rows in 16-row blocks: the packed-split kernel where compiled
  // (DECODE_BENCH_ROW_PACKED_SPLIT=off keeps the two-mma kernel).
  const bool packed = !variant && path == RowAttentionPath::tensor_core && !wide && rows_per_block == 16 && rows <= 8 &&
                      choose_kernel<KV>(p.shape.head_dim, path, 16, 0, false, true).kernel != nullptr &&
                      options.tuning.row_packed_split;
  // The most stages that fit. Two stages to fit two blocks of 64 rows on an SM (82 instead of 114
  // KiB) was slower on the H100 (shared prefix N = 256, P = 32K; decode-row-probe, commit d17227e;
  // docs/history/kernel-notes.md, "Row attention: tensor-core grouped decode and the shared-prefix
  // phase (2026-11-23)", run 2): the third tile in flight matters more than the second block.
  // The warpgroup-MMA kernel has one stage count of its own, which 0 asks for.
  const int most_stages = wgmma ? 0 : 3, fewest_stages = wgmma ? 0 : 2;
  // The tile of the d 64 two-warpgroup kernel (MQA's many heads on one KV head): 64 or 128 tokens
  // (DECODE_BENCH_ROW_WGMMA_TILE). A 128-token tile runs one tile chain (the barrier, S's wait,
  // the softmax's reductions, the pack) for the bytes of two. Every other warpgroup-MMA block: 64.
  const int wgmma_tile = !(wgmma && rows_per_block == 128 && compiled_head_dim(p.shape.head_dim) == 64) ? 64
                         : options.tuning.row_wgmma_tile > 0 ? options.tuning.row_wgmma_tile
                                                             : wgmma_d64_auto_tile(is_paged_accessor<KV>::value,
                                                                                   implicit_decode_items(p),
                                                                                   p.max_item_tokens * p.num_items / sms);
  KernelChoice k;
  for (int stages = most_stages; stages >= fewest_stages; --stages) {
    const KernelChoice c = choose_kernel<KV>(p.shape.head_dim, path, rows_per_block, stages, wide, packed, false,
                                             wgmma, variant, wgmma_tile);
    if (c.kernel == nullptr) continue;
    int blocks = 0;
    DB_RETURN_IF_ERROR(prepare_kernel(c, options.tuning.carveout_max_shared, &blocks));
    if (blocks > per_sm) k = c, per_sm = blocks;
    if (per_sm >= 1) break;
  }
  if (k.kernel == nullptr) return cudaErrorInvalidValue;
  if (per_sm == 0) return cudaErrorInvalidConfiguration;
  const int row_blocks = (rows + rows_per_block - 1) / rows_per_block;
  const std::int64_t blocks_per_split = static_cast<std::int64_t>(p.num_items) * row_blocks;
  if (blocks_per_split > INT32_MAX) return cudaErrorInvalidValue;

  *plan = RowAttentionPlan{};
  plan->path = path;
  plan->rows_per_block = rows_per_block;
  plan->row_blocks = row_blocks;
  plan->tile_tokens = k.tile;
  plan->stages = k.stages;
  plan->blocks_per_sm = per_sm;
  plan->wide = wide;
  plan->packed = packed;
  plan->wgmma = wgmma;
  // A ragged decode batch with host lengths and no pinned splits: the work list. Uniform batches
  // keep the grid below (one split count for all items).
  if (!variant && p.host_seq_lens != nullptr && options.splits <= 0 && options.balance) {
    const int seqs = p.shape.heads_kv > 0 ? p.num_items / p.shape.heads_kv : 0;
    if (seqs * p.shape.heads_kv != p.num_items || p.num_rows != seqs * p.shape.heads_q)
      return cudaErrorInvalidValue;  // host lengths describe decode items only
    const std::span<const std::int32_t> lens(p.host_seq_lens, static_cast<std::size_t>(std::max(seqs, 0)));
    if (lengths_are_ragged(lens)) return plan_row_work_list(p, lens, static_cast<std::int64_t>(sms) * per_sm, plan);
  }
  const std::int64_t tiles = (std::max<std::int64_t>(p.max_item_tokens, 1) + k.tile - 1) / k.tile;
  // The split rule's slots: every resident block, except for the d 64 warpgroup-MMA kernel, where
  // two blocks fit an SM but a second one streams the SM's share no faster, so splitting an item
  // to fill it only adds partials and a merge (H100, Falcon-7B's 71 / 1 heads by split count:
  // 128 x 512 slower at 2 splits, two blocks an SM, than unsplit at one;
  // results/reference/h100/floor-d928ba9/). Such blocks count one an SM.
  const bool one_slot_per_sm = wgmma && compiled_head_dim(p.shape.head_dim) == 64;
  std::int64_t slots = static_cast<std::int64_t>(sms) * (one_slot_per_sm ? 1 : per_sm);
  if (options.max_blocks > 0) slots = std::min<std::int64_t>(slots, options.max_blocks);
  plan->slots = static_cast<int>(slots);
  int splits = options.splits > 0 ? std::min(options.splits, 65535) : choose_splits(blocks_per_split, slots, tiles);
  // A grouped decode (16-row blocks, memory-bound): about one block per SM. One block of 3 stages
  // per SM already streams at the read ceiling, and every split adds the last block's merge
  // (partial writes, the counter, the partial reads: dependent L2 round trips after the stream
  // ends). H100, FP16 32 / 8 heads (decode-row-probe, commits 6aaee99 and 75635a1): 16 x 4K faster
  // at 1 split (128 blocks) than at 2 (256 blocks), 1 x 64K faster at 16 splits than at 32
  // (docs/history/kernel-notes.md, "Where the grouped decode's time goes: a fixed cost, not the
  // stream"). Taken by default only where measured
  // faster (one_block_per_sm_decode: not BF16 unpacked or FP8, whose hi + lo mma outran one
  // block's share of the stream, nor paged K/V, for a reason not yet profiled);
  // DECODE_BENCH_ROW_DECODE_SPLITS=sms takes it for every grouped decode, slots for none.
  // The warpgroup-MMA kernel's grouped decodes take it too, contiguous and paged: faster than the
  // every-slot rule at 1 x 32K, 16 x 4K and 16 x 32K, FP16 and BF16, groups 4, 8 and 16, level
  // at group 7 (docs/kernels/rows_wgmma.md, "Grouped decodes").
  const bool wgmma_grouped = wgmma && grouped_decode;
  const bool one_per_sm_default =
      wgmma_grouped || (one_block_per_sm_decode<KV>(packed) && p.shape.head_dim == 128 && !wgmma);
  const RowDecodeSplits decode_splits =
      options.tuning.row_decode_splits != RowDecodeSplits::automatic ? options.tuning.row_decode_splits
      : one_per_sm_default                                            ? RowDecodeSplits::sms
                                                                      : RowDecodeSplits::slots;
  const bool grouped_blocks = rows_per_block == 16 || wgmma_grouped;
  // Except, on the warpgroup-MMA kernel, BF16 at d 64 and paged K/V on a GPU whose bus outruns one
  // block's paged stream: about two blocks an SM where two fit (grouped_decode_blocks_per_sm,
  // kernels/row_attention.hpp). DECODE_BENCH_ROW_DECODE_SPLITS=sms pins one an SM.
  std::int64_t decode_blocks_per_sm = 1;
  if (options.tuning.row_decode_splits == RowDecodeSplits::automatic && wgmma_grouped) {
    double clock_dram = 0;
    DB_RETURN_IF_ERROR(clock_dram_bytes_per_s(dev, &clock_dram));
    decode_blocks_per_sm =
        grouped_decode_blocks_per_sm(wgmma_packed && compiled_head_dim(p.shape.head_dim) == 64,
                                     is_paged_accessor<KV>::value, clock_dram, sms, per_sm);
  }
  if (options.splits <= 0 && options.max_blocks <= 0 && path == RowAttentionPath::tensor_core && !wide &&
      grouped_blocks && decode_splits == RowDecodeSplits::sms) {
    const std::int64_t target = static_cast<std::int64_t>(sms) * decode_blocks_per_sm;
    plan->slots = static_cast<int>(target);  // the blocks this rule plans for, not every resident one
    const std::int64_t item_splits =
        std::clamp<std::int64_t>(target / std::max<std::int64_t>(blocks_per_split, 1), 1, tiles);
    if (blocks_per_split * item_splits * 4 >= 3 * target) splits = static_cast<int>(item_splits);
  }
  // No split of the longest item left without tokens: an empty split's blocks still run, write
  // partial states and join the merge. The cut is in whole tiles, so a count that does not divide
  // the item's tiles can end in empty splits (gpt-oss's 64 / 8 heads at 1 x 32K: 33 splits, the
  // 33rd empty; H100, 32 splits faster: docs/kernels/rows_wgmma.md, "Empty splits, and the merge
  // after a dependent launch"). A pinned count is launched as asked.
  if (options.splits <= 0) splits = nonempty_chunks(p.max_item_tokens, splits, k.tile);
  plan->splits = splits;
  // Partial states (num_rows, splits) when the items are split.
  if (splits > 1) plan->partial_states = static_cast<std::int64_t>(p.num_rows) * splits;
  // Work stealing among an item's splits (RowAttentionOptions::steal_pool): equal ranges finish
  // unequally, since SMs stream at different speeds (block timelines, H100, 32 / 8 heads 1 x 64K:
  // the 16 splits of an item ended several us apart; docs/history/kernel-notes.md, "Where a launch's
  // time goes, block by block"); a pool taken tile by tile at the end lets the fast ones take over
  // the slow ones' share.
  // Where a stealing twin is compiled (kHasStealKernel) at the plan's occupancy; its limit on
  // dynamic shared memory is set here like the plain kernel's.
  const double pool =
      options.steal_pool >= 0 ? std::min(options.steal_pool, 1.0) : options.tuning.row_steal.value_or(0.0);
  if (splits > 1 && path == RowAttentionPath::tensor_core && pool > 0 && !wgmma && !variant) {
    const KernelChoice twin = choose_kernel<KV>(p.shape.head_dim, path, rows_per_block, k.stages, wide, packed, true);
    int twin_per_sm = 0;
    if (twin.kernel != nullptr)
      DB_RETURN_IF_ERROR(prepare_kernel(twin, options.tuning.carveout_max_shared, &twin_per_sm));
    if (twin.kernel != nullptr && twin_per_sm >= per_sm) plan->steal_pool = pool;
  }
  // Where the splits merge (kernels/row_merge_model.hpp): fused in the last split block, or a
  // second kernel of one block per row where the fused merge's dependent L2 round trips on one SM
  // outnumber the second kernel's plus its launch. Decode items only (their rows are every row of
  // the problem, which the merge kernel's grid covers), and plain attention only (the merge kernel
  // has no row map or sinks: the variant kernels merge through their own hook); elsewhere fused,
  // whatever the knob.
  if (splits > 1 && p.items == nullptr && !variant) {
    int dev = 0;
    const bool dependent =
        options.tuning.merge_pdl && cudaGetDevice(&dev) == cudaSuccess && dependent_launch_available(dev);
    const RowMergeChoice merge = choose_row_merge(options.tuning.row_merge, std::min(rows, rows_per_block), splits,
                                                  p.shape.head_dim, compiled_head_dim(p.shape.head_dim), k.threads,
                                                  static_cast<std::int64_t>(k.shared_bytes / sizeof(float)), dependent);
    plan->separate_merge = merge.separate;
    plan->dependent_merge = merge.separate && dependent;
  }
  // The warpgroup-MMA kernel's splits merge in a cluster where they fit one (2-8 splits), unless a
  // merge is pinned: no partials in global memory, no counter, no second kernel.
  if (splits > 1 && splits <= kClusterMergeMaxSplits && wgmma && implicit_decode_items(p) && !variant &&
      options.tuning.row_cluster_merge && options.tuning.row_merge == RowMergeMode::automatic) {
    // Every cluster resident at once, at the occupancy the split rule planned for (one block an SM
    // for the d 64 kernel): a cluster's blocks share a GPC, so a grid that fills the slots can still
    // leave some clusters without a GPC of free SMs, which then wait for a wave, or double up
    // on SMs another block streams through (H100, Falcon-7B 16 x 4K at 9b2ec24;
    // results/reference/h100/cluster-merge-8d21d9e/, docs/decisions/cluster-split-merge.md).
    int clusters = 0;
    DB_RETURN_IF_ERROR(prepared_max_active_clusters(k.kernel, k.threads, k.shared_bytes, splits, one_slot_per_sm, &clusters));
    if (static_cast<std::int64_t>(clusters) >= blocks_per_split) {
      plan->cluster_merge = true;
      plan->separate_merge = plan->dependent_merge = false;
      plan->partial_states = 0;
    }
  }
  // Decode items of one length, known on the host, on a block the twin is compiled for (the d 64
  // two-warpgroup kernel of MQA's many heads on one KV head; the grouped decodes' one-warpgroup
  // blocks): the twin takes the length as an argument, so no block waits for seq_lens before it
  // can address its first tile (docs/kernels/rows_wgmma.md, "The length as an argument of a twin
  // kernel"). DECODE_BENCH_ROW_HOST_LENGTH=off reads seq_lens.
  const WgmmaRowKernel twin =
      wgmma && !variant && implicit_decode_items(p) && p.host_seq_lens != nullptr && options.tuning.row_host_length
          ? host_length_twin<KV>(p.shape.head_dim, rows_per_block, k.tile)
          : WgmmaRowKernel{};
  if (twin.kernel != nullptr) {
    const int seqs = p.shape.heads_kv > 0 ? p.num_items / p.shape.heads_kv : 0;
    const std::span<const std::int32_t> lens(p.host_seq_lens, static_cast<std::size_t>(std::max(seqs, 0)));
    if (seqs > 0 && seqs * p.shape.heads_kv == p.num_items && !lengths_are_ragged(lens) && lens[0] > 0 &&
        lens[0] <= p.max_item_tokens) {
      int twin_per_sm = 0;
      DB_RETURN_IF_ERROR(prepare_kernel({twin.kernel, twin.shared_bytes, twin.shared_bytes, twin.tile, twin.stages,
                                         twin.threads},
                                        options.tuning.carveout_max_shared, &twin_per_sm));
      if (twin_per_sm >= per_sm) plan->uniform_len = lens[0];
    }
  }
  // The streamed grid (stream_grid_blocks, kernels/row_attention.hpp): the host-length twin's
  // unsplit grouped decodes at d 128 in one-warpgroup blocks, fewer blocks than items, each block
  // streaming its items' tiles one into the next (docs/kernels/rows_wgmma.md, "The streamed grid").
  if (const WgmmaRowKernel stream = stream_kernel_for<KV>(p, *plan); stream.kernel != nullptr) {
    int stream_per_sm = 0;
    DB_RETURN_IF_ERROR(prepare_kernel({stream.kernel, stream.shared_bytes, stream.shared_bytes, stream.tile,
                                       stream.stages, stream.threads},
                                      options.tuning.carveout_max_shared, &stream_per_sm));
    const std::int64_t tiles = (plan->uniform_len + stream.tile - 1) / stream.tile;
    const std::int64_t slots = static_cast<std::int64_t>(sms) * stream_per_sm;
    const std::int64_t blocks =
        stream_per_sm > 0 ? stream_grid_blocks(p.num_items, tiles, slots, options.tuning.row_stream) : 0;
    if (blocks > 0 && blocks <= INT32_MAX) plan->stream_blocks = static_cast<int>(blocks);
  }
  size_workspace(p, plan);
  return cudaSuccess;
}

template <class KV>
cudaError_t run_row_attention(const KV& kv, const RowAttentionProblem& p, const RowAttentionPlan& plan,
                              void* workspace, cudaStream_t stream) {
  using namespace row_attention_detail;
  if (p.kv_dtype != dtype_of<typename KV::value_type>::value || plan.splits < 1 || plan.rows_per_block < 16 ||
      plan.row_blocks * plan.rows_per_block < p.max_item_rows || p.num_items < 0 ||
      row_attention_missing_pointers(p))
    return cudaErrorInvalidValue;
  if (p.num_items == 0) return cudaSuccess;
  if (plan.packed && p.max_item_rows > 8) return cudaErrorInvalidValue;  // the packed kernel holds 8 rows a block
  const bool variant = !p.variant.plain();
  // A plan made for the plain problem, or on the warpgroup-MMA kernel for a variant its twin does
  // not take (several query tokens, explicit items).
  if (variant && (!plan.work_entries.empty() || plan.steal_pool > 0 || plan.packed ||
                  (plan.wgmma && (p.variant.q_len != 1 || !implicit_decode_items(p)))))
    return cudaErrorInvalidValue;
  // Explicit items take the soft-cap alone (row_attention_unsupported_reason).
  if (variant && p.items != nullptr && (p.variant.q_len != 1 || p.variant.window != 0 || p.variant.sinks != nullptr))
    return cudaErrorInvalidValue;
  const bool work_list = !plan.work_entries.empty();
  const bool steal = plan.steal_pool > 0 && !work_list && plan.splits > 1;  // a work list is its chunks
  KernelChoice k = choose_kernel<KV>(p.shape.head_dim, plan.path, plan.rows_per_block, plan.stages, plan.wide,
                                     plan.packed, steal, plan.wgmma, variant, plan.wgmma ? plan.tile_tokens : 64);
  if (k.kernel == nullptr || (plan.path == RowAttentionPath::tensor_core && !kHasTensorCorePath<KV>))
    return cudaErrorInvalidValue;
  if (plan.uniform_len != 0) {  // the host-length twin: decode items on the uniform grid only
    const WgmmaRowKernel twin =
        plan.wgmma ? host_length_twin<KV>(p.shape.head_dim, plan.rows_per_block, plan.tile_tokens) : WgmmaRowKernel{};
    if (twin.kernel == nullptr || plan.uniform_len < 0 || plan.uniform_len > p.max_item_tokens ||
        !implicit_decode_items(p) || work_list || variant)
      return cudaErrorInvalidValue;
    k.kernel = twin.kernel;  // its launch shape is the plain kernel's (the kernel table's host test)
  }
  if (plan.stream_blocks != 0) {  // the streamed grid: the host-length twin's unsplit items only
    const WgmmaRowKernel stream = stream_kernel_for<KV>(p, plan);
    if (stream.kernel == nullptr || plan.stream_blocks < 0 || plan.stream_blocks > p.num_items)
      return cudaErrorInvalidValue;
    k.kernel = stream.kernel;
    k.shared_bytes = stream.shared_bytes;
  }
  device::RowAttentionArgs args{};
  args.items = p.items;
  args.seq_lens = p.seq_lens;
  args.row_q = p.row_q;
  args.q = p.q;
  args.o = p.o;
  args.lse = p.lse;
  args.heads_q = p.shape.heads_q;
  args.heads_kv = p.shape.heads_kv;
  args.group = p.shape.group();
  args.head_dim = p.shape.head_dim;
  args.q_scale = static_cast<float>(p.shape.softmax_scale() * device::kLog2eDouble);
  args.splits = plan.splits;
  args.row_blocks = plan.row_blocks;
  args.rows_per_block = plan.rows_per_block;
  args.stages = k.stages;
  const bool separate_merge = plan.separate_merge && !work_list && plan.splits > 1 && p.items == nullptr;
  args.fused_merge = separate_merge ? 0 : 1;
  if (work_list && (p.items != nullptr || p.seq_lens == nullptr ||
                    plan.work_entries.size() * plan.row_blocks > static_cast<std::size_t>(INT32_MAX)))
    return cudaErrorInvalidValue;  // a work list is planned for decode items only
  if (plan.cluster_merge) {  // a plan for the warpgroup-MMA kernel's uniform grid of 2-8 splits
    if (!plan.wgmma || work_list || variant || !implicit_decode_items(p) || plan.splits < 2 ||
        plan.splits > kClusterMergeMaxSplits || steal || separate_merge)
      return cudaErrorInvalidValue;
    args.fused_merge = device::kClusterMerge;
  } else if (work_list || plan.splits > 1) {
    if (workspace == nullptr) return cudaErrorInvalidValue;
    char* const base = static_cast<char*>(workspace);
    args.counters = reinterpret_cast<unsigned*>(base);

    const std::size_t entries_bytes = work_list ? row_work_entries_bytes(plan) : 0;
    if (work_list) args.entries = reinterpret_cast<const RowWorkEntry*>(base + plan.workspace_init_bytes);
    args.partial_o = reinterpret_cast<float*>(base + plan.workspace_init_bytes + entries_bytes);
    args.partial_lse = args.partial_o + static_cast<std::size_t>(plan.partial_states) * p.shape.head_dim;
  }
  const dim3 grid = work_list                ? dim3(static_cast<unsigned>(plan.work_entries.size() * plan.row_blocks), 1)
                    : plan.stream_blocks != 0 ? dim3(static_cast<unsigned>(plan.stream_blocks), 1)
                                              : dim3(static_cast<unsigned>(p.num_items) * plan.row_blocks, plan.splits);
  args.timeline = take_block_timeline(std::int64_t{grid.x} * grid.y, row_attention_timeline_name(plan));
  const FastDivmod div = page_divider(kv);
  // The fourth argument: the static share of a stealing plan in 1/1024ths (the stealing twin's), or
  // the uniform length (the warpgroup-MMA host-length twin's); the other kernels ignore it. Then
  // the variants (the fifth argument of row_attention_mma_variant_kernel), or the item count (the
  // streamed grid's fifth).
  int fourth = steal ? static_cast<int>(std::lround((1.0 - plan.steal_pool) * 1024)) : plan.uniform_len;
  RowAttentionVariant variant_arg = p.variant;
  int stream_items = p.num_items;
  void* params[] = {const_cast<KV*>(&kv), &args, const_cast<FastDivmod*>(&div), &fourth,
                    plan.stream_blocks != 0 ? static_cast<void*>(&stream_items) : static_cast<void*>(&variant_arg)};
  if (plan.cluster_merge) {
    cudaLaunchAttribute attribute;
    const cudaLaunchConfig_t config =
        cluster_launch_config(grid, static_cast<unsigned>(k.threads), k.shared_bytes, stream, &attribute);
    DB_RETURN_IF_ERROR(cudaLaunchKernelExC(&config, k.kernel, params));
  } else {
    DB_RETURN_IF_ERROR(cudaLaunchKernel(k.kernel, grid, dim3(k.threads), params, k.shared_bytes, stream));
  }
  if (separate_merge) {
    args.timeline = take_block_timeline(p.num_rows, "row_merge");
    const dim3 merge_grid(static_cast<unsigned>(p.num_rows));
    const auto launch_merge = [&](auto d) {
      constexpr int D = decltype(d)::value;
      const int threads = separate_merge_threads(plan.splits, D);
      const auto kernel = threads == kSeparateMergeThreadsMany ? device::row_merge_kernel<D, kSeparateMergeThreadsMany>
                                                               : device::row_merge_kernel<D, kSeparateMergeThreadsFew>;
      const device::RowAttentionArgs& merge_args = args;
      return launch_merge_kernel(plan.dependent_merge, kernel, merge_grid, dim3(threads), stream, merge_args);
    };
    switch (compiled_head_dim(p.shape.head_dim)) {
      case 64: DB_RETURN_IF_ERROR(launch_merge(std::integral_constant<int, 64>{})); break;
      case 128: DB_RETURN_IF_ERROR(launch_merge(std::integral_constant<int, 128>{})); break;
      case 256: DB_RETURN_IF_ERROR(launch_merge(std::integral_constant<int, 256>{})); break;
      default: return cudaErrorInvalidValue;
    }
  }
  return cudaSuccess;
}

}  // namespace decode_bench

#define DECODE_BENCH_INSTANTIATE_ROW_ATTENTION(KV)                                                              \
  template cudaError_t decode_bench::plan_row_attention<KV>(const decode_bench::RowAttentionProblem&,           \
                                                            const decode_bench::RowAttentionOptions&,           \
                                                            decode_bench::RowAttentionPlan*);                   \
  template cudaError_t decode_bench::run_row_attention<KV>(const KV&, const decode_bench::RowAttentionProblem&, \
                                                           const decode_bench::RowAttentionPlan&, void*, cudaStream_t);
