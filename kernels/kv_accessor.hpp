#pragma once
// KV accessors: the only thing that differs between a contiguous and a paged cache. Kernels and
// the CPU reference are templated on them, so memory layout is the single variable under test.
// Both map (sequence, kv_head, token) to the element offset of that token's D-wide row; K and V
// share offsets and differ only in base pointer.
//
// Dequantization scales live here too: k_scale and v_scale point to (H_kv) floats, and the value
// of an element of head g is stored * k_scale[g] (or v_scale[g]). nullptr means 1 (FP32/FP16/BF16
// caches pass none; FP8 caches pass the per-head scales, or H_kv equal values for a per-tensor
// scale). They sit with the pointers they describe, in the memory space of those pointers (device
// for kernels, host for the reference), so every kernel and the reference that take an accessor
// get them without a signature change. kv_scale() reads one.
//
// Kernels must not call PagedKV::row_offset per element: they resolve a tile of row offsets once
// (one page-table load and one division per token) and then stream the rows (see
// kernels/flash_decode.cuh). row_offset is the definition the tile resolution has to match.
#include <cstdint>
#include <type_traits>

#include "kernels/host_device.hpp"

namespace decode_bench {

// K, V: (slots, H_kv, max_len, D). Sequence s lives in slot s; rows of one head are contiguous,
// so a head's whole history is one dense (max_len, D) matrix.
template <class T>
struct ContiguousKV {
  using value_type = T;
  const T* k = nullptr;
  const T* v = nullptr;
  std::int64_t slot_stride = 0;  // H_kv * max_len * D elements
  std::int64_t head_stride = 0;  // max_len * D elements
  int head_dim = 0;
  const float* k_scale = nullptr;  // (H_kv) or nullptr = 1
  const float* v_scale = nullptr;  // (H_kv) or nullptr = 1

  static ContiguousKV make(const T* k, const T* v, int heads_kv, std::int64_t max_len, int head_dim) {
    return {k, v, heads_kv * max_len * head_dim, max_len * head_dim, head_dim};
  }

  DB_HD std::int64_t row_offset(int seq, int kv_head, std::int64_t t) const {
    return seq * slot_stride + kv_head * head_stride + t * head_dim;
  }
};

// K, V: (num_pages, H_kv, page_size, D), the arena of fixed-size pages ("HND" within a page so a
// head's rows inside one page are contiguous). Sequence s owns the pages
// page_indices[indptr[s] .. indptr[s+1]) in token order (CSR block table); token t sits in page
// page_indices[indptr[s] + t / page_size] at slot t % page_size. Physical page order is arbitrary.
template <class T>
struct PagedKV {
  using value_type = T;
  const T* k = nullptr;
  const T* v = nullptr;
  const std::int32_t* page_indices = nullptr;  // (total pages referenced)
  const std::int32_t* indptr = nullptr;        // (num_seqs + 1)
  int page_size = 0;
  int heads_kv = 0;
  int head_dim = 0;
  const float* k_scale = nullptr;  // (H_kv) or nullptr = 1
  const float* v_scale = nullptr;  // (H_kv) or nullptr = 1

  DB_HD std::int64_t page_stride() const {
    return static_cast<std::int64_t>(heads_kv) * page_size * head_dim;
  }
  // Offset of (page, head, slot 0): the per-page base that tile resolution stages ahead of use.
  DB_HD std::int64_t page_head_offset(std::int32_t page, int kv_head) const {
    return page * page_stride() + static_cast<std::int64_t>(kv_head) * page_size * head_dim;
  }
  DB_HD std::int64_t row_offset(int seq, int kv_head, std::int64_t t) const {
    const std::int64_t logical_page = t / page_size;
    const std::int64_t slot = t - logical_page * page_size;
    const std::int32_t page = page_indices[indptr[seq] + logical_page];
    return page_head_offset(page, kv_head) + slot * head_dim;
  }
};

// The dequantization scale of KV head g from an accessor's k_scale or v_scale (nullptr = 1).
DB_HD float kv_scale(const float* scales, int g) { return scales == nullptr ? 1.f : scales[g]; }

// Whether an accessor reads the block table (the planners' layout-dependent choices).
template <class KV>
struct is_paged_accessor : std::false_type {};
template <class T>
struct is_paged_accessor<PagedKV<T>> : std::true_type {};

}  // namespace decode_bench
