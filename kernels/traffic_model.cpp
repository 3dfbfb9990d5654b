#include "kernels/traffic_model.hpp"

#include <cmath>

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
                                         bool shared_once, int suffix_splits) {
  TrafficModel m;
  const double row = static_cast<double>(shape.head_dim) * dtype_bytes(kv_dtype) * shape.heads_kv;
  const double seqs = layout.num_seqs(), ps = layout.page_size;
  const double state_bytes = seqs * shape.heads_q * (shape.head_dim + 1) * 4.0;  // (o, lse) of every query head
  double unique = 0, logical = 0, unique_pages = 0, logical_pages = 0, level_rows = 0;
  for (const SharedLevel& l : layout.levels) {
    unique += static_cast<double>(l.token_end - l.token_begin);
    unique_pages += static_cast<double>(l.token_end - l.token_begin) / ps;
    level_rows += static_cast<double>(l.num_seqs) * shape.heads_q;
  }
  for (int s = 0; s < layout.num_seqs(); ++s) {
    const double own = static_cast<double>(layout.lengths[s] - layout.suffix_begin[s]);
    unique += own;
    unique_pages += std::ceil(own / ps);
    logical += layout.lengths[s];
    logical_pages += std::ceil(layout.lengths[s] / ps);
  }
  m.k_bytes = unique * row;
  m.v_bytes = m.k_bytes;
  m.q_bytes = seqs * shape.heads_q * shape.head_dim * 4.0;
  m.o_bytes = state_bytes;
  m.page_table_bytes = (shared_once ? unique_pages : logical_pages) * 4.0 + (seqs + 1) * 4.0;
  m.flops = 4.0 * logical * shape.heads_q * shape.head_dim;
  const double partials = suffix_splits > 1 ? 2.0 * suffix_splits * state_bytes : 0.0;
  if (shared_once) {
    const double level_states = level_rows * (shape.head_dim + 1) * 4.0;
    m.extra_bytes = 2.0 * level_states + 2.0 * state_bytes + partials;
  } else {
    m.extra_bytes = 2.0 * (logical - unique) * row + partials;
  }
  return m;
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
