// The float64 reference against closed forms, and paged == contiguous on scattered pages.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "kernels/cpu_reference.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

using testing::random_contiguous;
using testing::random_values;

TEST(CpuReference, IdenticalKeysGiveMeanOfValues) {
  std::mt19937_64 rng(1);
  const DecodeShape shape{1, 1, 8};
  const std::int64_t T = 37;
  auto seq = random_contiguous<float>(shape, T, rng);
  for (std::int64_t t = 1; t < T; ++t) std::copy_n(seq.k.begin(), 8, seq.k.begin() + t * 8);
  const auto q = random_values<float>(8, rng);
  const auto out = reference_decode(seq.view(shape, T), 0, T, q, shape);
  double s0 = 0;
  for (int i = 0; i < 8; ++i) s0 += double(q[i]) * seq.k[i];
  EXPECT_NEAR(out.lse[0], s0 * shape.softmax_scale() + std::log(double(T)), 1e-12);
  for (int i = 0; i < 8; ++i) {
    double mean = 0;
    for (std::int64_t t = 0; t < T; ++t) mean += seq.v[t * 8 + i];
    EXPECT_NEAR(out.o[i], mean / T, 1e-12);
  }
}

TEST(CpuReference, TwoTokensClosedForm) {
  std::mt19937_64 rng(2);
  const DecodeShape shape{1, 1, 4};
  const auto seq = random_contiguous<float>(shape, 2, rng);
  const auto q = random_values<float>(4, rng);
  const auto out = reference_decode(seq.view(shape, 2), 0, 2, q, shape);
  double s[2] = {0, 0};
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 4; ++i) s[t] += double(q[i]) * seq.k[t * 4 + i] * 0.5;  // scale = 1/sqrt(4)
  const double w0 = 1.0 / (1.0 + std::exp(s[1] - s[0]));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out.o[i], w0 * seq.v[i] + (1 - w0) * seq.v[4 + i], 1e-12);
  EXPECT_NEAR(out.lse[0], std::log(std::exp(s[0]) + std::exp(s[1])), 1e-12);
}

TEST(CpuReference, HugeLogitsStayFinite) {
  // Scores of about +-1e4: exp() of them overflows unless the maximum is subtracted first.
  const DecodeShape shape{1, 1, 1};
  std::vector<float> k = {1.f, -1.f, 0.5f}, v = {2.f, 3.f, 5.f};
  const std::vector<float> q = {1e4f};
  const auto out = reference_decode(ContiguousKV<float>::make(k.data(), v.data(), 1, 3, 1), 0, 3, q, shape);
  ASSERT_TRUE(std::isfinite(out.o[0]) && std::isfinite(out.lse[0]));
  EXPECT_DOUBLE_EQ(out.o[0], 2.0);  // the +1e4 token takes all the weight
  EXPECT_NEAR(out.lse[0], 1e4, 1e-9);
  const std::vector<float> neg = {-1e4f};
  const auto out2 = reference_decode(ContiguousKV<float>::make(k.data(), v.data(), 1, 3, 1), 0, 3, neg, shape);
  EXPECT_DOUBLE_EQ(out2.o[0], 3.0);
}

TEST(CpuReference, SingleTokenReturnsItsValue) {
  std::mt19937_64 rng(3);
  const DecodeShape shape{2, 1, 16};
  const auto seq = random_contiguous<float>(shape, 1, rng);
  const auto q = random_values<float>(32, rng);
  const auto out = reference_decode(seq.view(shape, 1), 0, 1, q, shape);
  for (int h = 0; h < 2; ++h) {
    double s = 0;
    for (int i = 0; i < 16; ++i) s += double(q[h * 16 + i]) * seq.k[i];
    EXPECT_NEAR(out.lse[h], s * 0.25, 1e-12);
    for (int i = 0; i < 16; ++i) EXPECT_DOUBLE_EQ(out.o[h * 16 + i], seq.v[i]);
  }
}

TEST(CpuReference, GqaMapsQueryHeadToKvHeadOverGroup) {
  // KV head g holds V == g + 1 everywhere, so o_h == h / group + 1 identifies the head it read.
  std::mt19937_64 rng(4);
  for (int group : {1, 2, 4, 8}) {
    const DecodeShape shape{8, 8 / group, 4};
    auto seq = random_contiguous<float>(shape, 9, rng);
    for (int g = 0; g < shape.heads_kv; ++g)
      std::fill_n(seq.v.begin() + g * 9 * 4, 9 * 4, float(g + 1));
    const auto q = random_values<float>(8 * 4, rng);
    const auto out = reference_decode(seq.view(shape, 9), 0, 9, q, shape);
    for (int h = 0; h < 8; ++h)
      for (int i = 0; i < 4; ++i) EXPECT_NEAR(out.o[h * 4 + i], h / group + 1, 1e-12) << "group " << group;
  }
}

template <class Elem>
void expect_paged_equals_contiguous(int page_size, std::int64_t len, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const DecodeShape shape{4, 2, 16};
  const auto seq = random_contiguous<Elem>(shape, len, rng);
  const auto paged = testing::scatter_to_pages(seq, shape, len, page_size, rng);
  const auto q = random_values<float>(4 * 16, rng);
  const auto a = reference_decode(seq.view(shape, len), 0, len, q, shape);
  const auto b = reference_decode(paged.view(shape), 0, len, q, shape);
  for (std::size_t i = 0; i < a.o.size(); ++i) EXPECT_EQ(a.o[i], b.o[i]) << "page_size " << page_size;
  for (std::size_t i = 0; i < a.lse.size(); ++i) EXPECT_EQ(a.lse[i], b.lse[i]);
}

TEST(CpuReference, PagedLayoutReadsTheSameValues) {
  for (int page_size : {1, 3, 7, 16, 256}) {
    expect_paged_equals_contiguous<float>(page_size, 255, page_size);
    expect_paged_equals_contiguous<__half>(page_size, 1013, page_size + 1);
    expect_paged_equals_contiguous<__nv_bfloat16>(page_size, 17, page_size + 2);
  }
}

TEST(CpuReference, RejectsInvalidShapes) {
  std::vector<float> k(8), v(8), q(3 * 8);
  const auto kv = ContiguousKV<float>::make(k.data(), v.data(), 2, 1, 4);
  EXPECT_THROW(reference_decode(kv, 0, 1, q, DecodeShape{3, 2, 4}), std::invalid_argument);
  EXPECT_THROW(reference_decode(kv, 0, 1, std::span<const float>(q.data(), 5), DecodeShape{2, 2, 4}),
               std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench
