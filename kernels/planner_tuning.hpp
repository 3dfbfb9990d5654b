#pragma once
// Tuning knobs the flash-decode planner reads from the environment, for experiments that must
// keep every point's id (a `--set blocks=...` changes the ids, so compare could not match them).
//
//   DECODE_BENCH_FD_SPLIT_SCALE=F   multiplies the planner's own split count (blocks per
//                                   sequence and head) by F, at least 1 split. F < 1 leaves SMs
//                                   idle on long sequences: a deliberately slowed kernel, to check
//                                   that `decode-bench compare` calls a regression. Default 1.
//                                   An explicit `blocks` (DecodeOptions::splits) is not scaled.
//   DECODE_BENCH_FD_TILING=T        standard | short | auto (default): pins the CUDA-core tiling
//                                   where both are compiled (GQA group 1), to measure one against the
//                                   other on the same points; other groups keep the standard one.
//   DECODE_BENCH_FD_BALANCE=B       1 (default) | 0: 0 plans ragged batches like uniform ones
//                                   (every sequence split alike by the longest), for the comparison.
//   DECODE_BENCH_FD_WORK_CHUNKS=C   tiles | ranges | auto (default, = tiles): how the splits of a
//                                   sequence in a work-list plan share it: taking turns tile by
//                                   tile, or one contiguous range of the chunk bound each.
//   DECODE_BENCH_FD_SHORT_HEADS=H   1 (default) | 2 | 4: KV heads per block of the short tiling
//                                   (its 4 warps in H groups), where H divides H_kv.
//   DECODE_BENCH_ROW_TILING=T       auto (default) | narrow | wide: the tensor-core row attention's
//                                   tiling: wide (8 warps x 2 row tiles) for items of more than 32
//                                   rows (but FP16 d 128 items of <= 64 rows over >= 8K tokens),
//                                   narrow (4 warps x 1) for the rest; narrow pins 4 x 1
//                                   everywhere, wide takes 8 x 2 for every item of more than 16 rows.
//   DECODE_BENCH_ROW_DECODE_SPLITS=R  auto (default) | sms | slots: how the tensor-core row attention
//                                   splits the items of a grouped decode (16-row blocks): sms, about
//                                   one block per SM (the fewest splits, no merge where the items
//                                   alone fill the SMs) for every storage type and layout; slots, the
//                                   makespan rule of the other plans (choose_splits, every block
//                                   slot); auto, sms where measured faster (one_block_per_sm_decode,
//                                   kernels/row_attention_launch.cuh), slots elsewhere.
//   DECODE_BENCH_ROW_PACKED_SPLIT=P  auto (default) | off: whether BF16 / FP8 row-attention blocks of
//                                   at most 8 rows at head dim 128 take the packed-split kernel (q and
//                                   P lo parts in rows 8..15 of one mma) or the two-mma kernel.
//   DECODE_BENCH_SP_PREFIX_SHARE=F  the share (0, 1] of the SMs an overlapped shared-prefix phase
//                                   is planned for (SharedPrefixOptions::overlap); 1: all of them;
//                                   unset: 1, 0.75 or 0.5 by shared_prefix_auto_share.
//   DECODE_BENCH_CARVEOUT=C         unset (default) | max: planning sets the preferred shared-memory
//                                   carveout of the row-attention and flash-decode kernels to the
//                                   most shared memory (cudaSharedmemCarveoutMaxShared). An
//                                   experiment on co-residency: two kernels whose SMs run different
//                                   L1 / shared splits may not share an SM (the shared-prefix phases).
//   DECODE_BENCH_ROW_STEAL=S        off | a share in (0, 1]: of each split item's tiles, the share the
//                                   splits of the tensor-core row attention's uniform grid take from a
//                                   counter (work stealing) once each has streamed its own static range
//                                   of the rest (FP16 / BF16 at head dim 128); unset: a quarter
//                                   for grouped decodes over paged K/V, none elsewhere.
// Sweeps record every DECODE_BENCH_* variable in meta.environment, so a slowed run says so.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/row_attention.hpp"

