#include "kernels/variant_traffic_model.hpp"

#include <algorithm>

namespace decode_bench {

std::int64_t visible_token_pairs(std::int64_t length, const AttentionVariant& variant) {
  std::int64_t pairs = 0;
  for (int i = 0; i < variant.q_len; ++i) {
    const VisibleRange r = visible_range(length, variant.q_len, i, variant.window);
    pairs += std::max<std::int64_t>(0, r.end - r.begin);
  }
  return pairs;
}

TrafficModel variant_traffic_model(const DecodeShape& shape, DType kv_dtype, const std::vector<std::int32_t>& lengths,
                                   int page_size, const AttentionVariant& variant) {
  TrafficModel m;
  const double row = static_cast<double>(shape.head_dim) * dtype_bytes(kv_dtype);
  const double seqs = static_cast<double>(lengths.size());
  double tokens = 0, pages = 0, pairs = 0;
  for (const std::int32_t len : lengths) {
    if (len <= 0) continue;
    const VisibleRange r = read_range(len, variant);
    tokens += static_cast<double>(r.end - r.begin);
    if (page_size > 0) pages += static_cast<double>((r.end - 1) / page_size - r.begin / page_size + 1);
    pairs += static_cast<double>(visible_token_pairs(len, variant));
  }
  const double rows = seqs * variant.q_len * shape.heads_q;  // query rows
  m.k_bytes = tokens * shape.heads_kv * row;
  m.v_bytes = m.k_bytes;
  m.q_bytes = rows * shape.head_dim * 4.0 + (variant.sinks ? shape.heads_q * 4.0 : 0.0);
  m.o_bytes = rows * (shape.head_dim + 1) * 4.0;  // o and lse, fp32
  if (page_size > 0) m.page_table_bytes = pages * 4.0 + (seqs + 1) * 4.0;
  if (dtype_is_fp8(kv_dtype)) m.scale_bytes = 2.0 * shape.heads_kv * sizeof(float);
  m.flops = 4.0 * pairs * shape.heads_q * shape.head_dim;
  return m;
}

}  // namespace decode_bench
