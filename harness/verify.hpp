#pragma once
// The verification gate: a kernel's (o, lse) against the float64 reference on the same stored
// values. Outputs are poisoned with NaN before the launch, so an unwritten element fails.
//
// Tolerance rule, one line per dtype (applies to o and to lse):
//   |o - o_ref| <= tol * o_abs,  o_abs = sum_t w_t |v_t| (what fp32 rounding of the weighted sum
//   scales with; plain |o_ref| can cancel to ~0 over random V);  |lse - lse_ref| <= tol * max(1, |lse_ref|)
//   tol = 1e-5 for fp32 K/V; 1e-3 for fp16 and bf16 K/V (room for half-precision arithmetic paths;
//   the current kernels convert to fp32 exactly, so they measure about as fp32 does);
//   1e-5 for fp8 K/V, the fp32 bound: the reference dequantizes the same stored bytes with the same
//   per-head scales, so the only error is the kernel's fp32 arithmetic (the K scale folded into q
//   and the V scale into o add one rounding each). Measured on the H100 sweep: <= 1.4e-7.
//   Except fp8 K/V with a logit soft-cap: 4e-3. The kernels cap with one MUFU tanh
//   (kernels/tanh_approx.cuh, relative error up to about e = 2^-11 in the capped logit s'), which
//   moves o by at most e sum_t w_t |s'_t| |v_t - o| / Z to first order (docs/kernels/rows_mma.md,
//   "Attention variants"): the error follows the logits' size, and FP8's per-head K scales (K amax
//   up to 8) give logits of standard deviation near 2 where the fp16 / bf16 data's are below 1.
//   On the GPU tests' fp8 data (q in [-2, 2]) that bound reaches 2.5e-3, so 4e-3; what the storage
//   type adds stays at the fp32 level (fp8 without a cap keeps 1e-5).
//   q and o in a 16-bit io dtype (Backend::io_dtype; the reference reads the rounded q): o is
//   rounded to it, and a split kernel may keep its partials in it too, two roundings of at most
//   u * o_abs each (unit roundoff u: 2^-11 for fp16, 2^-8 for bf16), and the kernel's fp32
//   arithmetic comes on top (with FP8 K/V's wide logits, enough to pass 2u): the tolerance is then
//   at least 4u, 2e-3 for fp16 (2^-9 = 1.95e-3) and 1.6e-2 for bf16 (2^-6 = 1.56e-2).
// max_rel_error is the largest of those ratios; passed means max_rel_error <= tol and every
// element finite.
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "kernels/attention_variant.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/dtype.hpp"

namespace decode_bench {

double verification_tolerance(DType kv_dtype);
// The rule for a point with attention variants: the K/V rule, but 4e-3 for fp8 with a soft-cap.
double verification_tolerance(DType kv_dtype, const AttentionVariant& variant);
// Both: the larger of the variant's rule and the io rounding bound.
double verification_tolerance(DType kv_dtype, DType io_dtype, const AttentionVariant& variant);
// With q and o in io_dtype: the larger of the K/V rule and the io rounding bound above.
double verification_tolerance(DType kv_dtype, DType io_dtype);
std::string verification_rule();

struct VerificationResult {
  bool passed = false;
  double max_abs_error = 0;  // max |o - o_ref| (NaN if an element was not written)
  double max_rel_error = 0;  // max of the tolerance-rule ratios above
  double max_lse_error = 0;  // max |lse - lse_ref|
  double tolerance = 0;
  long long non_finite = 0;  // elements of o or lse that are NaN/Inf (unwritten or overflowed), or whose
                             // reference is (a reference that cannot judge them)
  nlohmann::json to_json() const;
  std::string summary() const;  // one line, for failure messages
};

// o: (H_q, D), lse: (H_q) for one sequence, as copied back from the device.
VerificationResult verify_decode(std::span<const float> o, std::span<const float> lse, const ReferenceOutput& ref,
                                 DType kv_dtype);

// Accumulates sequence after sequence of a batch into one result.
void accumulate(VerificationResult& total, const VerificationResult& one);

// r judged again at `tolerance` (the io-aware rule, applied after a comparison made with the K/V
// rule): max_rel_error is the same ratio whatever the tolerance, so only passed changes.
void judge_at(VerificationResult& r, double tolerance);

}  // namespace decode_bench
