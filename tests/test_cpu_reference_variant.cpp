// The float64 reference of the attention variants against closed forms and against the plain
// reference over the ranges the definitions name (kernels/attention_variant.hpp).
#include <cmath>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "kernels/cpu_reference_variant.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

using testing::random_contiguous;
using testing::random_values;
using testing::scatter_to_pages;

// q of query token i: rows [i * H_q * D, (i + 1) * H_q * D).
std::span<const float> token_q(const std::vector<float>& q, int i, const DecodeShape& s) {
  const std::size_t n = static_cast<std::size_t>(s.heads_q) * s.head_dim;
  return std::span<const float>(q).subspan(i * n, n);
}

TEST(CpuReferenceVariant, PlainVariantIsThePlainReference) {
  std::mt19937_64 rng(1);
  const DecodeShape shape{8, 2, 16};
  const std::int64_t T = 53;
  const auto seq = random_contiguous<float>(shape, T, rng);
  const auto q = random_values<float>(8 * 16, rng);
  const auto plain = reference_decode(seq.view(shape, T), 0, T, q, shape);
  const auto variant = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, {}, {});
  EXPECT_EQ(variant.o, plain.o);
  EXPECT_EQ(variant.lse, plain.lse);
  EXPECT_EQ(variant.o_abs, plain.o_abs);
}

// Query token i of q_len sits at position T - q_len + i and sees positions <= its own: its row is
// the plain reference over the first T - q_len + i + 1 tokens.
TEST(CpuReferenceVariant, QueryTokensAreCausalRows) {
  std::mt19937_64 rng(2);
  const DecodeShape shape{4, 1, 16};
  const std::int64_t T = 40;
  const auto seq = random_contiguous<float>(shape, T, rng);
  for (int q_len : {1, 2, 3, 8, 16}) {
    const auto q = random_values<float>(static_cast<std::size_t>(q_len) * 4 * 16, rng);
    const auto out = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, {.q_len = q_len}, {});
    ASSERT_EQ(out.lse.size(), static_cast<std::size_t>(q_len) * 4);
    for (int i = 0; i < q_len; ++i) {
      const auto row = reference_decode(seq.view(shape, T), 0, T - q_len + i + 1, token_q(q, i, shape), shape);
      for (int h = 0; h < 4; ++h) {
        EXPECT_EQ(out.lse[i * 4 + h], row.lse[h]) << "q_len " << q_len << " token " << i;
        for (int x = 0; x < 16; ++x) EXPECT_EQ(out.o[(i * 4 + h) * 16 + x], row.o[h * 16 + x]);
      }
    }
  }
}

// A window of w: query token i sees [p_i - w + 1, p_i], the plain reference over that range.
TEST(CpuReferenceVariant, WindowIsTheRangeOfTheLastWindowPositions) {
  std::mt19937_64 rng(3);
  const DecodeShape shape{2, 2, 16};
  const std::int64_t T = 37;
  const auto seq = random_contiguous<float>(shape, T, rng);
  for (int q_len : {1, 3}) {
    const auto q = random_values<float>(static_cast<std::size_t>(q_len) * 2 * 16, rng);
    for (std::int64_t w : {1, 5, 15, 16, 36, 37, 100}) {
      const auto out = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, {.q_len = q_len, .window = w}, {});
      for (int i = 0; i < q_len; ++i) {
        const std::int64_t pos = T - q_len + i, begin = std::max<std::int64_t>(0, pos - w + 1);
        const auto row = reference_decode_range(seq.view(shape, T), 0, begin, pos + 1, token_q(q, i, shape), shape);
        for (int h = 0; h < 2; ++h) {
          EXPECT_EQ(out.lse[i * 2 + h], row.lse[h]) << "window " << w << " token " << i;
          for (int x = 0; x < 16; ++x) EXPECT_EQ(out.o[(i * 2 + h) * 16 + x], row.o[h * 16 + x]);
        }
      }
    }
  }
}

TEST(CpuReferenceVariant, WindowOneIsTheValueOfTheOwnPosition) {
  std::mt19937_64 rng(4);
  const DecodeShape shape{4, 2, 8};
  const std::int64_t T = 20;
  const auto seq = random_contiguous<float>(shape, T, rng);
  const int q_len = 3;
  const auto q = random_values<float>(q_len * 4 * 8, rng);
  const auto kv = seq.view(shape, T);
  const auto out = reference_decode_variant(kv, 0, T, q, shape, {.q_len = q_len, .window = 1}, {});
  for (int i = 0; i < q_len; ++i)
    for (int h = 0; h < 4; ++h) {
      const int g = h / 2;
      const float* v = seq.v.data() + kv.row_offset(0, g, T - q_len + i);
      const float* k = seq.k.data() + kv.row_offset(0, g, T - q_len + i);
      double s = 0;
      for (int x = 0; x < 8; ++x) s += double(token_q(q, i, shape)[h * 8 + x]) * k[x];
      EXPECT_NEAR(out.lse[i * 4 + h], s * shape.softmax_scale(), 1e-12);
      for (int x = 0; x < 8; ++x) EXPECT_DOUBLE_EQ(out.o[(i * 4 + h) * 8 + x], v[x]);
    }
}

