#pragma once
// The float64 MLA decode reference (kernels/mla/mla_shape.hpp): every stored latent value read as
// the cache holds it (times the accessor's scale), every product and sum in double. The ground
// truth the MLA kernels are verified against.
//   s_t   = softmax_scale x sum_{c < key_dim} q[c] latent_t[c]          (all 576: the key)
//   o[j]  = sum_t softmax(s)_t latent_t[j],  j < value_dim              (the first 512: the value)
//   lse   = log sum_t exp(s_t)   (natural log; -inf with no visible token, and o = 0)
#include <cstdint>

#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_shape.hpp"

namespace decode_bench {

// cache: one KV head of head_dim key_dim, K and V the same array (host memory). lengths: (batch).
// q: (batch, q_len, heads_q, key_dim); o: (batch, q_len, heads_q, value_dim); lse: (batch, q_len,
// heads_q) or nullptr. Instantiated for ContiguousKV and PagedKV of __half, __nv_bfloat16 and
// __nv_fp8_e4m3.
template <class KV>
void mla_reference(const MlaShape& shape, const KV& cache, int batch, const std::int32_t* lengths, const float* q,
                   double* o, double* lse);

}  // namespace decode_bench
