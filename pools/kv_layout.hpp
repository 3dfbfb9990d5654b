#pragma once
// What one token costs: H_kv rows of D elements of `dtype`, once for K and once for V.
// A model's L layers cost exactly as much as one layer with L * H_kv heads, so capacity folds
// layers into heads; a pool itself stores one layer (kernels run per layer).
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/dtype.hpp"

namespace decode_bench {

struct KVLayout {
  int heads_kv = 1;
  int head_dim = 128;
  DType dtype = DType::fp32;

  std::size_t element_bytes() const { return dtype_bytes(dtype); }
  std::size_t row_bytes() const { return head_dim * element_bytes(); }     // one (D) row
  std::size_t token_bytes() const { return heads_kv * row_bytes(); }       // K or V of one token
  std::size_t token_kv_bytes() const { return 2 * token_bytes(); }         // K and V of one token

  std::string invalid_reason() const {
    if (heads_kv < 1) return "heads_kv must be >= 1 (got " + std::to_string(heads_kv) + ")";
    if (head_dim < 1) return "head_dim must be >= 1 (got " + std::to_string(head_dim) + ")";
    return {};
  }
};

}  // namespace decode_bench
