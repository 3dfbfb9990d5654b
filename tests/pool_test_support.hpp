#pragma once
// Helpers for pool tests: small host-backend pools, token data, and a full snapshot of a pool's
// observable state (for "an error changes nothing" checks).
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/cpu_reference.hpp"
#include "pools/contiguous_pool.hpp"
#include "pools/paged_pool.hpp"

namespace decode_bench::testing {

// K and V rows of one sequence, token by token: k[t], v[t]: (H_kv * D) floats.
struct TokenRows {
  std::vector<std::vector<float>> k, v;
  std::int64_t size() const { return static_cast<std::int64_t>(k.size()); }
};

inline std::vector<float> random_row(const KVLayout& l, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> row(static_cast<std::size_t>(l.heads_kv) * l.head_dim);
  for (float& x : row) x = dist(rng);
  return row;
}

// Host layout (H_kv, len, D) that admit() takes, from token rows (H_kv * D each).
inline std::vector<float> to_hnd(const std::vector<std::vector<float>>& rows, const KVLayout& l) {
  const auto len = static_cast<std::int64_t>(rows.size());
  std::vector<float> out(static_cast<std::size_t>(l.heads_kv) * len * l.head_dim);
  for (std::int64_t t = 0; t < len; ++t)
    for (int h = 0; h < l.heads_kv; ++h)
      for (int d = 0; d < l.head_dim; ++d) out[(h * len + t) * l.head_dim + d] = rows[t][h * l.head_dim + d];
  return out;
}

inline TokenRows random_tokens(const KVLayout& l, std::int64_t len, std::mt19937_64& rng) {
  TokenRows r;
  for (std::int64_t t = 0; t < len; ++t) {
    r.k.push_back(random_row(l, rng));
    r.v.push_back(random_row(l, rng));
  }
  return r;
}

inline SequenceHandle admit_rows(KVPool& pool, const TokenRows& rows) {
  const auto k = to_hnd(rows.k, pool.layout()), v = to_hnd(rows.v, pool.layout());
  return pool.admit(std::span<const float>(k), std::span<const float>(v), rows.size());
}

// Every token of `h` read back equals `rows`.
inline ::testing::AssertionResult reads_back(const KVPool& pool, SequenceHandle h, const TokenRows& rows) {
  if (pool.length(h) != rows.size())
    return ::testing::AssertionFailure() << "length " << pool.length(h) << " != " << rows.size();
  std::vector<float> k(rows.k.empty() ? 0 : rows.k[0].size()), v(k.size());
  for (std::int64_t t = 0; t < rows.size(); ++t) {
    pool.read_token(h, t, k.data(), v.data());
    if (k != rows.k[t] || v != rows.v[t])
      return ::testing::AssertionFailure() << h.describe() << " token " << t << " differs";
  }
  return ::testing::AssertionSuccess();
}

// Everything a caller can observe about a paged pool, for before/after comparisons.
struct PagedSnapshot {
  std::vector<std::int32_t> free_list, refcounts, fills;
  std::vector<std::vector<std::int32_t>> tables;  // by slot, for the given handles
  std::vector<std::int64_t> lengths;
  std::int64_t sequences = 0, stored = 0;
  friend bool operator==(const PagedSnapshot&, const PagedSnapshot&) = default;
};

inline PagedSnapshot snapshot(const PagedPool& pool, const std::vector<SequenceHandle>& live) {
  PagedSnapshot s;
  s.free_list = pool.pages().free_list();
  for (std::int32_t p = 0; p < pool.pages().total(); ++p) {
    s.refcounts.push_back(pool.pages().refcount(p));
    s.fills.push_back(pool.pages().fill(p));
  }
  for (const auto& h : live) {
    const auto t = pool.block_table(h);
    s.tables.emplace_back(t.begin(), t.end());
    s.lengths.push_back(pool.length(h));
  }
  const auto st = pool.stats();
  s.sequences = st.sequences;
  s.stored = st.stored_tokens;
  return s;
}

// Appends n random tokens to h and keeps them in `rows` (float pools).
inline void append_random_rows(KVPool& pool, SequenceHandle h, TokenRows& rows, int n, std::mt19937_64& rng) {
  for (int i = 0; i < n; ++i) {
    rows.k.push_back(random_row(pool.layout(), rng));
    rows.v.push_back(random_row(pool.layout(), rng));
    pool.append_token(h, std::span<const float>(rows.k.back()), std::span<const float>(rows.v.back()));
  }
}

// The float64 reference over rows kept on the side, laid out as one contiguous (1, H_kv, T, D) slab.
inline ReferenceOutput reference_of(const TokenRows& rows, std::span<const float> q, const KVLayout& layout,
                                    const DecodeShape& shape) {
  const auto k = to_hnd(rows.k, layout), v = to_hnd(rows.v, layout);
  const auto kv = ContiguousKV<float>::make(k.data(), v.data(), layout.heads_kv, rows.size(), layout.head_dim);
  return reference_decode(kv, 0, rows.size(), q, shape);
}

// Same stored values, same summation order: the two references agree to the last bit.
inline void expect_same_reference(const ReferenceOutput& got, const ReferenceOutput& want) {
  ASSERT_EQ(got.o.size(), want.o.size());
  ASSERT_EQ(got.lse.size(), want.lse.size());
  for (std::size_t i = 0; i < want.o.size(); ++i) EXPECT_DOUBLE_EQ(got.o[i], want.o[i]) << "o[" << i << "]";
  for (std::size_t i = 0; i < want.lse.size(); ++i) EXPECT_DOUBLE_EQ(got.lse[i], want.lse[i]) << "lse[" << i << "]";
}

}  // namespace decode_bench::testing
