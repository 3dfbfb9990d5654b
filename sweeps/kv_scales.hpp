#pragma once
// The FP8 dequantization scales of a point's cache: per KV head for K and V (kernels/fp8_quantize.hpp),
// on the host for the reference and on the device for the kernels, and accessors with them
// attached. Empty (accessors unchanged) for FP32/FP16/BF16 storage.
#include <cstdint>
#include <utility>

#include "harness/device_buffer.hpp"
#include "kernels/dtype.hpp"
#include "kernels/fp8_quantize.hpp"

namespace decode_bench::sweeps {

struct KvScales {
  Fp8Scales host;
  DeviceBuffer<float> k, v;  // device copies of host.k, host.v

  // The sweep's per-KV-head scales for an FP8 dtype (fp8_random_head_scales, seeded), none otherwise.
  static KvScales for_point(DType dtype, int heads_kv, std::uint64_t seed) {
    KvScales s;
    if (dtype_is_fp8(dtype)) s.set(fp8_random_head_scales(dtype, heads_kv, seed));
    return s;
  }
  void set(Fp8Scales scales) {
    host = std::move(scales);
    k = DeviceBuffer<float>(host.k);
    v = DeviceBuffer<float>(host.v);
  }
  // kv with the device scales (for kernels) or the host ones (for the reference).
  template <class KV>
  KV attach(KV kv, bool device) const {
    if (host.k.empty()) return kv;
    kv.k_scale = device ? k.get() : host.k.data();
    kv.v_scale = device ? v.get() : host.v.data();
    return kv;
  }
};

}  // namespace decode_bench::sweeps
