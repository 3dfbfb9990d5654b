#pragma once
// Host-side planning of the CUDA-core flash-decode for short and ragged batches (pure functions,
// no CUDA calls, so host tests check every choice).
//
// Ragged batches (lengths known on the host): the work-list plan of FlashInfer's load-balanced
// scheduler (Ye et al., arXiv 2501.01005, Algorithm 1). Every sequence is cut into n_b = ceil(L_b / C) splits with one
// chunk bound C for the whole batch, so no block streams more than C tokens of one KV head whatever
// the length mix; C follows from the batch's total work over the GPU's block slots. Each split is a
// work item (one block per item and KV head block); the items are ordered longest first, so the
// block scheduler hands out the long ones before the short ones fill the gaps. Splits of a
// sequence take turns tile by tile (the access order of a grid-stride read, as in the uniform
// plan) and are merged by log-sum-exp by the last one to finish. Partial states exist only for
// sequences with n_b > 1: sum of those n_b x H_q states, bounded by the item count.
//
// Short batches: many (sequence, KV head) blocks with few tokens each. The standard tiling (8 warps,
// 128 KiB of cp.async stages for GQA groups 1-2) fits one block per SM, so such a batch runs in
// many waves of blocks that each pay a full load latency for a few KiB; the short tiling (4 warps,
// 32 KiB of stages) fits several per SM, whose latencies overlap.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace decode_bench {

// One block row of a work-list plan: split `split` of `num_splits` of sequence `seq`. Its partial
// states (num_splits > 1) are rows partial_base * H_q + h * num_splits + split of the partials.
struct DecodeWorkItem {
  std::int32_t seq;
  std::int32_t split;
  std::int32_t num_splits;
  std::int32_t partial_base;
};
static_assert(sizeof(DecodeWorkItem) == 16, "uploaded as-is into the workspace");

// Grid rows are items (gridDim.y), so a plan has at most this many.
inline constexpr std::int64_t kMaxWorkItems = 65535;

struct BalancedWork {
  std::int64_t chunk_bound = 0;          // C: tokens of one KV head at most per item (a multiple of tile)
  std::vector<DecodeWorkItem> items;     // longest work first
  std::int64_t partial_splits = 0;       // sum of n_b over sequences with n_b > 1
  int max_splits = 1;                    // max n_b
};

// lengths: tokens per sequence (>= 0). head_blocks: blocks per item (H_kv / heads per block).
// slots: blocks the GPU holds at once (SMs x blocks per SM). tile: tokens per block iteration.
// C = the per-slot share of all head_blocks x sum(L) tokens over kBalanceSharesPerSlot, at least
// two tiles (below that a split's partial write and merge cost more than its parallelism returns),
// rounded up to whole tiles; doubled while the items would exceed kMaxWorkItems.
// Throws std::invalid_argument for a negative length, no sequences or more than kMaxWorkItems, or
// non-positive sizes.
inline constexpr int kBalanceSharesPerSlot = 2;
BalancedWork balance_decode_work(std::span<const std::int32_t> lengths, int head_blocks, int slots, int tile);

// Whether a batch is ragged enough to plan as a work list: lengths differ.
bool lengths_are_ragged(std::span<const std::int32_t> lengths);

// The CUDA-core flash-decode's compiled tilings (kernels/flash_decode_traits.cuh), as a plan records
// them: standard; short (few warps and small stages, several blocks per SM: GQA group 1, and group 2
// for FP16 and BF16 plain decodes at head dim 128); deep (group 1, FP16 and BF16 at head dim 128: the
// standard stages cut into four of half the rows).
// choose_decode_tiling below says when plans take each.
enum class DecodeTiling { standard, short_batch, deep };
constexpr std::string_view decode_tiling_name(DecodeTiling t) {
  return t == DecodeTiling::short_batch ? "short" : t == DecodeTiling::deep ? "deep" : "standard";
}

// What choose_decode_tiling weighs: a batch as the standard tiling would plan it.
struct TilingQuery {
  int group = 1;
  bool pinned = false;               // DecodeOptions::splits or heads_per_block set
  std::int64_t head_blocks = 0;      // sequences x KV heads
  std::int64_t standard_slots = 0;   // SMs x standard blocks per SM
  int standard_tile = 0;             // tokens per standard block iteration
  std::span<const std::int32_t> lengths;  // host lengths; empty: only max_len is known
  std::int64_t max_len = 0;
  bool paged = false;                // the cache is paged
  bool masked_head_dim = false;      // the head dim is below the compiled kernel's
  bool wide_bus = false;             // wide_bus_per_sm of the device
};
// The most standard tiles a block the short tiling takes on a wide bus past its two-tile rule.
inline constexpr int kShortWideBusMaxTiles = 8;

// The tiling of the CUDA-core flash-decode at GQA groups 1 and 2 (the only groups with more than
// the standard one compiled; the caller asks at group 2 only where its short tiling is); standard
// at every other group and where the caller pinned splits or heads per block (probes compare the
// standard tiling under those).
// - short_batch: a uniform batch whose standard blocks already fill a wave or more without
//   splitting (head_blocks >= standard_slots) and each stream at most two standard tiles, or at
//   most kShortWideBusMaxTiles where the head dim is below the compiled kernel's (80-127 on the
//   kernel of 128: a row's lanes past the head dim load nothing, so one standard block an SM has
//   that fraction fewer bytes in flight) on a GPU with a wide bus (wide_bus_per_sm,
//   kernels/device_attribute_cache.hpp). On an H200, Phi-3-mini's d 96 at 64 x 1K and 128 x 512
//   ran faster on the short tiling, contiguous and paged; paged 16 x 4K slower
//   (docs/kernels/splitk_cuda_core.md, "Head dims below the compiled one"). A ragged batch in a
//   contiguous cache when at least half its sequences are at most two standard tiles (zipf batches:
//   most blocks are tiny, the long sequences are split anyway); a ragged batch in a paged cache
//   never: there the short tiling streamed the long items slower than the standard one (H100,
//   docs/history/kernel-notes.md).
//   Group 2: a uniform batch whose standard blocks fill a wave, each at most kShortWideBusMaxTiles
//   standard tiles, on a wide bus. The standard tiling keeps one 128-token tile in flight and one
//   block an SM, so each block's first tile is a round trip nothing hides; at many short sequences
//   the blocks are many waves of such round trips. On an H200, Gemma-3-27B's global layers (32 / 16
//   heads, d 128, BF16) at 64 x 1K and 128 x 512 ran faster on the short tiling, contiguous and
//   paged (docs/decisions/short-tiling-at-group-2.md); an H100 reads them at 0.94-0.96 of the read
//   floor on the standard tiling. Ragged group-2 batches were not measured on it.
// - deep (the standard stages cut into four of half the rows, three tiles in flight): past the
//   short tiling's reach, a uniform batch in a paged cache whose head dim is below the compiled
//   kernel's, on a wide bus. On an H200, Phi-3-mini's d 96 at 1 x 32K and 16 x 4K ran faster on it
//   over pages of 16; in a contiguous cache no gain was shown (the same page). Not for ragged
//   batches (their work list was not measured on it), not on a narrower bus (an H100 reads those
//   points near its floor on the standard tiling). Compiled for FP16 and BF16 plain decodes at head
//   dim 128 only: elsewhere the caller plans the standard tiling in its place.
DecodeTiling choose_decode_tiling(const TilingQuery& q);

}  // namespace decode_bench
