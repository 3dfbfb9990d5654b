#pragma once
// Composable shared-prefix decode (FlashInfer's composable formats, arXiv 2501.01005): a batch whose
// sequences share prefix pages (kernels/shared_prefix_layout.hpp) decodes in three phases:
//   1. prefix phase (row attention, kernels/row_attention.hpp): per level and KV head one item
//      whose rows are the G query heads of every sequence sharing the level, over the level's
//      page-aligned token range; its K/V tiles are read once for all of those rows;
//   2. suffix phase (batch decode, kernels/decode_launch.hpp): each sequence over its own tokens
//      [suffix_begin, length), through a PagedKV whose indptr starts at the sequence's first own
//      page (the same page array, an offset indptr; no kernel change);
//   3. merge: per (sequence, query head) the decode state and each level's state by log-sum-exp
//      (kernels/attention_state.hpp), in place in o and lse.
// Phases 1 and 2 are independent: with two streams (fork/join events inside the launch) the
// compute-bound prefix phase overlaps the memory-bound suffix phase.
//
// plan_shared_prefix is host-only (outside timed regions); init_shared_prefix_workspace uploads
// the plan's metadata and zeroes what the sub-kernels need zeroed; run_shared_prefix only
// launches (stream-ordered, graph-capturable). Instantiated for PagedKV<T>, T in {float, __half,
// __nv_bfloat16, __nv_fp8_e4m3, __nv_fp8_e5m2} (FP8: the accessor's per-KV-head scales serve both
// phases).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/decode_launch.hpp"
#include "kernels/row_attention.hpp"
#include "kernels/shared_prefix_layout.hpp"

