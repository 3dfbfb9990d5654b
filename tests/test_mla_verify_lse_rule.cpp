// The MLA verifier's lse rule for a backend whose softmax denominator sums weights rounded to the
// MMA operand type (Backend::denominator_sums_rounded_weights, sweeps/mla_verify.hpp), on a small
// BF16 batch in closed form: an lse computed as such a kernel computes it (each weight
// exp(s_t - m) rounded to BF16, summed exactly, lse = m + log d) passes the widened bound and fails
// the relative one, which still applies to a backend without the property; an lse off by one token
// or left in base 2 fails the widened bound too. o is the reference's throughout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <cuda_bf16.h>

#include "kernels/mla/mla_reference.hpp"
#include "pools/latent_cache.hpp"
#include "sweeps/mla_verify.hpp"

namespace decode_bench::sweeps {
namespace {

class MlaVerifyLseRule : public ::testing::Test {
 protected:
  static constexpr int kBatch = 3;
  const MlaShape s_{8, 512, 64, 1, deepseek_softmax_scale(64)};
  const std::vector<std::int32_t> lengths_ = {6, 11, 4};
  LatentCache cache_{config(), lengths_};
  std::vector<float> q_ = mla_query(s_, kBatch, DType::bf16, 17);
  std::vector<double> o_ref_, lse_ref_;
  MlaRowSample every_ = mla_rows_to_verify(s_, lengths_, std::numeric_limits<std::int64_t>::max() / 4);

  static LatentCacheConfig config() {
    LatentCacheConfig c;
    c.dtype = DType::bf16;
    c.page_size = 4;
    c.seed = 5;
    return c;
  }
  PagedKV<__nv_bfloat16> view() const {
    static const float one = 1.f;
    return cache_.paged_view<__nv_bfloat16>(reinterpret_cast<const __nv_bfloat16*>(cache_.data().data()),
                                            cache_.page_indices().data(), cache_.indptr().data(), &one);
  }
  void SetUp() override {
    o_ref_.resize(static_cast<std::size_t>(kBatch) * s_.rows() * s_.value_dim());
    lse_ref_.resize(static_cast<std::size_t>(kBatch) * s_.rows());
    mla_reference(s_, view(), kBatch, lengths_.data(), q_.data(), o_ref_.data(), lse_ref_.data());
  }
  // Row (b, h)'s lse over its first `tokens` tokens, each weight rounded to BF16 when `round`.
  double lse_of(int b, int h, int tokens, bool round) const {
    const PagedKV<__nv_bfloat16> v = view();
    const float* q = q_.data() + (static_cast<std::size_t>(b) * s_.heads_q + h) * s_.key_dim();
    std::vector<double> scores;
    for (int t = 0; t < tokens; ++t) {
      const __nv_bfloat16* k = v.k + v.row_offset(b, 0, t);
      double dot = 0;
      for (int c = 0; c < s_.key_dim(); ++c) dot += static_cast<double>(q[c]) * __bfloat162float(k[c]);
      scores.push_back(dot * s_.softmax_scale);
    }
    const double m = *std::max_element(scores.begin(), scores.end());
    double d = 0;
    for (const double x : scores) {
      const double p = std::exp(x - m);
      d += round ? static_cast<double>(__bfloat162float(__float2bfloat16_rn(static_cast<float>(p)))) : p;
    }
    return m + std::log(d);
  }
  std::vector<float> lse_where(const std::function<double(int, int)>& f) const {
    std::vector<float> lse(lse_ref_.size());
    for (int b = 0; b < kBatch; ++b)
      for (int h = 0; h < s_.heads_q; ++h) lse[static_cast<std::size_t>(b) * s_.heads_q + h] = static_cast<float>(f(b, h));
    return lse;
  }
  MlaVerification verify(const std::vector<float>& lse, bool rounded_weights) const {
    const std::vector<float> o(o_ref_.begin(), o_ref_.end());
    return verify_mla_on_host(s_, cache_, q_, o, lse, every_, {DType::bf16, rounded_weights});
  }
};

TEST_F(MlaVerifyLseRule, RoundedWeightsDenominatorPassesTheWidenedBoundOnly) {
  const std::vector<float> lse = lse_where([&](int b, int h) { return lse_of(b, h, lengths_[b], true); });
  // The emulation is what the widened bound is for: past the relative bound, within u.
  double worst = 0, worst_relative = 0;
  for (std::size_t r = 0; r < lse.size(); ++r) {
    const double err = std::abs(lse[r] - lse_ref_[r]);
    worst = std::max(worst, err);
    worst_relative = std::max(worst_relative, err / std::max(1.0, std::abs(lse_ref_[r])));
  }
  ASSERT_GT(worst_relative, 1e-4);
  ASSERT_LE(worst, std::ldexp(1.0, -8));

  const MlaVerification widened = verify(lse, true);
  EXPECT_TRUE(widened.passed) << widened.summary();
  EXPECT_EQ(widened.terms_json()["lse_rule"], "rounded_weights");
  EXPECT_LE(widened.max_lse_ratio, 1.0);
  EXPECT_GT(widened.max_lse_ratio, 0.0);
  // The reported ratio is against the tolerance used: BF16 o's rule (harness/verify.hpp), not 2u.
  EXPECT_EQ(widened.tolerance, 1.6e-2);
  EXPECT_DOUBLE_EQ(widened.max_rel_error, std::max(widened.max_o_ratio, widened.max_lse_ratio) * widened.tolerance);

  const MlaVerification relative = verify(lse, false);  // a backend without the property
  EXPECT_FALSE(relative.passed) << relative.summary();
  EXPECT_EQ(relative.terms_json()["lse_rule"], "relative");
  EXPECT_EQ(relative.terms_json()["limited_by"], "lse");
  EXPECT_LE(relative.max_o_ratio, 1.0);  // o is within its bound: the lse alone fails
  EXPECT_DOUBLE_EQ(relative.max_lse_ratio, worst_relative / 1e-4);
}

TEST_F(MlaVerifyLseRule, ReferenceLsePassesBothRules) {
  const std::vector<float> lse(lse_ref_.begin(), lse_ref_.end());
  EXPECT_TRUE(verify(lse, false).passed);
  EXPECT_TRUE(verify(lse, true).passed);
}

TEST_F(MlaVerifyLseRule, AnOffByOneTokenOrBase2LseStillFails) {
  // Sequence 1's rows over 10 of their 11 tokens, each weight rounded as the kernel rounds.
  const std::vector<float> short_by_one = lse_where([&](int b, int h) {
    return lse_of(b, h, b == 1 ? lengths_[b] - 1 : lengths_[b], true);
  });
  const MlaVerification one = verify(short_by_one, true);
  EXPECT_FALSE(one.passed) << one.summary();
  EXPECT_EQ(one.terms_json()["limited_by"], "lse");
  EXPECT_GT(one.max_lse_ratio, 1.0);
  // Base 2 left unconverted: every row off by a factor 1 / ln 2.
  const std::vector<float> base2 = lse_where([&](int b, int h) { return lse_of(b, h, lengths_[b], true) / std::log(2.0); });
  const MlaVerification wrong_scale = verify(base2, true);
  EXPECT_FALSE(wrong_scale.passed) << wrong_scale.summary();
  EXPECT_GT(wrong_scale.max_lse_ratio, 1.0);
}

}  // namespace
}  // namespace decode_bench::sweeps
