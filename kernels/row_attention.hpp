#pragma once
// Row-set attention: several query rows attending to one KV token range of one KV head, read once
// for all of them. Two shapes of the project are this one operation:
//   - grouped-query decode: the G query heads of one KV head of one sequence (an item per
//     (sequence, KV head), G rows each);
//   - a shared prefix: every query head of every sequence that shares the prefix (an item per
//     (prefix, KV head), N x G rows), the prefix phase of the composable shared-prefix scheme.
// With many rows per item each KV tile is a small matrix product (tensor cores), not a
// matrix-vector one. The result is one attention state (o normalised, lse) per row over the
// item's range; states over disjoint ranges merge exactly (kernels/attention_state.hpp).
//
// Device arrays (all pointers are device pointers):
//   items:  (num_items)            which rows attend to which token range of which KV head
//   row_q:  (num_rows) int32       row r's query vector is q + row_q[r] * D (D = head_dim), row_q[r] =
//                                  seq * H_q + h; nullptr means row_q[r] = r
//   q:      (num_seqs, H_q, D) fp32
//   o:      (num_rows, D) fp32     written: the row's normalised output over its item's range
//   lse:    (num_rows) fp32        written: natural-log LSE of the row's scaled scores (-inf for
//                                  an empty range, with o = 0)
// Rows of one item are contiguous, [row_begin, row_end), and every row belongs to exactly one item.
// With row_q == nullptr and items (seq, kv_head) whose rows are [seq * H_q + kv_head * G, + G), o and
// lse are exactly the decode outputs (num_seqs, H_q, D) and (num_seqs, H_q).
// Decode items without an item array: items == nullptr and seq_lens set means item i is
// (seq = i / H_kv, kv_head = i % H_kv, rows [seq * H_q + kv_head * G, + G), tokens [0, seq_lens[seq]))
// with num_items = num_seqs * H_kv and num_rows = num_seqs * H_q (how plan_decode uses it).
//
// Supported (row_attention_unsupported_reason): head_dim a multiple of 16 up to 256 (compiled for
// 64, 128, 256; smaller ones run on the next one up, tail dims masked); FP32 / FP16 / BF16 / FP8
// (E4M3, E5M2) storage (tensor_core: all but FP32); 1 <= rows per item; ranges below 2^31 tokens; q rows 16-byte
// aligned (D floats each). FP8: value = stored x the accessor's per-KV-head k_scale / v_scale
// (kernels/kv_accessor.hpp; one item is one KV head). The planner sizes a workspace:
// (num_rows x splits) partial states and one counter per (item, row block) when splits > 1 (two
// with work stealing: RowAttentionPlan::steal_pool), else none.
// Ragged decode batches (decode items with host_seq_lens whose lengths differ): a work list of
// (item, token chunk) entries with a split count per item (kernels/row_attention_balance.hpp); the
// workspace holds one counter per (item, row block), the entries and the split items' partials.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include <cuda_runtime.h>

#include <vector>

#include "kernels/decode_shape.hpp"
#include "kernels/device_attribute_cache.hpp"  // wide_bus_per_sm
#include "kernels/dtype.hpp"
#include "kernels/row_attention_balance.hpp"
#include "kernels/row_attention_variant.hpp"
#include "kernels/row_attention_tiling.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {

struct RowAttentionItem {
  std::int32_t kv_seq = 0;    // the sequence (accessor slot / block-table row) that holds the range
  std::int32_t kv_head = 0;   // KV head 0 .. H_kv - 1
  std::int32_t row_begin = 0; // rows [row_begin, row_end) of the problem
  std::int32_t row_end = 0;
  std::int64_t token_begin = 0;  // tokens [token_begin, token_end) of sequence kv_seq
  std::int64_t token_end = 0;
};

