#pragma once
// The K/V of a kernel test case (tests/decode_case.hpp, tests/row_attention_case.hpp): a
// contiguous host slab of `seqs` slots, random values or, for FP8, the generator's bytes
// (kernels/fp8_generator.hpp, through sweeps::fill_kv_host) with per-KV-head (or per-tensor)
// scales; its paged twin over shuffled pages; and the device copy of either handed to the case's
// launch. The reference reads the host slab through the host scales, the kernels the device copy
// through device scales.
#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "harness/device_buffer.hpp"
#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/fp8_quantize.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/kv_scales.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench::testing {

// f(Elem{}) for the storage element type of `dtype` (float, __half, __nv_bfloat16, FP8), the one
// switch from a run-time dtype to the typed case runners; `unknown` for a dtype without one.
template <class R, class F>
R with_storage_element(DType dtype, F&& f, R unknown) {
  switch (dtype) {
    case DType::fp32: return f(float{});
    case DType::fp16: return f(__half{});
    case DType::bf16: return f(__nv_bfloat16{});
    case DType::fp8_e4m3: return f(__nv_fp8_e4m3{});
    case DType::fp8_e5m2: return f(__nv_fp8_e5m2{});
  }
  return unknown;
}

// k, v: `seqs` slots of (H_kv, slot_len, D) each.
template <class Elem>
sweeps::KvScales fp8_case_data(std::vector<Elem>& k, std::vector<Elem>& v, int seqs, const DecodeShape& s,
                         std::int64_t slot_len, std::uint64_t seed, bool per_tensor_scale = false) {
  sweeps::KvScales scales;
  if constexpr (dtype_is_fp8(dtype_of<Elem>::value)) {
    Fp8Scales host = fp8_random_head_scales(dtype_of<Elem>::value, s.heads_kv, seed);
    if (per_tensor_scale) {
      host.k.assign(s.heads_kv, host.k[0]);
      host.v.assign(s.heads_kv, host.v[0]);
    }
    const std::size_t per_slot = static_cast<std::size_t>(s.heads_kv) * slot_len * s.head_dim;
    for (int b = 0; b < seqs; ++b) {
      sweeps::fill_kv_host<Elem>(std::span<Elem>(k).subspan(b * per_slot, per_slot), false, seed, b, s.heads_kv,
                                 slot_len, s.head_dim);
      sweeps::fill_kv_host<Elem>(std::span<Elem>(v).subspan(b * per_slot, per_slot), true, seed, b, s.heads_kv,
                                 slot_len, s.head_dim);
    }
    scales.set(std::move(host));
  }
  return scales;
}

template <class Elem>
struct CaseKv {
  DecodeShape shape;
  std::int64_t slot_len = 1;  // tokens per slot: the longest sequence, at least 1
  int page_size = 0;          // 0: contiguous
  std::vector<Elem> k, v;     // (seqs, H_kv, slot_len, D) each
  sweeps::KvScales scales;
  ContiguousKV<Elem> host;    // the slab, scales attached: what the reference reads
  PagedSeq<Elem> paged;       // page_size > 0: the same rows over shuffled pages

  CaseKv(const DecodeShape& s, const std::vector<std::int32_t>& lengths, int page_size_, std::uint64_t seed,
         bool per_tensor_scale, std::mt19937_64& rng)
      : shape(s),
        slot_len(std::max<std::int64_t>(*std::max_element(lengths.begin(), lengths.end()), 1)),
        page_size(page_size_) {
    const int seqs = static_cast<int>(lengths.size());
    const std::size_t slab = static_cast<std::size_t>(seqs) * s.heads_kv * slot_len * s.head_dim;
    k = random_values<Elem>(slab, rng);
    v = random_values<Elem>(slab, rng);
    scales = fp8_case_data<Elem>(k, v, seqs, s, slot_len, seed, per_tensor_scale);
    host = scales.attach(ContiguousKV<Elem>::make(k.data(), v.data(), s.heads_kv, slot_len, s.head_dim), false);
    if (page_size > 0) paged = scatter_batch_to_pages(host, lengths, s, page_size, rng);
  }

  // Uploads the paged twin (page_size > 0) or the slab and calls launch(kv) with the device view.
  template <class Launch>
  void on_device(Launch&& launch) const {
    if (page_size > 0) {
      DeviceBuffer<Elem> dk(paged.k), dv(paged.v);
      DeviceBuffer<std::int32_t> pages(paged.page_indices.empty() ? std::vector<std::int32_t>{0} : paged.page_indices),
          indptr(paged.indptr);
      launch(scales.attach(
          PagedKV<Elem>{dk.get(), dv.get(), pages.get(), indptr.get(), page_size, shape.heads_kv, shape.head_dim}, true));
    } else {
      DeviceBuffer<Elem> dk(k), dv(v);
      launch(scales.attach(ContiguousKV<Elem>::make(dk.get(), dv.get(), shape.heads_kv, slot_len, shape.head_dim), true));
    }
  }
};

}  // namespace decode_bench::testing
