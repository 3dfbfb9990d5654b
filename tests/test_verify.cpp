// The host verification rule (harness/verify.cpp) on hand-made references: exact outputs pass, an
// output off by more than the tolerance fails, and a non-finite reference never passes (|x - NaN| is
// NaN, which a max silently drops: a NaN reference used to pass with error 0).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "harness/verify.hpp"

namespace decode_bench {
namespace {

ReferenceOutput reference() {
  return {{0.5, -0.25, 0.125, 1.0}, {2.0}, {1.0, 1.0, 1.0, 1.0}};
}

VerificationResult check(const std::vector<float>& o, float lse, const ReferenceOutput& ref) {
  return verify_decode(o, std::vector<float>{lse}, ref, DType::fp16);
}

TEST(Verify, ExactPassesAndAnOffElementFails) {
  const ReferenceOutput ref = reference();
  EXPECT_TRUE(check({0.5f, -0.25f, 0.125f, 1.0f}, 2.0f, ref).passed);
  const VerificationResult off = check({0.5f, -0.25f, 0.135f, 1.0f}, 2.0f, ref);
  EXPECT_FALSE(off.passed);
  EXPECT_NEAR(off.max_abs_error, 0.01, 1e-6);
}

TEST(Verify, ANonFiniteReferenceNeverPasses) {
  ReferenceOutput nan_o = reference();
  nan_o.o[2] = NAN;
  const VerificationResult a = check({0.5f, -0.25f, 0.125f, 1.0f}, 2.0f, nan_o);
  EXPECT_FALSE(a.passed);
  EXPECT_EQ(a.non_finite, 1);

  ReferenceOutput nan_lse = reference();
  nan_lse.lse[0] = NAN;
  const VerificationResult b = check({0.5f, -0.25f, 0.125f, 1.0f}, 2.0f, nan_lse);
  EXPECT_FALSE(b.passed);
  EXPECT_EQ(b.non_finite, 1);

  ReferenceOutput nan_abs = reference();
  nan_abs.o_abs[0] = NAN;
  EXPECT_FALSE(check({0.5f, -0.25f, 0.125f, 1.0f}, 2.0f, nan_abs).passed);
}

}  // namespace
}  // namespace decode_bench