TEST(CpuReferenceVariant, SoftCapClosedFormAndHugeCapIsPlain) {
  std::mt19937_64 rng(5);
  const DecodeShape shape{1, 1, 4};
  // q and k of +-3 give logits up to 18: a cap of 2 changes them a lot.
  const auto seq = random_contiguous<float>(shape, 2, rng);
  auto k = seq.k;
  for (float& x : k) x *= 3;
  const std::vector<float> q = {3.f, -3.f, 3.f, 3.f};
  const auto kv = ContiguousKV<float>::make(k.data(), seq.v.data(), 1, 2, 4);
  const double cap = 2.0;
  const auto out = reference_decode_variant(kv, 0, 2, q, shape, {.logits_soft_cap = cap}, {});
  double s[2] = {0, 0};
  for (int t = 0; t < 2; ++t) {
    for (int i = 0; i < 4; ++i) s[t] += double(q[i]) * k[t * 4 + i] * 0.5;  // scale = 1/sqrt(4)
    s[t] = cap * std::tanh(s[t] / cap);
  }
  const double w0 = 1.0 / (1.0 + std::exp(s[1] - s[0]));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out.o[i], w0 * seq.v[i] + (1 - w0) * seq.v[4 + i], 1e-12);
  EXPECT_NEAR(out.lse[0], std::log(std::exp(s[0]) + std::exp(s[1])), 1e-12);

  // cap * tanh(s / cap) = s (1 - s^2 / (3 cap^2) + ...): with cap 1e6 the logits move by < 1e-11.
  const DecodeShape wide{8, 4, 32};
  const auto big = random_contiguous<float>(wide, 77, rng);
  const auto q2 = random_values<float>(2 * 8 * 32, rng);
  const auto plain = reference_decode_variant(big.view(wide, 77), 0, 77, q2, wide, {.q_len = 2}, {});
  const auto capped =
      reference_decode_variant(big.view(wide, 77), 0, 77, q2, wide, {.q_len = 2, .logits_soft_cap = 1e6}, {});
  for (std::size_t j = 0; j < plain.o.size(); ++j) EXPECT_NEAR(capped.o[j], plain.o[j], 1e-9);
  for (std::size_t j = 0; j < plain.lse.size(); ++j) EXPECT_NEAR(capped.lse[j], plain.lse[j], 1e-9);
}

// Every logit capped at c lies in (-c, c): the weights of any two tokens differ by less than e^{2c}.
TEST(CpuReferenceVariant, SmallCapBoundsTheLse) {
  std::mt19937_64 rng(6);
  const DecodeShape shape{2, 1, 16};
  const std::int64_t T = 50;
  const auto seq = random_contiguous<float>(shape, T, rng);
  const auto q = random_values<float>(2 * 16, rng, -8.f, 8.f);
  const double cap = 0.25;
  const auto out = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, {.logits_soft_cap = cap}, {});
  for (double lse : out.lse) {
    EXPECT_GT(lse, std::log(double(T)) - cap);
    EXPECT_LT(lse, std::log(double(T)) + cap);
  }
}

TEST(CpuReferenceVariant, SinkOfMinusInfinityIsPlain) {
  std::mt19937_64 rng(7);
  const DecodeShape shape{4, 4, 16};
  const std::int64_t T = 31;
  const auto seq = random_contiguous<float>(shape, T, rng);
  const auto q = random_values<float>(2 * 4 * 16, rng);
  const std::vector<float> sinks(4, -std::numeric_limits<float>::infinity());
  const AttentionVariant with{.q_len = 2, .window = 9, .sinks = true}, without{.q_len = 2, .window = 9};
  const auto a = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, with, sinks);
  const auto b = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, without, {});
  EXPECT_EQ(a.o, b.o);
  EXPECT_EQ(a.lse, b.lse);
}

