#pragma once
// An MLA decode's traffic model (kernels/mla/mla_shape.hpp) in the form every point records
// (kernels/traffic_model.hpp), so GB/s, the roofline and the counter pass read it as any point's:
// the latent rows in k_bytes (a token's one row is its key and, its first kv_lora_rank values, its
// value: v_bytes stays 0), q, o and lse, the block table and FP8's scale; FLOPs 2 x rows x
// (key_dim + value_dim) per visible token.
#include <cstdint>
#include <vector>

#include "kernels/mla/mla_shape.hpp"
#include "kernels/traffic_model.hpp"

namespace decode_bench {

inline TrafficModel mla_point_traffic_model(const MlaShape& shape, DType dtype, const std::vector<std::int32_t>& lengths,
                                            const std::vector<std::int32_t>& pages_per_seq) {
  const MlaTrafficModel m = mla_traffic_model(shape, dtype, lengths, pages_per_seq);
  TrafficModel t;
  t.k_bytes = m.latent_bytes;
  t.q_bytes = m.q_bytes;
  t.o_bytes = m.o_bytes;
  t.page_table_bytes = m.page_table_bytes;
  t.scale_bytes = m.scale_bytes;
  t.flops = m.flops;
  return t;
}

}  // namespace decode_bench
