#pragma once
// One decode-attention problem as the measurement pipeline hands it to a backend
// (harness/backend.hpp): the shapes, where the data lives, and what the point asks for. Plain data:
// the pipeline (sweeps/point_pipeline.hpp) fills it, a backend only reads it and frees nothing.
//
// B = batch, H_q = heads_q, H_kv = heads_kv, D = head_dim; query head h reads KV head h / (H_q / H_kv).
//   q:   (B, H_q, D)  io_dtype, read             o: (B, H_q, D) io_dtype, written by Backend::run
//   lse: (B, H_q)     fp32, written: the log-sum-exp of the scaled scores (scores are q.k / sqrt(D),
//                     DecodeShape::softmax_scale), natural log or, where Backend::lse_base says
//                     so, base 2 (the pipeline converts it outside timing).
//   K, V, by `layout` (the accessors of kernels/kv_accessor.hpp, type-erased: T = void; typed_kv
//   below gives them their storage type kv_dtype):
//     contiguous: (slots, H_kv, max_len, D); sequence b is slot b (ContiguousKV)
//     paged:      (pages, H_kv, page_size, D); sequence b owns pages page_indices[indptr[b] ..
//                 indptr[b + 1]) in token order, token t at slot t % page_size of its page (PagedKV)
//     FP8 kv_dtype: the accessor's k_scale / v_scale, (H_kv) fp32 each in device memory: an element
//     of KV head g is stored x scale[g]; null (every other dtype) means 1.
//   seq_lens (B) int32: tokens of each sequence; last_page_len (B) int32, paged: tokens in its last
//   page (page_size for a full one, 0 for an empty sequence). Device arrays, with host copies below.
// A shared-prefix batch (prefix_len > 0) also carries its levels (kernels/shared_prefix_layout.hpp):
// which page-aligned token ranges which sequences hold in the same pages. kernel = shared_prefix
// asks to read each level once; kernel = batch_decode asks for the plain decode of the same pages.
//
// Device pointers are null while the problem is only described (Backend::supports): then shapes,
// dtypes, layout, page size, host lengths, host CSR, levels and requests are set, memory is not.
#include <cstdint>
#include <optional>
#include <vector>

#include "harness/kernel_kind.hpp"
#include "kernels/attention_variant.hpp"
#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_shape.hpp"
#include "kernels/shared_prefix_layout.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {

enum class KvLayoutKind { contiguous, paged };

struct AttentionProblem {
  // What to compute: the point's `kernel` (baseline, flash_decode, batch_decode or shared_prefix).
  KernelKind kernel = KernelKind::flash_decode;
  DecodeShape shape;  // heads_q, heads_kv, head_dim
  int batch = 0;      // B
  DType kv_dtype = DType::fp16;

  KvLayoutKind layout = KvLayoutKind::contiguous;
  ContiguousKV<void> contiguous;  // layout contiguous: k, v, strides, head_dim, scales
  PagedKV<void> paged;            // layout paged: k, v, page_indices, indptr (device), page_size,
                                  // heads_kv, head_dim, scales
  const std::int32_t* seq_lens = nullptr;       // (B) device
  const std::int32_t* last_page_len = nullptr;  // (B) device, paged only
  std::int64_t max_len = 0;                     // longest sequence
  std::vector<std::int32_t> host_seq_lens;      // (B)
  std::vector<std::int32_t> host_indptr;        // (B + 1), paged only
  std::vector<std::int32_t> host_last_page_len; // (B), paged only

  std::optional<SharedPrefixLayout> prefix;  // a shared-prefix batch's levels; empty otherwise

  // Requests of the point a backend honours or refuses in supports(), never ignores:
  int splits = 0;               // `blocks`: split-K blocks per (sequence, KV head block); 0 = the backend's choice
  bool prefix_overlap = true;   // shared_prefix: the prefix phase on a second stream beside the suffix phase
  // The attention variants (kernels/attention_variant.hpp): q_len query tokens per sequence (q and o
  // then hold (B, q_len, H_q, D), lse (B, q_len, H_q)), a sliding window, sinks (their logits in
  // `sinks`, (H_q) fp32 device, drawn by sink_logits from the point's seed) and a logit soft-cap. A
  // backend without a path for a requested variant refuses it in supports(), naming it.
  AttentionVariant variant{};
  const float* sinks = nullptr;

  // attention mla (kernels/mla/mla_shape.hpp): set for a multi-head latent attention point, whose
  // latent cache is the K/V above as one KV head of head_dim key_dim (576), K and V the same array
  // (FP8: one scale, k_scale = v_scale); shape is (heads_q, 1, key_dim) and variant.q_len is
  // mla->q_len. q: (B, q_len, H_q, key_dim), o: (B, q_len, H_q, value_dim), lse (B, q_len, H_q). A
  // backend without an MLA path refuses it in supports().
  std::optional<MlaShape> mla;

  // How the run plans, for the decode-bench backend's planners (other backends have no such knobs):
  // the sweep's tuning policy (kernels/tuning_policy.hpp, parsed once from the environment) with
  // the run's measured DRAM read ceiling in measured_dram_read_bytes_per_s (0: none measured).
  TuningPolicy tuning{};

  DType io_dtype = DType::fp32;  // of q and o (Backend::io_dtype; the pipeline converts outside timing)
  bool denominator_sums_rounded_weights = false;  // Backend's, for the verifier's lse bound
  const void* q = nullptr;       // (B, H_q, D) device
  void* o = nullptr;             // (B, H_q, D) device
  float* lse = nullptr;          // (B, H_q) device
};

// The accessors with their storage type, and back.
template <class T>
ContiguousKV<T> typed_kv(const ContiguousKV<void>& kv) {
  return {static_cast<const T*>(kv.k), static_cast<const T*>(kv.v), kv.slot_stride, kv.head_stride, kv.head_dim,
          kv.k_scale, kv.v_scale};
}
template <class T>
PagedKV<T> typed_kv(const PagedKV<void>& kv) {
  return {static_cast<const T*>(kv.k), static_cast<const T*>(kv.v), kv.page_indices, kv.indptr, kv.page_size,
          kv.heads_kv, kv.head_dim, kv.k_scale, kv.v_scale};
}
template <class T>
ContiguousKV<void> erased_kv(const ContiguousKV<T>& kv) {
  return {kv.k, kv.v, kv.slot_stride, kv.head_stride, kv.head_dim, kv.k_scale, kv.v_scale};
}
template <class T>
PagedKV<void> erased_kv(const PagedKV<T>& kv) {
  return {kv.k, kv.v, kv.page_indices, kv.indptr, kv.page_size, kv.heads_kv, kv.head_dim, kv.k_scale, kv.v_scale};
}

}  // namespace decode_bench