struct RowAttentionProblem {
  DecodeShape shape;                 // heads_q, heads_kv, head_dim (softmax scale from it)
  DType kv_dtype = DType::fp16;
  int num_items = 0;
  const RowAttentionItem* items = nullptr;  // device
  // The items are explicit (`items`), also where a problem is planned before its arrays exist
  // (the shared-prefix phase: items still nullptr). Decode items are implicit: false, items nullptr.
  bool explicit_items = false;
  int num_rows = 0;
  const std::int32_t* row_q = nullptr;      // device, or nullptr (identity)
  const std::int32_t* seq_lens = nullptr;   // device; only with items == nullptr (decode items)
  // Host copy of seq_lens (num_items / H_kv), decode items only: with lengths that differ the
  // planner lays out a work list (RowAttentionPlan::work_entries) whose entries carry these
  // lengths, so the device seq_lens must equal them at every run of that plan (replan when lengths
  // change); nullptr: the uniform grid, which reads seq_lens at run time.
  const std::int32_t* host_seq_lens = nullptr;
  // Host-known bounds over the items (size grids and workspaces; the planner trusts them).
  std::int64_t max_item_tokens = 0;
  int max_item_rows = 0;
  const float* q = nullptr;
  float* o = nullptr;
  float* lse = nullptr;
  // The attention variants (kernels/row_attention_variant.hpp). Not plain: decode items only
  // (items == nullptr), group x q_len rows an item (row v: query token v / group, head v % group of
  // the group), q, o and lse (num_seqs, q_len, H_q(, D)); the tensor-core path at FP16 / BF16 and
  // head dim 128, or BF16 and head dim 64 (compiled_head_dim), on the uniform grid (no work list, no stealing, no packed
  // split; the warpgroup-MMA kernel's twin for one query token only); num_rows, max_item_rows and max_item_tokens as
  // decode_as_row_attention sets them. Or explicit items (a shared prefix's levels) with the
  // soft-cap alone: one query row an item row, q through row_q as in plain row attention.
  RowAttentionVariant variant{};
};

// Decode items: implicit (one per (sequence, KV head), rows and lengths from the shape and
// seq_lens), neither given as an array nor announced as explicit.
inline bool implicit_decode_items(const RowAttentionProblem& p) { return p.items == nullptr && !p.explicit_items; }

enum class RowAttentionPath {
  automatic,    // the planner chooses (and records its choice in the plan)
  simt,         // CUDA cores, any storage type (FP32 storage takes this path)
  tensor_core,  // mma.sync m16n8k16, FP32 accumulation (FP16 / BF16 / FP8 storage)
};


struct RowAttentionOptions {
  RowAttentionPath path = RowAttentionPath::automatic;
  int splits = 0;  // blocks per item along its tokens; <= 0: the planner fills the GPU
  RowAttentionTiling tiling = RowAttentionTiling::automatic;
  bool balance = true;  // ragged decode batches (host_seq_lens): the work list; false: uniform splits
  // > 0: choose the splits for at most this many resident blocks (a share of the GPU; the rest is
  // left to a kernel running beside this one, the shared prefix's suffix phase). 0: the whole GPU.
  int max_blocks = 0;
  // The uniform grid's split items (splits > 1, tensor-core path): the share of each item's tiles
  // its splits take from a shared counter (work stealing) after each has streamed its own static
  // range of the rest. < 0: tuning.row_steal, or none when it is unset (grouped decode passes its
  // own default: kernels/decode_dispatch.cuh); 0: none (each split one fixed range); (0, 1]: that
  // share.
  double steal_pool = -1;
  // The knobs this plan follows where the fields above leave a choice to the planner (the
  // sweep's, parsed once from the environment; default-constructed: every knob at its default).
  TuningPolicy tuning{};
};