// Identical keys: every logit is s0, so o = T e^{s0} / (T e^{s0} + e^z) * mean(V), lse = log(T e^{s0} + e^z).
TEST(CpuReferenceVariant, SinkOnAUniformCaseClosedForm) {
  std::mt19937_64 rng(8);
  const DecodeShape shape{1, 1, 8};
  const std::int64_t T = 25;
  auto seq = random_contiguous<float>(shape, T, rng);
  for (std::int64_t t = 1; t < T; ++t) std::copy_n(seq.k.begin(), 8, seq.k.begin() + t * 8);
  const auto q = random_values<float>(8, rng);
  double s0 = 0;
  for (int i = 0; i < 8; ++i) s0 += double(q[i]) * seq.k[i];
  s0 *= shape.softmax_scale();
  for (float z : {-3.f, 0.f, 2.5f, 40.f}) {
    const std::vector<float> sinks = {z};
    const auto out = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, {.sinks = true}, sinks);
    const double mass = T * std::exp(s0), keep = mass / (mass + std::exp(double(z)));
    EXPECT_NEAR(out.lse[0], std::log(mass + std::exp(double(z))), 1e-12) << z;
    for (int i = 0; i < 8; ++i) {
      double mean = 0;
      for (std::int64_t t = 0; t < T; ++t) mean += seq.v[t * 8 + i];
      EXPECT_NEAR(out.o[i], keep * mean / T, 1e-12) << z;
    }
  }
}

// For any data and any other variant, a sink only rescales: o_sink = o e^{lse - lse_sink} and
// lse_sink = log(e^{lse} + e^{z}). Checked with a window, several query tokens and a cap together.
TEST(CpuReferenceVariant, SinksRescaleEveryCombination) {
  std::mt19937_64 rng(9);
  const DecodeShape shape{8, 2, 16};
  const std::int64_t T = 45;
  const auto seq = random_contiguous<float>(shape, T, rng);
  const auto q = random_values<float>(4 * 8 * 16, rng);
  const auto sinks = sink_logits(8, 3);
  AttentionVariant v{.q_len = 4, .window = 7, .logits_soft_cap = 1.5};
  const auto plain = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, v, {});
  v.sinks = true;
  const auto sunk = reference_decode_variant(seq.view(shape, T), 0, T, q, shape, v, sinks);
  for (int i = 0; i < 4; ++i)
    for (int h = 0; h < 8; ++h) {
      const std::size_t row = i * 8 + h;
      EXPECT_NEAR(sunk.lse[row], std::log(std::exp(plain.lse[row]) + std::exp(double(sinks[h]))), 1e-12);
      for (int x = 0; x < 16; ++x)
        EXPECT_NEAR(sunk.o[row * 16 + x], plain.o[row * 16 + x] * std::exp(plain.lse[row] - sunk.lse[row]), 1e-12);
    }
}

TEST(CpuReferenceVariant, PagedShuffledEqualsContiguousForEveryVariant) {
  std::mt19937_64 rng(10);
  const DecodeShape shape{8, 1, 32};
  const std::int64_t T = 70;
  const auto seq = random_contiguous<__half>(shape, T, rng);
  const auto paged = scatter_to_pages(seq, shape, T, 16, rng);
  const auto q = random_values<float>(5 * 8 * 32, rng);
  const auto sinks = sink_logits(8, 1);
  for (const AttentionVariant& v : {AttentionVariant{.q_len = 5, .window = 15}, AttentionVariant{.window = 16},
                                    AttentionVariant{.q_len = 5, .window = 17, .sinks = true, .logits_soft_cap = 50},
                                    AttentionVariant{.q_len = 5, .window = 70, .sinks = true}}) {
    const std::size_t n = static_cast<std::size_t>(v.q_len) * 8 * 32;
    const std::span<const float> qv(q.data(), n);
    const auto a = reference_decode_variant(seq.view(shape, T), 0, T, qv, shape, v, sinks);
    const auto b = reference_decode_variant(paged.view(shape), 0, T, qv, shape, v, sinks);
    EXPECT_EQ(a.o, b.o) << v.describe();
    EXPECT_EQ(a.lse, b.lse) << v.describe();
  }
}

TEST(CpuReferenceVariant, MalformedInputThrows) {
  std::mt19937_64 rng(11);
  const DecodeShape shape{1, 1, 8};
  const auto seq = random_contiguous<float>(shape, 4, rng);
  const auto q = random_values<float>(8 * 8, rng);
  const auto kv = seq.view(shape, 4);
  const std::span<const float> one(q.data(), 8);
  EXPECT_THROW((void)reference_decode_variant(kv, 0, 4, std::span<const float>(q.data(), 40), shape, {.q_len = 5}, {}),
               std::invalid_argument);  // 5 new tokens in a cache of 4
  EXPECT_THROW((void)reference_decode_variant(kv, 0, 4, one, shape, {.q_len = 2}, {}), std::invalid_argument);
  EXPECT_THROW((void)reference_decode_variant(kv, 0, 4, one, shape, {.sinks = true}, {}), std::invalid_argument);
  EXPECT_THROW((void)reference_decode_variant(kv, 0, 4, one, shape, {.window = -1}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace decode_bench
