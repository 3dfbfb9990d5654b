#pragma once
// The minimum traffic of a decode with attention variants (kernels/attention_variant.hpp), counted
// from their definitions (docs/results.md, the point's `model`):
//   K, V:        the rows of the tokens some query token of the sequence sees (read_range): with a
//                window, the last window + q_len - 1 positions, not the whole cache;
//   page table:  paged, the entries of the pages covering those tokens, and the indptr;
//   q, o:        q_len rows per sequence and query head (o with its lse); the sink logits (one fp32
//                per query head) count with q;
//   FLOPs:       4 D per visible (query token, query head, cache token): q_len multiplies them on
//                the same K/V bytes. The soft-cap's tanh, like the softmax's exp, is not counted.
// At the plain variant it equals decode_traffic_model's minimum (extra_bytes 0).
#include <cstdint>
#include <vector>

#include "kernels/attention_variant.hpp"
#include "kernels/traffic_model.hpp"

namespace decode_bench {

// page_size 0: a contiguous layout (no page table).
TrafficModel variant_traffic_model(const DecodeShape& shape, DType kv_dtype, const std::vector<std::int32_t>& lengths,
                                   int page_size, const AttentionVariant& variant);

// The cache positions query token i of every sequence sees, summed over the q_len tokens: the FLOP
// count's token term for one sequence of `length` tokens.
std::int64_t visible_token_pairs(std::int64_t length, const AttentionVariant& variant);

}  // namespace decode_bench
