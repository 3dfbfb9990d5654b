#include "kernels/traffic_model.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/variant_traffic_model.hpp"

namespace decode_bench {

TrafficModel decode_traffic_model(DecodeKernel kernel, const DecodeShape& shape, DType kv_dtype,
                                  const std::vector<std::int32_t>& lengths,
                                  const std::vector<std::int32_t>& pages_per_seq, int num_splits) {
  TrafficModel m;
  const double row = static_cast<double>(shape.head_dim) * dtype_bytes(kv_dtype);
  const double seqs = static_cast<double>(lengths.size());
  double tokens = 0;
  for (auto len : lengths) tokens += len;
  m.k_bytes = tokens * shape.heads_kv * row;
  m.v_bytes = m.k_bytes;
  m.q_bytes = seqs * shape.heads_q * shape.head_dim * 4.0;
  m.o_bytes = seqs * shape.heads_q * (shape.head_dim + 1) * 4.0;  // o and lse, fp32
  if (!pages_per_seq.empty()) {
    double pages = 0;
    for (auto p : pages_per_seq) pages += p;
    m.page_table_bytes = pages * 4.0 + (seqs + 1) * 4.0;  // int32 page indices + indptr
  }
  // One K and one V scale per KV head, read once (the same for every sequence of the batch).
  if (dtype_is_fp8(kv_dtype)) m.scale_bytes = 2.0 * shape.heads_kv * sizeof(float);
  m.flops = 4.0 * tokens * shape.heads_q * shape.head_dim;
  if (kernel == DecodeKernel::flash_decode && num_splits > 1) {
    // Each split writes a partial (o, lse) per query head; the merge reads them back.
    m.extra_bytes = 2.0 * num_splits * seqs * shape.heads_q * (shape.head_dim + 1) * 4.0;
  } else if (kernel == DecodeKernel::baseline) {
    // Scores written by stage 1, read + rewritten as weights by stage 2 (two passes: max, sum),
    // read once more by every output-dimension thread's block in stage 3.
    m.extra_bytes = tokens * shape.heads_q * 4.0 * 5.0;
  }
  return m;
}

TrafficModel shared_prefix_traffic_model(const DecodeShape& shape, DType kv_dtype, const SharedPrefixLayout& layout,
                                         bool shared_once, int suffix_splits, const AttentionVariant& variant) {
  TrafficModel m;
  const double row = static_cast<double>(shape.head_dim) * dtype_bytes(kv_dtype) * shape.heads_kv;
  const double seqs = layout.num_seqs(), ps = layout.page_size;
  const double rows = seqs * variant.q_len * shape.heads_q;               // query rows
  const double state_bytes = rows * (shape.head_dim + 1) * 4.0;           // (o, lse) of every query row
  double unique = 0, logical = 0, unique_pages = 0, logical_pages = 0, level_rows = 0, pairs = 0;
  // Where sequence s starts reading: 0, or its window's first position.
  const auto first_read = [&](int s) { return read_range(layout.lengths[s], variant).begin; };
  const auto pages_of = [&](std::int64_t begin, std::int64_t end) {  // pages covering [begin, end), end > begin
    return std::ceil(static_cast<double>(end) / ps) - std::floor(static_cast<double>(begin) / ps);
  };
  for (const SharedLevel& l : layout.levels) {
    // The level's tokens from the earliest window start among its sequences, read once; the rows of
    // the sequences that see any of it.
    std::int64_t lo = l.token_end;
    int seeing = 0;
    for (int s = l.first_seq; s < l.first_seq + l.num_seqs; ++s) {
      const std::int64_t b = std::max(l.token_begin, first_read(s));
      if (b >= l.token_end) continue;
      lo = std::min(lo, b);
      ++seeing;
    }
    if (seeing == 0) continue;
    unique += static_cast<double>(l.token_end - lo);
    unique_pages += pages_of(lo, l.token_end);
    level_rows += static_cast<double>(seeing) * variant.q_len * shape.heads_q;
  }
  for (int s = 0; s < layout.num_seqs(); ++s) {
    const std::int64_t len = layout.lengths[s], begin = first_read(s);
    const std::int64_t own_begin = std::max(layout.suffix_begin[s], begin);
    unique += static_cast<double>(len - own_begin);
    unique_pages += pages_of(own_begin, len);
    logical += static_cast<double>(len - begin);
    logical_pages += pages_of(begin, len);
    pairs += static_cast<double>(visible_token_pairs(len, variant));
  }
  m.k_bytes = unique * row;
  m.v_bytes = m.k_bytes;
  m.q_bytes = rows * shape.head_dim * 4.0 + (variant.sinks ? shape.heads_q * 4.0 : 0.0);
  m.o_bytes = state_bytes;
  m.page_table_bytes = (shared_once ? unique_pages : logical_pages) * 4.0 + (seqs + 1) * 4.0;
  m.flops = 4.0 * pairs * shape.heads_q * shape.head_dim;
  const double partials = suffix_splits > 1 ? 2.0 * suffix_splits * state_bytes : 0.0;
  if (shared_once) {
    const double level_states = level_rows * (shape.head_dim + 1) * 4.0;
    m.extra_bytes = 2.0 * level_states + 2.0 * state_bytes + partials;
  } else {
    m.extra_bytes = 2.0 * (logical - unique) * row + partials;
  }
  return m;
}

double shared_prefix_row_tokens(const SharedPrefixLayout& layout, const AttentionVariant& variant) {
  double tokens = 0;
  for (const SharedLevel& l : layout.levels)
    for (int s = l.first_seq; s < l.first_seq + l.num_seqs; ++s) {
      const std::int64_t b = std::max(l.token_begin, read_range(layout.lengths[s], variant).begin);
      tokens += static_cast<double>(std::max<std::int64_t>(0, l.token_end - b));
    }
  return tokens;
}

nlohmann::json TrafficModel::to_json(const char* model_name) const {
  return {{"name", model_name},
          {"bytes", minimum_bytes()},
          {"flops", flops},
          {"k_bytes", k_bytes},
          {"v_bytes", v_bytes},
          {"q_bytes", q_bytes},
          {"o_bytes", o_bytes},
          {"page_table_bytes", page_table_bytes},
          {"scale_bytes", scale_bytes},
          {"extra_bytes", extra_bytes},
          {"arithmetic_intensity", flops / minimum_bytes()}};
}

}  // namespace decode_bench
