#pragma once
// Verification of an MLA decode point on the host (the GPU reference computes MHA decode only):
// the float64 MLA reference (kernels/mla/mla_reference.hpp) over a budgeted sample of rows, and a
// finiteness check of every output. Host-only.
//
// Rule (the kernel's error bound, kernels/mla/mla_decode.hpp; docs/kernels/mla.md): with q
// representable in the MMA operand type (mla_query rounds it so), |o - o_ref| <= (tol + 4 e_s)
// sum_t w_t |v_t| + 1e-6 per column, tol = 2u (u: 2^-8 for BF16 operands, 2^-11 for FP16, which FP8
// latents are widened to), at least the 16-bit o type's 4u (harness/verify.hpp) where o is rounded
// to one; e_s = key_dim x 2^-24 x max_t sum_c |q_c k_c| x softmax_scale, the FP32 score sums' error.
// lse: |lse - lse_ref| <= 1e-4 max(1, |lse_ref|), the GPU tests' rule; for a backend whose
// denominator sums weights rounded to the operand type (Backend::denominator_sums_rounded_weights),
// the larger of that and u + e_s + 1e-6 max(1, |lse_ref|): a sum of terms each off by at most u
// relative is off by at most u relative, and log(1 + d) <= d; 1e-6 covers FP32 log, exp and sums.
// max_rel_error is the largest ratio of an error to its bound times tol, so passed means
// max_rel_error <= tolerance (= tol).
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/verify.hpp"
#include "kernels/mla/mla_shape.hpp"
#include "pools/latent_cache.hpp"

namespace decode_bench::sweeps {

// The rows the reference checks: sequences {0, B / 2, B - 1}, and in each an even spread of heads
// (the first and the last included) at every query position, as many as `budget` row-tokens (rows
// x visible tokens, summed) allow, at least one head per sequence.
struct MlaRowSample {
  struct Sequence {
    int seq = 0;
    std::vector<int> heads;  // ascending
  };
  std::vector<Sequence> sequences;
  std::int64_t rows() const;  // heads x q_len, summed
};
inline constexpr std::int64_t kMlaVerifyRowTokens = std::int64_t{1} << 19;
MlaRowSample mla_rows_to_verify(const MlaShape& shape, const std::vector<std::int32_t>& lengths,
                                std::int64_t budget = kMlaVerifyRowTokens);

// q of the point: uniform in [-1, 1) from (seed, row, column), rounded to the kernel's MMA operand
// type (BF16 for a BF16 cache, FP16 otherwise), held in FP32: (batch, q_len, heads_q, key_dim).
std::vector<float> mla_query(const MlaShape& shape, int batch, DType latent_dtype, std::uint64_t seed);

// The rule above, as a point's verification records it.
inline constexpr const char* kMlaVerificationRule =
    "mla: |o - o_ref| <= (tol + 4 e_s) sum_t w_t |v_t| + 1e-6, tol = 2u, at least 4u of a 16-bit o type; "
    "|lse - lse_ref| <= 1e-4 max(1, |lse_ref|), or where the backend's denominator sums rounded weights "
    "(lse_rule rounded_weights) the larger of that and u + e_s + 1e-6 max(1, |lse_ref|); u = 2^-8 bf16, 2^-11 "
    "fp16 and fp8_e4m3 (widened to fp16); e_s = 576 x 2^-24 x max_t sum |q k| x scale (fp32 score sums); "
    "float64 reference over a sample of rows, every output finite";

// 2u of the operand type of `latent_dtype` (above).
double mla_verification_tolerance(DType latent_dtype);
// tol above: 2u, at least the 4u of a 16-bit `io_dtype` (harness/verify.hpp's io rule).
double mla_verification_tolerance(DType latent_dtype, DType io_dtype);

// What the verifier is told of the run beside its data: o's type and the backend's arithmetic.
struct MlaVerifyRule {
  DType io_dtype = DType::fp32;
  bool denominator_sums_rounded_weights = false;
};

// The verification, with the o and lse terms apart: each the largest error over its bound, so
// each passes at <= 1 (max_rel_error is the larger times tolerance).
struct MlaVerification : VerificationResult {
  double max_o_ratio = 0;
  double max_lse_ratio = 0;
  bool rounded_weights_lse = false;  // the lse rule applied
  // lse_rule ("relative" or "rounded_weights"), max_o_ratio, max_lse_ratio, limited_by ("o" or "lse").
  nlohmann::json terms_json() const;
};

// o (batch, q_len, heads_q, value_dim) and lse as the kernel wrote them against the reference of
// `sample`'s rows; every element of o and lse is also checked to be finite (lse -inf, o 0 where a
// row sees no token).
MlaVerification verify_mla_on_host(const MlaShape& shape, const LatentCache& cache, const std::vector<float>& q,
                                   const std::vector<float>& o, const std::vector<float>& lse, const MlaRowSample& sample,
                                   const MlaVerifyRule& rule = {});

}  // namespace decode_bench::sweeps