struct RowAttentionPlan {
  RowAttentionPath path = RowAttentionPath::simt;
  int splits = 1;          // blocks per item along the tokens (1: no merge)
  int rows_per_block = 0;  // query rows one block holds (tensor_core: 16, 32, 64; wide 64, 128, 256;
                           // wgmma 64, 128; simt: 16)
  int row_blocks = 0;      // blocks per item along its rows: ceil(max_item_rows / rows_per_block)
  int tile_tokens = 0;     // KV tokens per block iteration
  int stages = 0;          // K/V tiles in shared memory (tensor_core: 3, 2 at D = 256)
  int blocks_per_sm = 0;   // occupancy of the kernel at this plan's shared memory
  bool wide = false;       // tensor_core: 8 warps x 2 row tiles (rows_per_block 64 / 128 / 256), else 4 x 1
  bool packed = false;     // tensor_core, BF16 / FP8 at D 128: q and P lo parts in rows 8..15 of one mma
                           // (items of at most 8 rows, one 16-row tile per block)
  bool wgmma = false;      // tensor_core, FP16 at D 64 / 128 on Hopper: warpgroup MMA, rows_per_block 64 / 128
  int slots = 0;           // blocks the split choice planned for (SMs x blocks_per_sm; SMs for the d 64 wgmma kernel;
                           // SMs x grouped_decode_blocks_per_sm for grouped decodes under that rule; or max_blocks)
  std::size_t workspace_bytes = 0;
  std::size_t workspace_init_bytes = 0;  // zeroed once by init_row_attention_workspace
  // Work list (ragged decode batches): one grid row of row_blocks blocks per entry, longest first;
  // splits is then the largest chunk count. Empty: the uniform grid (num_items x row_blocks, splits).
  // init_row_attention_workspace uploads the entries after the counters.
  std::vector<RowWorkEntry> work_entries;
  std::vector<DecodeWorkItem> work_seq_items;  // the per-sequence chunks the entries expand
  std::int64_t chunk_bound = 0;                // work list: tokens of one item per entry at most
  std::int64_t partial_states = 0;             // partial (o, lse) states in the workspace
  // The share of each item's tiles its splits steal (RowAttentionOptions::steal_pool; 0: each split
  // streams one fixed range). Only the uniform grid's split items on the tensor-core path steal;
  // the workspace then holds a second counter per (item, row block), the next pool tile.
  double steal_pool = 0;
  // The uniform grid's split items of a grouped decode: a second kernel merges the partials, one
  // block per row, instead of the last split block of each row block (kernels/row_merge_model.hpp
  // weighs the two; DECODE_BENCH_ROW_MERGE pins it).
  bool separate_merge = false;
  // That second kernel launched as a programmatic dependent of the attention kernel
  // (kernels/dependent_launch.cuh): on compute capability 9.0 and later, unless
  // DECODE_BENCH_MERGE_PDL=off.
  bool dependent_merge = false;
  // The uniform grid's split items of the warpgroup-MMA kernel, 2 to kClusterMergeMaxSplits splits:
  // the splits of each (item, row block) launched as one thread-block cluster, which merges their
  // states through distributed shared memory (kernels/row_cluster_merge.cuh) instead of partials
  // in global memory; compute capability 9.0, unless DECODE_BENCH_ROW_CLUSTER_MERGE=off or
  // DECODE_BENCH_ROW_MERGE pins a merge.
  bool cluster_merge = false;
  // The length of every decode item of a uniform grid, from equal host lengths (host_seq_lens),
  // handed to the warpgroup-MMA kernel's host-length twin (d 64 blocks of two warpgroups), which
  // then reads no seq_lens: the device seq_lens must equal it at every run of this plan, as a work
  // list's lengths must. 0: the kernel reads seq_lens. DECODE_BENCH_ROW_HOST_LENGTH=off keeps 0.
  int uniform_len = 0;
  // The streamed grid (stream_grid_blocks below): this many blocks of the host-length twin's
  // streaming kernel take the uniform grid's unsplit items in turn, block b items b, b +
  // stream_blocks, ..., each block's copies running from one item's tiles into the next's. 0: one
  // block an item. DECODE_BENCH_ROW_STREAM pins it (off, or the items a block).
  int stream_blocks = 0;
};

// The most splits a cluster merge takes: the portable cluster size, which needs no opt-in.
inline constexpr int kClusterMergeMaxSplits = 8;

// The tile (tokens) of the warpgroup-MMA kernel's d 64 two-warpgroup blocks where
// DECODE_BENCH_ROW_WGMMA_TILE is auto: 128 for decode items over paged K/V where an SM's share of
// the tokens (items x the longest item's tokens / SMs) is at least three 128-token tiles, else 64.
// Measured on Falcon-7B's decode points (H100; docs/kernels/rows_wgmma.md, "128-token tiles at
// d 64"): paged 16 x 4K, 64 x 1K and 128 x 512 (496 tokens an SM) faster at 128, paged 1 x 32K
// (248) and every contiguous point faster at 64. Explicit items (a shared prefix's levels) were
// not measured: 64, as before the second tiling.
inline int wgmma_d64_auto_tile(bool paged, bool decode_items, std::int64_t tokens_per_sm) {
  return paged && decode_items && tokens_per_sm >= 3 * 128 ? 128 : 64;
}