namespace decode_bench {

// q: (N, H_q, D) fp32; o: (N, H_q, D) and lse: (N, H_q) fp32, written (over each whole sequence).
//
// Attention variants (kernels/attention_variant.hpp; one query token a sequence), each exact under
// the log-sum-exp merge because each phase computes its part of the same softmax:
//   window w:  sequence b (L_b tokens) sees [L_b - w, L_b). The suffix phase takes the window as it
//              is: in its local positions (suffix of S_b tokens) S_b - w is L_b - w. The prefix
//              phase cuts each level at max(level start, L_b - w): sequences cut alike share items,
//              a level wholly before the window has no row for b and the merge skips it
//              (kernels/shared_prefix_metadata.hpp).
//   sinks:     in the suffix phase only: its lse includes the sink (log(e^z + sum)), so merging the
//              prefix states into it adds their terms to one denominator that holds the sink once.
//   soft-cap:  every score of both phases: the prefix phase runs the row kernel's variant twin with
//              the cap alone over the level items (q through the row map, as the plain phase),
//              FP16 / BF16 where that twin is compiled (head dims 80-128, BF16 16-64).
struct SharedPrefixProblem {
  DecodeShape shape;
  DType kv_dtype = DType::fp16;
  const float* q = nullptr;
  float* o = nullptr;
  float* lse = nullptr;
  RowAttentionVariant variant{};  // q_len 1; window, sinks (device, H_q) and soft-cap as above
};

struct SharedPrefixOptions {
  RowAttentionOptions prefix;  // its tuning is replaced by `tuning` below
  DecodeOptions suffix;        // likewise
  // The prefix phase will run beside the suffix phase (SharedPrefixStreams): its blocks fill whole
  // SMs (all registers), so planned for the whole GPU it leaves the suffix phase nothing to run on
  // until it drains. With overlap the prefix is planned for a share of the SMs (pinned by
  // tuning.sp_prefix_share, else shared_prefix_auto_share) unless prefix.max_blocks is set.
  bool overlap = false;
  // The knobs of the share rule and of both phases' plans (it replaces prefix.tuning and
  // suffix.tuning): the pinned share, and which DRAM rate the rule divides by (sp_share_dram: the
  // clock estimate, or measured_dram_read_bytes_per_s where it is set).
  TuningPolicy tuning{};
};

// Which DRAM rate the overlapped share rule divided by: none (the rule did not run: no overlap,
// no prefix, a pinned share or prefix.max_blocks), the clock estimate (2 x memory clock x bus
// width), or the run's measured dram_read ceiling.
enum class ShareDramSource { none, clock, measured };
constexpr std::string_view share_dram_source_name(ShareDramSource s) {
  return s == ShareDramSource::measured ? "measured" : s == ShareDramSource::clock ? "clock" : "none";
}

struct SharedPrefixPlan {
  bool has_prefix = false;     // false: no level (N = 1, or a prefix below one page): decode only
  int num_seqs = 0;
  int num_items = 0;           // levels x H_kv
  int num_rows = 0;            // sum over levels of num_seqs x H_q
  int max_depth = 0;           // levels per sequence at most (merge inputs besides the decode state)
  std::int64_t prefix_tokens = 0;       // sum over levels of the level's tokens (read once each per KV head)
  std::int64_t prefix_row_tokens = 0;   // sum over levels of tokens x sequences (the prefix FLOPs' factor)
  std::int64_t max_suffix_len = 0;
  double prefix_share = 1.0;            // overlap: the share of the SMs the prefix phase was planned for
  ShareDramSource share_dram = ShareDramSource::none;  // the rate the share rule took, and its value:
  double share_dram_bytes_per_s = 0;                   // 0 when the rule did not run
  std::int64_t max_item_tokens = 0;     // host-known bounds handed to the row-attention planner
  int max_item_rows = 0;
  RowAttentionPlan prefix;
  DecodePlan suffix;
  // Workspace: [metadata | level o (num_rows, D) | level lse (num_rows) | prefix ws | suffix ws].
  std::vector<std::byte> metadata;  // host image: items | row_q | merge_rows | suffix indptr | suffix lens
  std::size_t items_offset = 0, row_q_offset = 0, merge_rows_offset = 0, suffix_indptr_offset = 0,
              suffix_lens_offset = 0, level_o_offset = 0, level_lse_offset = 0, prefix_ws_offset = 0,
              suffix_ws_offset = 0;
  std::size_t workspace_bytes = 0;
};

// The events and second stream of an overlapped run (created by the caller, outlive the runs).
struct SharedPrefixStreams {
  cudaStream_t aux = nullptr;
  cudaEvent_t fork = nullptr;  // recorded on the launch stream, waited on by aux
  cudaEvent_t join = nullptr;  // recorded on aux after the suffix phase, waited on by the launch stream
};

// Why this batch cannot run on the compiled kernels, or nullopt.
std::optional<std::string> shared_prefix_unsupported_reason(const SharedPrefixProblem& problem,
                                                            const SharedPrefixLayout& layout);

// `full`: the batch's paged view (sequence s = batch index s, block table from token 0; only its
// page array and the page geometry are used: the plan builds its own indptrs from layout.lengths).
template <class T>
cudaError_t plan_shared_prefix(const PagedKV<T>& full, const SharedPrefixProblem& problem,
                               const SharedPrefixLayout& layout, const SharedPrefixOptions& options,
                               SharedPrefixPlan* plan);

// Uploads the plan's metadata into the workspace and zeroes the sub-kernels' counters. Call once
// per fresh (or poisoned) workspace, outside timed regions; `plan` must stay alive until the
// stream reaches this point (the upload reads its host image).
cudaError_t init_shared_prefix_workspace(const SharedPrefixPlan& plan, void* workspace, cudaStream_t stream);

// Launches the three phases on `stream`; with `overlap` the suffix phase runs on overlap->aux,
// concurrently with the prefix phase (enqueued first, so dispatched first), joined before the merge.
template <class T>
cudaError_t run_shared_prefix(const PagedKV<T>& full, const SharedPrefixProblem& problem, const SharedPrefixPlan& plan,
                              void* workspace, cudaStream_t stream, const SharedPrefixStreams* overlap);

// Phase 3 alone: o, lse (num_states, D) / (num_states) hold the decode states and are merged in
// place with level_o / level_lse rows merge_rows[depth * num_states + i] (-1: no level at that depth).
cudaError_t launch_merge_level_states(float* o, float* lse, const float* level_o, const float* level_lse,
                                      const std::int32_t* merge_rows, int max_depth, int num_states, int head_dim,
                                      cudaStream_t stream);

}  // namespace decode_bench