namespace decode_bench {

// The value of environment variable `name` among `choices` (text, value): `fallback` when it is
// unset or empty; any other text throws std::invalid_argument naming the variable, the text and the
// accepted texts.
template <class T>
T env_choice(const char* name, std::initializer_list<std::pair<const char*, T>> choices, T fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  std::string accepted;
  std::size_t i = 0;
  for (const auto& [choice, value] : choices) {
    if (std::string(choice) == text) return value;
    accepted += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choice);
    ++i;
  }
  throw std::invalid_argument(std::string(name) + "='" + text + "': must be " + accepted);
}

// The number in (0, max] environment variable `name` holds, or `fallback` when it is unset or
// empty; anything else throws std::invalid_argument naming the variable, the text and the range.
inline double env_number(const char* name, double max, const char* max_text, double fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(value) || !(value > 0) || value > max)
    throw std::invalid_argument(std::string(name) + "='" + text + "': must be a number in (0, " + max_text + "]");
  return value;
}

inline constexpr const char* kSplitScaleEnv = "DECODE_BENCH_FD_SPLIT_SCALE";

inline double flash_decode_split_scale() { return env_number(kSplitScaleEnv, 64, "64", 1.0); }

// The planner's split count after the scale: max(1, round(splits x scale)).
inline int scaled_splits(int splits, double scale) {
  return std::max(1, static_cast<int>(std::lround(splits * scale)));
}

enum class TilingOverride { automatic, standard, short_batch };
inline constexpr const char* kTilingEnv = "DECODE_BENCH_FD_TILING";
inline constexpr const char* kBalanceEnv = "DECODE_BENCH_FD_BALANCE";

inline TilingOverride flash_decode_tiling_override() {
  return env_choice(kTilingEnv,
                    {std::pair{"auto", TilingOverride::automatic}, std::pair{"standard", TilingOverride::standard},
                     std::pair{"short", TilingOverride::short_batch}},
                    TilingOverride::automatic);
}

enum class WorkChunksOverride { automatic, tiles, ranges };
inline constexpr const char* kWorkChunksEnv = "DECODE_BENCH_FD_WORK_CHUNKS";

inline WorkChunksOverride flash_decode_work_chunks_override() {
  return env_choice(kWorkChunksEnv,
                    {std::pair{"auto", WorkChunksOverride::automatic}, std::pair{"tiles", WorkChunksOverride::tiles},
                     std::pair{"ranges", WorkChunksOverride::ranges}},
                    WorkChunksOverride::automatic);
}

inline constexpr const char* kShortHeadsEnv = "DECODE_BENCH_FD_SHORT_HEADS";

inline int flash_decode_short_heads() {
  return env_choice(kShortHeadsEnv, {std::pair{"1", 1}, std::pair{"2", 2}, std::pair{"4", 4}}, 1);
}

inline constexpr const char* kRowTilingEnv = "DECODE_BENCH_ROW_TILING";

// The tiling DECODE_BENCH_ROW_TILING pins (automatic when unset).
inline RowAttentionTiling row_attention_tiling_override() {
  return env_choice(kRowTilingEnv,
                    {std::pair{"auto", RowAttentionTiling::automatic}, std::pair{"narrow", RowAttentionTiling::narrow},
                     std::pair{"wide", RowAttentionTiling::wide}, std::pair{"wgmma", RowAttentionTiling::wgmma}},
                    RowAttentionTiling::automatic);
}

inline constexpr const char* kRowWgmmaRowsEnv = "DECODE_BENCH_ROW_WGMMA_ROWS";

// The rows of a warpgroup-MMA block DECODE_BENCH_ROW_WGMMA_ROWS pins (64: one warpgroup, 128: two),
// or 0 when unset or auto (the planner's rule, plan_row_attention).
inline int row_wgmma_rows_override() {
  return env_choice(kRowWgmmaRowsEnv, {std::pair{"auto", 0}, std::pair{"64", 64}, std::pair{"128", 128}}, 0);
}