// Blocks an SM the grouped-decode split rule plans for (DECODE_BENCH_ROW_DECODE_SPLITS auto) on
// the warpgroup-MMA kernel's one-warpgroup blocks, of which `fit` fit an SM:
// - BF16 at d 64 (bf16_d64): two where two fit. Its 16 KB tiles leave one block too few bytes in
//   flight to stream an SM's share of the bus (H100, gpt-oss's 64 / 8 heads; docs/kernels/rows_wgmma.md,
//   "Grouped decodes at d 64").
// - Paged K/V at d 128: two where two fit on a GPU with a wide bus (wide_bus_per_sm,
//   kernels/device_attribute_cache.hpp), else one. One block's paged stream is set by its bytes in
//   flight over their latency, not by the bus: enough for an H100's share, where one block an SM
//   was the faster, short of an H200's, where two were (docs/kernels/rows_wgmma.md, "Two GPUs").
// - Else (contiguous K/V at d 128) one: one block an SM streamed at the read ceiling on both GPUs
//   and every split adds partials and a merge.
inline int grouped_decode_blocks_per_sm(bool bf16_d64, bool paged, double clock_dram_bytes_per_s, int sms, int fit) {
  return bf16_d64 || (paged && wide_bus_per_sm(clock_dram_bytes_per_s, sms)) ? std::min(2, std::max(fit, 1)) : 1;
}

// The fewest 64-token tiles an item of the streamed grid holds: more than the tiles its kernel
// copies ahead (two: one-warpgroup blocks at d 128 run 3 stages), so the copies ahead reach at most
// the next item and the next item's Q, copied with the current item's last tile, arrives after
// the current item's was read (kernels/row_attention_wgmma.cuh, kStream).
inline constexpr std::int64_t kRowStreamMinTiles = 3;
// The most query rows an item of the streamed grid holds: its kernel keeps the next item's Q in a
// buffer of this many rows (RowWgmmaTraits::kStreamRows), a grouped decode's group.
inline constexpr int kRowStreamMaxRows = 16;

// Blocks of the streamed grid for `items` unsplit decode items of `tiles` tiles each, with `slots`
// blocks resident at once (the streaming kernel's occupancy x SMs), or 0 for one block an item.
// pinned: DECODE_BENCH_ROW_STREAM, 0 auto, -1 off, n > 0 about n items a block (ceil(items / n)
// blocks). Auto streams in one wave of `slots` blocks where the items outnumber the slots,
// contiguous and paged K/V alike: a block's fixed costs (the ramp to its first tile, its epilogue)
// are then paid once a slot rather than once an item, and no SM's share of the items grows (slots
// blocks taking items in turn give an SM of s slots at most s x ceil(items / slots) items, what
// waves of one block an item give it). docs/kernels/rows_wgmma.md, "The streamed grid", has the
// measurements; docs/decisions/streamed-grid.md, why paged K/V once streamed only from three items a
// slot and no longer does.
inline std::int64_t stream_grid_blocks(std::int64_t items, std::int64_t tiles, std::int64_t slots, int pinned) {
  if (pinned < 0 || items <= 0 || tiles < kRowStreamMinTiles) return 0;
  if (pinned > 0) return (items + pinned - 1) / pinned;
  if (slots <= 0) return 0;
  return items > slots ? slots : 0;
}

// Why this problem's shape and counts cannot run on the compiled kernels, or nullopt. Device
// pointers are not looked at: a caller may plan from counts and bounds alone, before the arrays
// exist (the shared-prefix planner sizes one workspace that holds them).
std::optional<std::string> row_attention_unsupported_reason(const RowAttentionProblem& problem);
// Which device array a run needs and lacks, or nullopt (run_row_attention refuses such a problem).
std::optional<std::string> row_attention_missing_pointers(const RowAttentionProblem& problem);

template <class KV>
cudaError_t plan_row_attention(const RowAttentionProblem& problem, const RowAttentionOptions& options,
                               RowAttentionPlan* plan);

// Zeroes the counters of a fresh workspace and uploads a work-list plan's entries (host memory:
// the call returns once they are copied). Once after allocating it, outside any timed region.
cudaError_t init_row_attention_workspace(const RowAttentionPlan& plan, void* workspace, cudaStream_t stream);
// Bytes of a work-list plan's entries in the workspace (after the counters), padded to 256.
std::size_t row_work_entries_bytes(const RowAttentionPlan& plan);
// The block timeline's kernel name of the row kernel a plan launches (kernels/block_timeline.hpp):
// row_wgmma (warpgroup MMA), row_mma (mma.sync) or row_simt.
const char* row_attention_timeline_name(const RowAttentionPlan& plan);

template <class KV>
cudaError_t run_row_attention(const KV& kv, const RowAttentionProblem& problem, const RowAttentionPlan& plan,
                              void* workspace, cudaStream_t stream);

}  // namespace decode_bench
