#pragma once
// The tuning policy of this project's own planners: every knob they follow, in one object.
//
// The knobs are environment variables, for experiments that must keep every point's id (a
// `--set blocks=...` changes the ids, so `decode-bench compare` could not pair the points). A sweep
// parses them once, when it starts (tuning_policy_from_environment; a bad value or an unknown
// DECODE_BENCH_FD_* / _ROW_* / _SP_* / _MLA_* / _MERGE_* name is refused, exit 2), and hands the object to the
// planners through their options (DecodeOptions, RowAttentionOptions, SharedPrefixOptions
// ::tuning); nothing under kernels/ reads the environment. A default-constructed policy is every
// knob at its default. Sweeps record every DECODE_BENCH_* variable in meta.environment, so a run
// under a knob says so.
//
// tuning_knobs() is the one list of the knobs (name, accepted values, default, meaning): the parser
// reads it, `decode-bench list knobs` prints it, and docs/kernels.md holds its markdown between
// generated markers (scripts/knob_docs.py; ctest docs.knobs checks it against the binary).
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/mla/mla_kernel.hpp"
#include "kernels/row_attention_tiling.hpp"
#include "kernels/row_merge_model.hpp"

namespace decode_bench {

enum class TilingOverride { automatic, standard, short_batch, deep };  // the CUDA-core tiling at groups 1-2
enum class WorkChunksOverride { automatic, tiles, ranges };      // automatic = tiles
// Which family runs an attention variant that the CUDA-core twins take (kernels/flash_decode_variant.hpp).
enum class VariantPathOverride { automatic, tensor_core };
enum class RowDecodeSplits { automatic, sms, slots };            // the grouped-decode split rule
// The DRAM rate the shared-prefix share rule divides by (kernels/shared_prefix_share.hpp).
enum class ShareDramRate { clock, measured };

struct TuningPolicy {
  double fd_split_scale = 1.0;                                        // DECODE_BENCH_FD_SPLIT_SCALE
  TilingOverride fd_tiling = TilingOverride::automatic;               // DECODE_BENCH_FD_TILING
  bool fd_balance = true;                                             // DECODE_BENCH_FD_BALANCE
  WorkChunksOverride fd_work_chunks = WorkChunksOverride::automatic;  // DECODE_BENCH_FD_WORK_CHUNKS
  int fd_short_heads = 1;                                             // DECODE_BENCH_FD_SHORT_HEADS
  bool fd_short_seq = true;                                           // DECODE_BENCH_FD_SHORT_SEQ (off: false)
  int fd_short_max_len = 0;  // DECODE_BENCH_FD_SHORT_MAX_LEN: 64 or 128; 0: auto (decode_prefers_short)
  VariantPathOverride fd_variant_path = VariantPathOverride::automatic;  // DECODE_BENCH_FD_VARIANT_PATH
  RowAttentionTiling row_tiling = RowAttentionTiling::automatic;      // DECODE_BENCH_ROW_TILING
  int row_wgmma_rows = 0;                                             // DECODE_BENCH_ROW_WGMMA_ROWS; 0: auto
  int row_wgmma_tile = 0;  // DECODE_BENCH_ROW_WGMMA_TILE: the d 64 two-warpgroup blocks' tile, 64 or 128; 0: auto
  bool row_host_length = true;  // DECODE_BENCH_ROW_HOST_LENGTH (off: false): equal host lengths as a kernel argument
  int row_stream = 0;  // DECODE_BENCH_ROW_STREAM: 0 auto, -1 off, n > 0 items a block (stream_grid_blocks)
  RowDecodeSplits row_decode_splits = RowDecodeSplits::automatic;     // DECODE_BENCH_ROW_DECODE_SPLITS
  bool row_packed_split = true;                                       // DECODE_BENCH_ROW_PACKED_SPLIT
  std::optional<double> row_steal;  // DECODE_BENCH_ROW_STEAL: 0 off, (0, 1] a share; unset: the planner's
  RowMergeMode row_merge = RowMergeMode::automatic;                   // DECODE_BENCH_ROW_MERGE
  bool row_cluster_merge = true;  // DECODE_BENCH_ROW_CLUSTER_MERGE (off: false): split merges in a cluster
  double sp_prefix_share = 0;       // DECODE_BENCH_SP_PREFIX_SHARE: (0, 1]; 0: the rule decides
  bool carveout_max_shared = false;                                   // DECODE_BENCH_CARVEOUT
  ShareDramRate sp_share_dram = ShareDramRate::clock;                 // DECODE_BENCH_SP_SHARE_DRAM
  int mla_tile = 0;  // DECODE_BENCH_MLA_TILE: the warpgroup-MMA MLA kernel's tile, 64 or 32; 0: auto
  // DECODE_BENCH_MLA_KERNEL: the MLA kernel pinned; none: the dispatch (kernels/mla/mla_decode_wgmma.hpp).
  std::optional<MlaKernel> mla_kernel;
  bool merge_pdl = true;  // DECODE_BENCH_MERGE_PDL (off: false): split merges as dependent launches
  bool mla_fused_merge = false;  // DECODE_BENCH_MLA_FUSED_MERGE (on: true): the wgmma MLA kernel's merge folded in
  bool mla_cluster_merge = true;  // DECODE_BENCH_MLA_CLUSTER_MERGE (off: false): its splits merged in a cluster
  bool mla_spread_merge = true;   // DECODE_BENCH_MLA_SPREAD_MERGE (off: false): its merge spread over its splits
  // Not a knob: the run's measured DRAM read ceiling (ceilings.dram_read) in bytes/s, set by the
  // sweep for each point (sweeps/point_pipeline.cpp); 0: none measured.
  double measured_dram_read_bytes_per_s = 0;

