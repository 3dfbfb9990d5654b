#pragma once
// What a decode kernel must move and compute, counted before it runs. The harness divides
// `minimum_bytes()` by the measured time for GB/s (the minimum traffic: K + V + Q + O +
// page-table bytes, plus the dequantization scales of an FP8 cache; K and V count dtype_bytes per
// element, so one byte for FP8), and reports the kernel's own extra traffic (split-K partials, the baseline's
// score vector) beside it, never inside it.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/attention_variant.hpp"
#include "kernels/decode_problem.hpp"
#include "kernels/shared_prefix_layout.hpp"

namespace decode_bench {

struct TrafficModel {
  double k_bytes = 0, v_bytes = 0;        // every cached token's K and V row, read once
  double q_bytes = 0, o_bytes = 0;        // q read; o and lse written
  double page_table_bytes = 0;            // block-table entries and indptr (paged only)
  double scale_bytes = 0;                 // FP8: the per-KV-head K and V dequantization scales (fp32)
  double extra_bytes = 0;                 // kernel-specific intermediates (partials, scores)
  double flops = 0;                       // 2 T D (scores) + 2 T D (weighted V), per query head

  double minimum_bytes() const { return k_bytes + v_bytes + q_bytes + o_bytes + page_table_bytes + scale_bytes; }
  nlohmann::json to_json(const char* model_name) const;
};

// lengths: tokens per sequence (host copy). pages_per_seq empty for contiguous layouts.
// num_splits: split-K blocks per (sequence, KV head) for flash_decode; ignored for baseline.
TrafficModel decode_traffic_model(DecodeKernel kernel, const DecodeShape& shape, DType kv_dtype,
                                  const std::vector<std::int32_t>& lengths,
                                  const std::vector<std::int32_t>& pages_per_seq, int num_splits);

// A batch whose sequences share prefix pages (kernels/shared_prefix_layout.hpp). The minimum counts
// every stored token once: each shared level once, each sequence's own tokens once (so a shared
// prefix's bytes count once, whoever reads it). FLOPs as for decode: 4 (P + S) D per query head.
//   shared_once = true:  the composed shared-prefix kernels; extra = the level states written by the
//                        prefix phase and read by the merge, the decode states re-read and rewritten
//                        by the merge, and the suffix phase's split-K partials;
//   shared_once = false: a plain batch decode over the same pages; extra = the shared tokens it reads
//                        again for every further sequence, and its split-K partials.
// suffix_splits: split-K blocks of the decode (1: none).
// An attention variant (kernels/attention_variant.hpp) counts only what some query token sees
// (read_range): sequence b reads [L_b - window, L_b) with a window; a level counts once from the
// earliest window start among its sequences (its rows: the sequences whose window reaches into it),
// each sequence's own tokens from max(suffix_begin, its window start), pages those ranges cover;
// FLOPs 4 D per visible (query token, query head, token) pair; q_len query rows of q, o and lse, and
// the sink logits with q. At the plain variant: the counts above.
TrafficModel shared_prefix_traffic_model(const DecodeShape& shape, DType kv_dtype, const SharedPrefixLayout& layout,
                                         bool shared_once, int suffix_splits, const AttentionVariant& variant = {});

// The prefix FLOPs' token factor of the composed kernels: over every level, the tokens of the level
// inside each sequence's window (read_range), summed over the sequences that share it.
double shared_prefix_row_tokens(const SharedPrefixLayout& layout, const AttentionVariant& variant = {});

}  // namespace decode_bench