inline constexpr const char* kRowDecodeSplitsEnv = "DECODE_BENCH_ROW_DECODE_SPLITS";

enum class RowDecodeSplits { sms, slots };

// The split rule DECODE_BENCH_ROW_DECODE_SPLITS pins (`fallback` when unset or auto).
inline RowDecodeSplits row_decode_splits_override(RowDecodeSplits fallback) {
  return env_choice(kRowDecodeSplitsEnv,
                    {std::pair{"auto", fallback}, std::pair{"sms", RowDecodeSplits::sms},
                     std::pair{"slots", RowDecodeSplits::slots}},
                    fallback);
}

inline constexpr const char* kRowPackedSplitEnv = "DECODE_BENCH_ROW_PACKED_SPLIT";

// Whether DECODE_BENCH_ROW_PACKED_SPLIT leaves the packed-split kernel on (auto or unset).
inline bool row_packed_split_enabled() {
  return env_choice(kRowPackedSplitEnv, {std::pair{"auto", true}, std::pair{"off", false}}, true);
}

inline constexpr const char* kPrefixShareEnv = "DECODE_BENCH_SP_PREFIX_SHARE";

// The share DECODE_BENCH_SP_PREFIX_SHARE pins, or 0 when unset (the planner's rule decides:
// shared_prefix_auto_share, kernels/shared_prefix_share.hpp).
inline double shared_prefix_prefix_share() { return env_number(kPrefixShareEnv, 1, "1", 0.0); }

inline constexpr const char* kCarveoutEnv = "DECODE_BENCH_CARVEOUT";

// Whether DECODE_BENCH_CARVEOUT asks for the most shared memory on the decode kernels.
inline bool carveout_max_shared() {
  return env_choice(kCarveoutEnv, {std::pair{"default", false}, std::pair{"max", true}}, false);
}

inline constexpr const char* kRowStealEnv = "DECODE_BENCH_ROW_STEAL";

// The stolen share of a grouped decode over paged K/V when neither options nor
// DECODE_BENCH_ROW_STEAL pin one (plan_decode_rows, kernels/decode_dispatch.cuh). H100, 32 / 8
// heads, 1 x 64K (decode-row-probe, commit b6f0df5 against f9daa3b, two rounds each): paged FP16
// 98.9 / 98.9 us against 103.3 / 101.4 without stealing, BF16 99.6 / 100.0 against 100.7 / 100.3.
// Not taken elsewhere, by measurement:
//   contiguous K/V: slower, in proportion to the pool (FP16 97.2-98.4 us off, 104.8 at an eighth,
//     107.0 at a quarter, 111.7 at a half; BF16 alike). Taking two steps ahead instead of one
//     changed nothing (2ef3078 -> b6f0df5), so the take's latency is not the cause. A guess, not
//     profiled: pool tiles read by all of an item's blocks at once, in a narrow window of one
//     head's contiguous K/V, stream slower than static ranges 1 MiB apart;
//   the shared-prefix phase (narrow items of 16-64 rows: cascade N 16, and N 64 under MHA): the
//     24 cascade points that stole took 0.99-1.11x the time without (geomean 1.045; cascade preset,
//     commit b6f0df5, against DECODE_BENCH_ROW_STEAL=off in the same call).
inline constexpr double kRowStealDefault = 0.25;

// The stolen share DECODE_BENCH_ROW_STEAL pins: 0 for off, `fallback` when unset or empty.
inline double row_steal_pool(double fallback) {
  const char* text = std::getenv(kRowStealEnv);
  if (text != nullptr && std::string(text) == "off") return 0.0;
  try {
    return env_number(kRowStealEnv, 1, "1", fallback);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument(std::string(kRowStealEnv) + "='" + text + "': must be off or a number in (0, 1]");
  }
}

inline bool flash_decode_balance_enabled() {
  return env_choice(kBalanceEnv, {std::pair{"1", true}, std::pair{"0", false}}, true);
}

}  // namespace decode_bench
