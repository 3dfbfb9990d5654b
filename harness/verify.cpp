#include "harness/verify.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace decode_bench {

double verification_tolerance(DType kv_dtype) {
  // FP8: the reference reads the same stored bytes times the same scales, so as for FP32 only the
  // kernel's fp32 arithmetic differs (harness/verify.hpp).
  return kv_dtype == DType::fp32 || dtype_is_fp8(kv_dtype) ? 1e-5 : 1e-3;
}

double verification_tolerance(DType kv_dtype, const AttentionVariant& variant) {
  // FP8 with a soft-cap: the cap's MUFU tanh bounds the error, not the storage (harness/verify.hpp).
  if (dtype_is_fp8(kv_dtype) && variant.logits_soft_cap > 0) return 4e-3;
  return verification_tolerance(kv_dtype);
}

double verification_tolerance(DType kv_dtype, DType io_dtype, const AttentionVariant& variant) {
  return std::max(verification_tolerance(kv_dtype, variant), verification_tolerance(kv_dtype, io_dtype));
}

double verification_tolerance(DType kv_dtype, DType io_dtype) {
  // Two roundings of o to the io type and the arithmetic before them: 4u (harness/verify.hpp).
  const double io = io_dtype == DType::fp16 ? 2e-3 : io_dtype == DType::bf16 ? 1.6e-2 : 0.0;
  return std::max(verification_tolerance(kv_dtype), io);
}

std::string verification_rule() {
  return "|o-ref| <= tol*sum_t w_t|v_t| and |lse-ref| <= tol*max(1,|ref|); tol fp32 and fp8 1e-5, fp16/bf16 1e-3, "
         "fp8 with a logit soft-cap 4e-3; at least 2e-3 with fp16 q/o, 1.6e-2 with bf16 q/o";
}

VerificationResult verify_decode(std::span<const float> o, std::span<const float> lse, const ReferenceOutput& ref,
                                 DType kv_dtype) {
  VerificationResult r;
  r.tolerance = verification_tolerance(kv_dtype);
  for (std::size_t i = 0; i < ref.o.size(); ++i) {
    const double x = i < o.size() ? o[i] : NAN;
    // A non-finite reference counts too: |x - NaN| is NaN, which std::max drops, so a NaN
    // reference would otherwise pass with error 0.
    if (!std::isfinite(x) || !std::isfinite(ref.o[i]) || !std::isfinite(ref.o_abs[i])) {
      ++r.non_finite;
      continue;
    }
    const double err = std::abs(x - ref.o[i]);
    r.max_abs_error = std::max(r.max_abs_error, err);
    // o_abs == 0 only when every weighted V element is 0; then any error is infinitely wrong.
    r.max_rel_error = std::max(r.max_rel_error, ref.o_abs[i] > 0 ? err / ref.o_abs[i] : (err > 0 ? INFINITY : 0.0));
  }
  for (std::size_t h = 0; h < ref.lse.size(); ++h) {
    const double x = h < lse.size() ? lse[h] : NAN;
    if (std::isnan(ref.lse[h])) {
      ++r.non_finite;
      continue;
    }
    if (std::isinf(ref.lse[h])) {  // empty sequence: lse must be -inf too
      if (x != ref.lse[h]) ++r.non_finite;
      continue;
    }
    if (!std::isfinite(x)) {
      ++r.non_finite;
      continue;
    }
    const double err = std::abs(x - ref.lse[h]);
    r.max_lse_error = std::max(r.max_lse_error, err);
    r.max_rel_error = std::max(r.max_rel_error, err / std::max(1.0, std::abs(ref.lse[h])));
  }
  if (r.non_finite > 0) r.max_abs_error = NAN;
  r.passed = r.non_finite == 0 && r.max_rel_error <= r.tolerance;
  return r;
}

void accumulate(VerificationResult& total, const VerificationResult& one) {
  total.tolerance = one.tolerance;
  total.non_finite += one.non_finite;
  total.max_abs_error = std::isnan(one.max_abs_error) ? NAN : std::max(total.max_abs_error, one.max_abs_error);
  total.max_rel_error = std::max(total.max_rel_error, one.max_rel_error);
  total.max_lse_error = std::max(total.max_lse_error, one.max_lse_error);
  total.passed = total.non_finite == 0 && total.max_rel_error <= total.tolerance;
}

void judge_at(VerificationResult& r, double tolerance) {
  r.tolerance = tolerance;
  r.passed = r.non_finite == 0 && r.max_rel_error <= r.tolerance;
}

nlohmann::json VerificationResult::to_json() const {
  // JSON has no NaN: an unwritten output is reported through non_finite, max_abs_error = -1.
  return {{"passed", passed},
          {"max_abs_error", std::isnan(max_abs_error) ? -1.0 : max_abs_error},
          {"max_rel_error", std::isfinite(max_rel_error) ? max_rel_error : 1e300},
          {"max_lse_error", max_lse_error},
          {"tolerance", tolerance},
          {"non_finite", non_finite},
          {"rule", verification_rule()}};
}

std::string VerificationResult::summary() const {
  std::ostringstream s;
  s << (passed ? "passed" : "FAILED") << ": max_rel_error " << max_rel_error << " (tol " << tolerance
    << "), max_abs_error " << max_abs_error << ", max_lse_error " << max_lse_error << ", non-finite " << non_finite;
  return s.str();
}

}  // namespace decode_bench
