#pragma once
// The K/V of a kernel test case (tests/decode_case.hpp, tests/row_attention_case.hpp): a
// contiguous host slab of `seqs` slots, random values or, for FP8, the generator's bytes
// (kernels/fp8_generator.hpp, through sweeps::fill_kv_host) with per-KV-head (or per-tensor)
// scales, for the tokens each sequence holds (noise past them); its paged twin over shuffled
// pages; and the device copy of either handed to the case's launch. The CPU reference reads the
// host slab through the host scales, the GPU reference a device copy of the slab and the kernels
// theirs through device scales.
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

// FP8: k, v, (seqs, H_kv, slot_len, D), get the generator's bytes for the tokens each sequence
// holds (the rest of each slot is left as it is), and the per-KV-head (or per-tensor) scales.
template <class Elem>
sweeps::KvScales fp8_case_data(std::vector<Elem>& k, std::vector<Elem>& v, const std::vector<std::int32_t>& lengths,
                               const DecodeShape& s, std::int64_t slot_len, std::uint64_t seed,
                               bool per_tensor_scale = false) {
  sweeps::KvScales scales;
  if constexpr (dtype_is_fp8(dtype_of<Elem>::value)) {
    Fp8Scales host = fp8_random_head_scales(dtype_of<Elem>::value, s.heads_kv, seed);
    if (per_tensor_scale) {
      host.k.assign(s.heads_kv, host.k[0]);
      host.v.assign(s.heads_kv, host.v[0]);
    }
    const std::size_t head = static_cast<std::size_t>(slot_len) * s.head_dim;
    std::vector<Elem> rows;  // (H_kv, len, D): fill_kv_host's layout, then into the slot's heads
    for (std::size_t b = 0; b < lengths.size(); ++b) {
      const std::size_t used = static_cast<std::size_t>(lengths[b]) * s.head_dim;
      rows.resize(static_cast<std::size_t>(s.heads_kv) * used);
      for (auto [out, is_v] : {std::pair{&k, false}, std::pair{&v, true}}) {
        sweeps::fill_kv_host<Elem>(std::span<Elem>(rows), is_v, seed, static_cast<int>(b), s.heads_kv, lengths[b],
                                   s.head_dim);
        for (int g = 0; g < s.heads_kv; ++g)
          std::copy_n(rows.begin() + g * used, used, out->begin() + (b * s.heads_kv + g) * head);
      }
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
    const std::size_t head = static_cast<std::size_t>(slot_len) * s.head_dim;
    const std::size_t slab = lengths.size() * s.heads_kv * head;
    k.resize(slab);
    v.resize(slab);
    // Fresh values for the tokens each sequence holds (FP8: the generator's, below), noise past them:
    // a ragged batch's slots are as long as its longest sequence, and mostly unread.
    for (std::size_t b = 0; b < lengths.size(); ++b)
      for (int g = 0; g < s.heads_kv; ++g)
        for (std::vector<Elem>* x : {&k, &v}) {
          const std::span<Elem> slot(x->data() + (b * s.heads_kv + g) * head, head);
          const std::size_t used = static_cast<std::size_t>(lengths[b]) * s.head_dim;
          if (!dtype_is_fp8(dtype_of<Elem>::value)) fill_random(slot.first(used), rng);
          fill_noise(slot.subspan(used));
        }
    scales = fp8_case_data<Elem>(k, v, lengths, s, slot_len, seed, per_tensor_scale);
    host = scales.attach(ContiguousKV<Elem>::make(k.data(), v.data(), s.heads_kv, slot_len, s.head_dim), false);
    if (page_size > 0) paged = scatter_batch_to_pages(host, lengths, s, page_size, rng);
  }

  // Uploads the slab and calls f(kv) with its device view and device scales (the GPU reference's input).
  template <class F>
  void on_device_slab(F&& f) const {
    DeviceBuffer<Elem> dk(k), dv(v);
    f(scales.attach(ContiguousKV<Elem>::make(dk.get(), dv.get(), shape.heads_kv, slot_len, shape.head_dim), true));
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
