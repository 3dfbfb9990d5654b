#pragma once
// FP8 data for the kernel test cases (tests/decode_case.hpp, tests/row_attention_case.hpp): the
// generator's bytes (kernels/fp8_generator.hpp, through sweeps::fill_kv_host) in each slot of a
// contiguous slab, and per-KV-head (or per-tensor) scales with a device copy. The reference reads
// the bytes through the host scales, the kernels through the device ones. Other storage types keep
// their data and get no scales.
#include <cstdint>
#include <span>
#include <vector>

#include "harness/device_buffer.hpp"
#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/fp8_quantize.hpp"
#include "sweeps/decode_fill.hpp"

namespace decode_bench::testing {

struct CaseScales {
  Fp8Scales host;  // empty for non-FP8 storage
  DeviceBuffer<float> k, v;

  template <class KV> KV on_host(KV kv) const {
    if (!host.k.empty()) {
      kv.k_scale = host.k.data();
      kv.v_scale = host.v.data();
    }
    return kv;
  }
  template <class KV> KV on_device(KV kv) const {
    if (!host.k.empty()) {
      kv.k_scale = k.get();
      kv.v_scale = v.get();
    }
    return kv;
  }
};

// k, v: `seqs` slots of (H_kv, slot_len, D) each.
template <class Elem>
CaseScales fp8_case_data(std::vector<Elem>& k, std::vector<Elem>& v, int seqs, const DecodeShape& s,
                         std::int64_t slot_len, std::uint64_t seed, bool per_tensor_scale = false) {
  CaseScales scales;
  if constexpr (dtype_is_fp8(dtype_of<Elem>::value)) {
    scales.host = fp8_random_head_scales(dtype_of<Elem>::value, s.heads_kv, seed);
    if (per_tensor_scale) {
      scales.host.k.assign(s.heads_kv, scales.host.k[0]);
      scales.host.v.assign(s.heads_kv, scales.host.v[0]);
    }
    const std::size_t per_slot = static_cast<std::size_t>(s.heads_kv) * slot_len * s.head_dim;
    for (int b = 0; b < seqs; ++b) {
      sweeps::fill_kv_host<Elem>(std::span<Elem>(k).subspan(b * per_slot, per_slot), false, seed, b, s.heads_kv,
                                 slot_len, s.head_dim);
      sweeps::fill_kv_host<Elem>(std::span<Elem>(v).subspan(b * per_slot, per_slot), true, seed, b, s.heads_kv,
                                 slot_len, s.head_dim);
    }
    scales.k = DeviceBuffer<float>(scales.host.k);
    scales.v = DeviceBuffer<float>(scales.host.v);
  }
  return scales;
}

}  // namespace decode_bench::testing
