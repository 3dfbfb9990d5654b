// The (O, LSE) merge: an associative, commutative monoid with the empty state as identity, and
// splitting a sequence into chunks then merging reproduces the unsplit attention exactly.
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "kernels/attention_state.hpp"
#include "kernels/cpu_reference.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

constexpr int kD = 16;
using State = AttentionState<double, kD>;

State random_state(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> o(-3, 3), lse(-60, 60);
  State s;
  for (double& x : s.o) x = o(rng);
  s.lse = lse(rng);
  return s;
}

State merged(State a, const State& b) {
  a.merge(b);
  return a;
}

void expect_near_state(const State& a, const State& b, double tol) {
  EXPECT_NEAR(a.lse, b.lse, tol * std::max(1.0, std::abs(b.lse)));
  for (int i = 0; i < kD; ++i) EXPECT_NEAR(a.o[i], b.o[i], tol * std::max(1.0, std::abs(b.o[i]))) << "i=" << i;
}

TEST(AttentionState, MergeIsCommutativeAndAssociative) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const State a = random_state(rng), b = random_state(rng), c = random_state(rng);
    expect_near_state(merged(a, b), merged(b, a), 1e-12);
    expect_near_state(merged(merged(a, b), c), merged(a, merged(b, c)), 1e-12);
  }
}

TEST(AttentionState, EmptyStateIsIdentityWithoutNaN) {
  std::mt19937_64 rng(8);
  const State a = random_state(rng), e = State::empty();
  expect_near_state(merged(a, e), a, 0.0);
  expect_near_state(merged(e, a), a, 0.0);
  const State ee = merged(e, e);
  EXPECT_TRUE(std::isinf(ee.lse) && ee.lse < 0);
  for (double x : ee.o) EXPECT_EQ(x, 0.0);
}

TEST(AttentionState, MergeWeightsSumToOneAtExtremeGaps) {
  // A gap of 1e4 in lse underflows exp() on one side; the weights must still be finite and exact.
  const auto w = merge_weights(1e4, -1e4);
  EXPECT_DOUBLE_EQ(w.weight_a, 1.0);
  EXPECT_DOUBLE_EQ(w.weight_b, 0.0);
  EXPECT_DOUBLE_EQ(w.lse, 1e4);
  const auto wf = merge_weights(3.0f, 3.0f);
  EXPECT_FLOAT_EQ(wf.weight_a, 0.5f);
  EXPECT_NEAR(wf.lse, 3.0f + std::log(2.0f), 1e-6);
}

// Split [0, T) at random cut points (empty and single-token chunks included), take the reference
// per chunk, merge in order, compare with the reference over the whole sequence.
void check_split_equals_whole(int chunks, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const DecodeShape shape{4, 2, 32};
  const std::int64_t T = 2003;
  const auto seq = testing::random_contiguous<float>(shape, T, rng);
  const auto kv = seq.view(shape, T);
  const auto q = testing::random_values<float>(static_cast<std::size_t>(shape.heads_q) * shape.head_dim, rng, -2, 2);
  const auto whole = reference_decode(kv, 0, T, q, shape);

  std::vector<std::int64_t> cuts{0, T};
  std::uniform_int_distribution<std::int64_t> pos(0, T);
  for (int i = 1; i < chunks; ++i) cuts.push_back(pos(rng));
  if (chunks >= 3) { cuts.push_back(cuts[2]); cuts.push_back(cuts[2] + (cuts[2] < T ? 1 : 0)); }  // a 0- and 1-token chunk
  std::sort(cuts.begin(), cuts.end());

  const int d = shape.head_dim;
  std::vector<double> o(static_cast<std::size_t>(shape.heads_q) * d, 0.0);
  std::vector<double> lse(shape.heads_q, -INFINITY);
  for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
    const auto part = reference_decode_range(kv, 0, cuts[c], cuts[c + 1], q, shape);
    for (int h = 0; h < shape.heads_q; ++h)
      merge_state_into(o.data() + h * d, lse[h], part.o.data() + h * d, part.lse[h], d);
  }
  for (int h = 0; h < shape.heads_q; ++h) {
    EXPECT_NEAR(lse[h], whole.lse[h], 1e-12 * std::abs(whole.lse[h]) + 1e-12) << "chunks=" << chunks;
    for (int i = 0; i < d; ++i) EXPECT_NEAR(o[h * d + i], whole.o[h * d + i], 1e-12) << "chunks=" << chunks;
  }
}

TEST(AttentionState, SplitThenMergeEqualsWhole) {
  for (int chunks : {1, 2, 3, 7, 64, 1000}) check_split_equals_whole(chunks, 100 + chunks);
}

}  // namespace
}  // namespace decode_bench
