#pragma once
// Test data: fresh random K/V/q (never zeros) in host memory, viewable through both accessors.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/kv_accessor.hpp"

namespace decode_bench::testing {

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& rng, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<T> out(n);
  for (auto& x : out) x = from_float<T>(dist(rng));
  return out;
}

// One sequence of length T in a contiguous slab: K, V: (1, H_kv, T, D).
template <class T>
struct ContiguousSeq {
  std::vector<T> k, v;
  ContiguousKV<T> view(const DecodeShape& s, std::int64_t len) const {
    return ContiguousKV<T>::make(k.data(), v.data(), s.heads_kv, len, s.head_dim);
  }
};

template <class T>
ContiguousSeq<T> random_contiguous(const DecodeShape& s, std::int64_t len, std::mt19937_64& rng) {
  const std::size_t n = static_cast<std::size_t>(s.heads_kv) * len * s.head_dim;
  return {random_values<T>(n, rng), random_values<T>(n, rng)};
}

// The same logical sequence scattered over pages in a random physical order:
// K, V: (num_pages, H_kv, page_size, D); the block table is a permutation.
template <class T>
struct PagedSeq {
  std::vector<T> k, v;
  std::vector<std::int32_t> page_indices, indptr;
  int page_size = 0;
  PagedKV<T> view(const DecodeShape& s) const {
    return {k.data(), v.data(), page_indices.data(), indptr.data(), page_size, s.heads_kv, s.head_dim};
  }
};

template <class T>
PagedSeq<T> scatter_to_pages(const ContiguousSeq<T>& src, const DecodeShape& s, std::int64_t len, int page_size,
                             std::mt19937_64& rng) {
  PagedSeq<T> out;
  out.page_size = page_size;
  const std::int64_t pages = (len + page_size - 1) / page_size;
  out.page_indices.resize(pages);
  std::iota(out.page_indices.begin(), out.page_indices.end(), 0);
  std::shuffle(out.page_indices.begin(), out.page_indices.end(), rng);
  out.indptr = {0, static_cast<std::int32_t>(pages)};
  const std::size_t n = static_cast<std::size_t>(pages) * s.heads_kv * page_size * s.head_dim;
  out.k = random_values<T>(n, rng);  // unused tail slots hold noise, not zeros
  out.v = random_values<T>(n, rng);
  const auto contiguous = src.view(s, len);
  const auto paged = out.view(s);
  for (int g = 0; g < s.heads_kv; ++g)
    for (std::int64_t t = 0; t < len; ++t) {
      const auto from = contiguous.row_offset(0, g, t), to = paged.row_offset(0, g, t);
      std::copy_n(src.k.begin() + from, s.head_dim, out.k.begin() + to);
      std::copy_n(src.v.begin() + from, s.head_dim, out.v.begin() + to);
    }
  return out;
}

// A batch in a contiguous slab (sequence b in slot b of `src`, lengths[b] tokens) scattered over
// one page arena in a random physical order: the block tables of all sequences together are one
// permutation of the arena's pages. Unused slots hold noise, not zeros.
template <class T, class Len>
PagedSeq<T> scatter_batch_to_pages(const ContiguousKV<T>& src, const std::vector<Len>& lengths, const DecodeShape& s,
                                   int page_size, std::mt19937_64& rng) {
  PagedSeq<T> out;
  out.page_size = page_size;
  out.indptr = {0};
  for (auto len : lengths) out.indptr.push_back(out.indptr.back() + static_cast<std::int32_t>((len + page_size - 1) / page_size));
  const std::int64_t total_pages = out.indptr.back();
  std::vector<std::int32_t> order(std::max<std::int64_t>(total_pages, 1));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  out.page_indices.assign(order.begin(), order.begin() + total_pages);
  const std::size_t arena = order.size() * s.heads_kv * page_size * s.head_dim;
  out.k = random_values<T>(arena, rng);
  out.v = random_values<T>(arena, rng);
  const auto paged = out.view(s);
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (int g = 0; g < s.heads_kv; ++g)
      for (std::int64_t t = 0; t < lengths[b]; ++t) {
        const int seq = static_cast<int>(b);
        std::copy_n(src.k + src.row_offset(seq, g, t), s.head_dim, out.k.begin() + paged.row_offset(seq, g, t));
        std::copy_n(src.v + src.row_offset(seq, g, t), s.head_dim, out.v.begin() + paged.row_offset(seq, g, t));
      }
  return out;
}

}  // namespace decode_bench::testing
