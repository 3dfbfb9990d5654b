#include "kernels/traffic_model.hpp"

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
