// The host verification rule (harness/verify.cpp) on hand-made references: exact outputs pass, an
// output off by more than the tolerance fails, and a non-finite reference never passes (|x - NaN| is
// NaN, which a max silently drops: a NaN reference used to pass with error 0); q and o in a 16-bit
// io dtype loosen the rule to that type's rounding bound, never tighten it, and re-judge a result;
// FP8 with a logit soft-cap takes a tolerance of its own.
#include <cmath>
#include <string>
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

TEST(Verify, A16BitIoDtypeLoosensTheRuleToItsRoundingBound) {
  for (DType kv : {DType::fp32, DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    EXPECT_EQ(verification_tolerance(kv, DType::fp32), verification_tolerance(kv)) << dtype_name(kv);
  // 4u: 4 x 2^-11 for fp16, 4 x 2^-8 for bf16, each rounded up.
  EXPECT_EQ(verification_tolerance(DType::fp8_e4m3, DType::fp16), 2e-3);
  EXPECT_EQ(verification_tolerance(DType::fp16, DType::fp16), 2e-3);
  EXPECT_EQ(verification_tolerance(DType::bf16, DType::bf16), 1.6e-2);
  EXPECT_GE(verification_tolerance(DType::fp16, DType::fp16), 4 * std::ldexp(1.0, -11));
  EXPECT_GE(verification_tolerance(DType::bf16, DType::bf16), 4 * std::ldexp(1.0, -8));

  // An fp8 comparison (tol 1e-5) off by 1e-3 of o_abs fails; judged at the fp16 io rule it passes,
  // and off by 1e-2 it still fails.
  const ReferenceOutput ref = reference();
  VerificationResult r = verify_decode(std::vector<float>{0.5f, -0.25f, 0.126f, 1.0f}, std::vector<float>{2.0f}, ref,
                                       DType::fp8_e4m3);
  EXPECT_FALSE(r.passed);
  judge_at(r, verification_tolerance(DType::fp8_e4m3, DType::fp16));
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.tolerance, 2e-3);
  VerificationResult far = verify_decode(std::vector<float>{0.5f, -0.25f, 0.135f, 1.0f}, std::vector<float>{2.0f}, ref,
                                         DType::fp8_e4m3);
  judge_at(far, verification_tolerance(DType::fp8_e4m3, DType::fp16));
  EXPECT_FALSE(far.passed);
}

// FP8 with a logit soft-cap is held to 4e-3 (the cap's one-instruction tanh bounds the error, and
// FP8's logits are larger than the 16-bit types' data); FP8 with any other variant, and every other
// storage type with a cap, keep their own rule. A 16-bit io dtype loosens it, never tightens it.
TEST(Verify, Fp8WithASoftCapTakesItsOwnTolerance) {
  const AttentionVariant capped{.logits_soft_cap = 50.0};
  const AttentionVariant others{.q_len = 4, .window = 128, .sinks = true};
  for (DType fp8 : {DType::fp8_e4m3, DType::fp8_e5m2}) {
    EXPECT_EQ(verification_tolerance(fp8, capped), 4e-3) << dtype_name(fp8);
    EXPECT_EQ(verification_tolerance(fp8, AttentionVariant{.sinks = true, .logits_soft_cap = 5.0}), 4e-3);
    EXPECT_EQ(verification_tolerance(fp8, others), 1e-5) << dtype_name(fp8);
    EXPECT_EQ(verification_tolerance(fp8, AttentionVariant{}), verification_tolerance(fp8));
    // With q / o in fp16 (2e-3) the cap's 4e-3 stays; in bf16 (1.6e-2) the io bound is the larger.
    EXPECT_EQ(verification_tolerance(fp8, DType::fp16, capped), 4e-3);
    EXPECT_EQ(verification_tolerance(fp8, DType::bf16, capped), 1.6e-2);
    EXPECT_EQ(verification_tolerance(fp8, DType::fp16, others), 2e-3);
    EXPECT_EQ(verification_tolerance(fp8, DType::fp32, others), 1e-5);
  }
  for (DType kv : {DType::fp32, DType::fp16, DType::bf16}) {
    EXPECT_EQ(verification_tolerance(kv, capped), verification_tolerance(kv)) << dtype_name(kv);
    EXPECT_EQ(verification_tolerance(kv, others), verification_tolerance(kv)) << dtype_name(kv);
    EXPECT_EQ(verification_tolerance(kv, DType::fp16, capped), verification_tolerance(kv, DType::fp16));
  }

  // An fp8 comparison off by 3e-3 of o_abs fails the fp8 rule and passes the capped one; off by 1e-2
  // it fails both.
  const ReferenceOutput ref = reference();
  VerificationResult r = verify_decode(std::vector<float>{0.5f, -0.25f, 0.128f, 1.0f}, std::vector<float>{2.0f}, ref,
                                       DType::fp8_e5m2);
  EXPECT_FALSE(r.passed);
  judge_at(r, verification_tolerance(DType::fp8_e5m2, capped));
  EXPECT_TRUE(r.passed);
  VerificationResult far = verify_decode(std::vector<float>{0.5f, -0.25f, 0.135f, 1.0f}, std::vector<float>{2.0f}, ref,
                                         DType::fp8_e5m2);
  judge_at(far, verification_tolerance(DType::fp8_e5m2, capped));
  EXPECT_FALSE(far.passed);
  // The rule's text names the case.
  EXPECT_NE(verification_rule().find("fp8 with a logit soft-cap 4e-3"), std::string::npos);
}

}  // namespace
}  // namespace decode_bench
