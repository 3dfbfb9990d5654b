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
//                                   rows, narrow (4 warps x 1) for the rest; narrow pins 4 x 1
//                                   everywhere, wide takes 8 x 2 for every item of more than 16 rows.
//   DECODE_BENCH_SP_PREFIX_SHARE=F  the share (0, 1] of the SMs an overlapped shared-prefix phase
//                                   is planned for (SharedPrefixOptions::overlap); 1: all of them.
// Sweeps record every DECODE_BENCH_* variable in meta.environment, so a slowed run says so.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace decode_bench {

inline constexpr const char* kSplitScaleEnv = "DECODE_BENCH_FD_SPLIT_SCALE";

// Throws std::invalid_argument naming the variable when it is set but not a number in (0, 64].
inline double flash_decode_split_scale() {
  const char* text = std::getenv(kSplitScaleEnv);
  if (!text || !*text) return 1.0;
  char* end = nullptr;
  const double scale = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(scale) || !(scale > 0) || scale > 64)
    throw std::invalid_argument(std::string(kSplitScaleEnv) + "='" + text + "': must be a number in (0, 64]");
  return scale;
}

// The planner's split count after the scale: max(1, round(splits x scale)).
inline int scaled_splits(int splits, double scale) {
  return std::max(1, static_cast<int>(std::lround(splits * scale)));
}

enum class TilingOverride { automatic, standard, short_batch };
inline constexpr const char* kTilingEnv = "DECODE_BENCH_FD_TILING";
inline constexpr const char* kBalanceEnv = "DECODE_BENCH_FD_BALANCE";

// Throws std::invalid_argument naming the variable when it is set to anything else.
inline TilingOverride flash_decode_tiling_override() {
  const char* text = std::getenv(kTilingEnv);
  if (!text || !*text) return TilingOverride::automatic;
  const std::string t = text;
  if (t == "auto") return TilingOverride::automatic;
  if (t == "standard") return TilingOverride::standard;
  if (t == "short") return TilingOverride::short_batch;
  throw std::invalid_argument(std::string(kTilingEnv) + "='" + t + "': must be auto, standard or short");
}

enum class WorkChunksOverride { automatic, tiles, ranges };
inline constexpr const char* kWorkChunksEnv = "DECODE_BENCH_FD_WORK_CHUNKS";

// Throws std::invalid_argument naming the variable when it is set to anything else.
inline WorkChunksOverride flash_decode_work_chunks_override() {
  const char* text = std::getenv(kWorkChunksEnv);
  if (!text || !*text) return WorkChunksOverride::automatic;
  const std::string t = text;
  if (t == "auto") return WorkChunksOverride::automatic;
  if (t == "tiles") return WorkChunksOverride::tiles;
  if (t == "ranges") return WorkChunksOverride::ranges;
  throw std::invalid_argument(std::string(kWorkChunksEnv) + "='" + t + "': must be auto, tiles or ranges");
}

inline constexpr const char* kShortHeadsEnv = "DECODE_BENCH_FD_SHORT_HEADS";

// Throws std::invalid_argument naming the variable when it is set to anything but 1, 2 or 4.
inline int flash_decode_short_heads() {
  const char* text = std::getenv(kShortHeadsEnv);
  if (!text || !*text) return 1;
  const std::string t = text;
  if (t == "1" || t == "2" || t == "4") return t[0] - '0';
  throw std::invalid_argument(std::string(kShortHeadsEnv) + "='" + t + "': must be 1, 2 or 4");
}

enum class RowTilingOverride { automatic, narrow, wide };
inline constexpr const char* kRowTilingEnv = "DECODE_BENCH_ROW_TILING";

// Throws std::invalid_argument naming the variable when it is set to anything else.
inline RowTilingOverride row_attention_tiling_override() {
  const char* text = std::getenv(kRowTilingEnv);
  if (!text || !*text) return RowTilingOverride::automatic;
  const std::string t = text;
  if (t == "auto") return RowTilingOverride::automatic;
  if (t == "narrow") return RowTilingOverride::narrow;
  if (t == "wide") return RowTilingOverride::wide;
  throw std::invalid_argument(std::string(kRowTilingEnv) + "='" + t + "': must be auto, narrow or wide");
}

inline constexpr const char* kPrefixShareEnv = "DECODE_BENCH_SP_PREFIX_SHARE";

// Throws std::invalid_argument naming the variable when it is set but not a number in (0, 1].
inline double shared_prefix_prefix_share() {
  const char* text = std::getenv(kPrefixShareEnv);
  if (!text || !*text) return 1.0;
  char* end = nullptr;
  const double share = std::strtod(text, &end);
  if (end == text || *end != '\0' || !std::isfinite(share) || !(share > 0) || share > 1)
    throw std::invalid_argument(std::string(kPrefixShareEnv) + "='" + text + "': must be a number in (0, 1]");
  return share;
}

inline bool flash_decode_balance_enabled() {
  const char* text = std::getenv(kBalanceEnv);
  if (!text || !*text) return true;
  const std::string t = text;
  if (t == "1") return true;
  if (t == "0") return false;
  throw std::invalid_argument(std::string(kBalanceEnv) + "='" + t + "': must be 0 or 1");
}

}  // namespace decode_bench
