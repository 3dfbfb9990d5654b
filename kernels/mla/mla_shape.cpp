#include "kernels/mla/mla_shape.hpp"

namespace decode_bench {

std::string MlaShape::invalid_reason() const {
  if (heads_q < 1) return "heads_q must be >= 1 (got " + std::to_string(heads_q) + ")";
  if (kv_lora_rank < 1) return "kv_lora_rank must be >= 1 (got " + std::to_string(kv_lora_rank) + ")";
  if (rope_dim < 0) return "rope_dim must be >= 0 (got " + std::to_string(rope_dim) + ")";
  if (q_len < 1) return "q_len must be >= 1 (got " + std::to_string(q_len) + ")";
  if (!(softmax_scale > 0) || !std::isfinite(softmax_scale)) return "softmax_scale must be a finite number > 0";
  return {};
}

nlohmann::json MlaTrafficModel::to_json() const {
  return {{"name", "mla_latent_once+q+o"},
          {"bytes", minimum_bytes()},
          {"latent_bytes", latent_bytes},
          {"q_bytes", q_bytes},
          {"o_bytes", o_bytes},
          {"page_table_bytes", page_table_bytes},
          {"scale_bytes", scale_bytes},
          {"flops", flops},
          {"arithmetic_intensity", arithmetic_intensity()}};
}

MlaTrafficModel mla_traffic_model(const MlaShape& s, DType dtype, const std::vector<std::int32_t>& lengths,
                                  const std::vector<std::int32_t>& pages_per_seq) {
  MlaTrafficModel m;
  const double row = static_cast<double>(mla_latent_token_bytes(s, dtype));
  const double rows = static_cast<double>(lengths.size()) * s.rows();
  for (const std::int32_t len : lengths) {
    m.latent_bytes += row * len;
    for (int i = 0; i < s.q_len; ++i)
      m.flops += 2.0 * s.heads_q * (s.key_dim() + s.value_dim()) * static_cast<double>(mla_visible_tokens(len, s.q_len, i));
  }
  m.q_bytes = rows * s.key_dim() * kMlaIoBytes;
  m.o_bytes = rows * (s.value_dim() * kMlaIoBytes + 4.0);  // o and its FP32 lse
  if (!pages_per_seq.empty()) {
    double pages = 0;
    for (const std::int32_t p : pages_per_seq) pages += p;
    m.page_table_bytes = 4.0 * (pages + static_cast<double>(pages_per_seq.size()) + 1);
  }
  if (dtype_is_fp8(dtype)) m.scale_bytes = 4.0;
  return m;
}

}  // namespace decode_bench