  bool operator==(const TuningPolicy&) const = default;
};

struct TuningKnob {
  std::string_view name;          // the environment variable
  std::string_view accepted;      // its values, e.g. "auto | standard | short"
  std::string_view default_text;  // the value unset (or empty) means
  std::string_view meaning;       // one line
  // Sets the knob's field from `text`; false when the text is not among the accepted values.
  bool (*apply)(TuningPolicy& policy, std::string_view text);
};

// Every knob, in the order `decode-bench list knobs` prints them.
std::span<const TuningKnob> tuning_knobs();

// A refused environment: one line per bad variable, "NAME='value': accepted: ...", or
// "NAME: not a planner knob (...)".
class TuningPolicyError : public std::invalid_argument {
 public:
  explicit TuningPolicyError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const { return problems_; }

 private:
  std::vector<std::string> problems_;
};

// The policy that the DECODE_BENCH_* variables in `environment` (name -> value) describe; unset or
// empty knobs keep their defaults. Throws TuningPolicyError listing every bad value, and every
// name under DECODE_BENCH_FD_, DECODE_BENCH_ROW_, DECODE_BENCH_SP_ or DECODE_BENCH_MLA_ that is no
// knob (a typo would
// otherwise leave the run at the default it meant to change).
TuningPolicy parse_tuning_policy(const std::map<std::string, std::string>& environment);
// The same over this process's environment.
TuningPolicy tuning_policy_from_environment();

// The knob table as `decode-bench list knobs` prints it: aligned text, or a markdown table.
std::string format_tuning_knobs(bool markdown);

// The planner's split count after DECODE_BENCH_FD_SPLIT_SCALE: max(1, round(splits x scale)).
int scaled_splits(int splits, double scale);

// The stolen share of a grouped decode over paged K/V when neither options nor
// DECODE_BENCH_ROW_STEAL pin one (plan_decode_rows, kernels/decode_dispatch.cuh). Taken there
// because it measured faster on an H100 (32 / 8 heads, FP16 and BF16, decode-row-probe), and not
// elsewhere because it measured slower: over contiguous K/V (in proportion to the stolen share)
// and in the shared-prefix phase (the cascade preset against DECODE_BENCH_ROW_STEAL=off in the same
// call). The numbers and commits: docs/history/kernel-notes.md, "Work stealing among a split item's
// blocks".
inline constexpr double kRowStealDefault = 0.25;

}  // namespace decode_bench
