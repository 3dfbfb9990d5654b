#pragma once
// Test data: fresh random K/V/q (never zeros) in host memory, viewable through both accessors.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <vector>

#include "kernels/decode_shape.hpp"
#include "kernels/dtype.hpp"
#include "kernels/kv_accessor.hpp"
#include "kernels/kv_generator.hpp"

namespace decode_bench::testing {

// `out` filled with values uniform in [lo, hi]: one draw from `rng` seeds a counter-based stream
// (splitmix64's finalizer, kernels/kv_generator.hpp), about ten times faster per value than
// std::uniform_real_distribution over the Mersenne twister, whose cost made data generation the
// largest part of the kernel tests' time.
template <class T>
void fill_random(std::span<T> out, std::mt19937_64& rng, float lo = -1.f, float hi = 1.f) {
  const std::uint64_t seed = rng();
  const float step = (hi - lo) * 0x1.0p-24f;  // 24 random bits a value
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::uint64_t z = generator_mix(seed + (i + 1) * 0x9E3779B97F4A7C15ull);
    out[i] = from_float<T>(lo + static_cast<float>(z >> 40) * step);
  }
}

template <class T>
std::vector<T> random_values(std::size_t n, std::mt19937_64& rng, float lo = -1.f, float hi = 1.f) {
  std::vector<T> out(n);
  fill_random(std::span<T>(out), rng, lo, hi);
  return out;
}

// Slots no kernel may read (a slot's tail past its sequence, a page arena's unused rows): finite
// noise, not zeros, tiled from one fixed block, since these regions can be most of a ragged
// batch's slab and need no fresh values.
template <class T>
void fill_noise(std::span<T> out) {
  static const std::vector<T> block = [] {
    std::mt19937_64 rng(0x6e6f697365);
    return random_values<T>(4099, rng);  // a prime count: rows of any head dim see shifted values
  }();
  for (std::size_t at = 0; at < out.size(); at += block.size())
    std::copy_n(block.begin(), std::min(block.size(), out.size() - at), out.begin() + at);
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
  out.k.resize(n);  // unused tail slots hold noise, not zeros
  out.v.resize(n);
  fill_noise(std::span<T>(out.k));
  fill_noise(std::span<T>(out.v));
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
  out.k.resize(arena);
  out.v.resize(arena);
  fill_noise(std::span<T>(out.k));
  fill_noise(std::span<T>(out.v));
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
