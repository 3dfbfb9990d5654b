#pragma once
// The attention state of one query head over a subset I of the keys (FlashInfer, sec. 2.2):
//   lse(I) = log sum_{i in I} exp(s_i)                 s_i = q.k_i * scale
//   o(I)   = sum_{i in I} exp(s_i - lse(I)) * v_i      (already normalized)
// Two states over disjoint subsets merge exactly:
//   lse = log(exp(lse_a) + exp(lse_b)),  o = exp(lse_a - lse) * o_a + exp(lse_b - lse) * o_b.
// The operator is associative and commutative, so split-K partials can merge in any order.
// Empty state (no keys): lse = -inf, o = 0. It merges as the identity without producing NaN,
// which is why the weights below never evaluate exp(-inf - -inf).
#include <cmath>
#include <limits>

#include "kernels/host_device.hpp"

namespace decode_bench {

template <class Real>
struct MergeWeights {
  Real lse;       // log-sum-exp of the union
  Real weight_a;  // exp(lse_a - lse)
  Real weight_b;  // exp(lse_b - lse)
};

template <class Real>
DB_HD Real negative_infinity() { return -std::numeric_limits<Real>::infinity(); }

// Overloads rather than std:: so float stays float in device code (expf, not exp on doubles).
DB_HD float state_exp(float x) { return expf(x); }
DB_HD double state_exp(double x) { return exp(x); }
DB_HD float state_log(float x) { return logf(x); }
DB_HD double state_log(double x) { return log(x); }

template <class Real>
DB_HD MergeWeights<Real> merge_weights(Real lse_a, Real lse_b) {
  const Real ninf = negative_infinity<Real>();
  if (lse_a == ninf && lse_b == ninf) return {ninf, Real(0), Real(0)};
  const Real m = lse_a > lse_b ? lse_a : lse_b;
  // Subtract the larger before exp so neither term overflows; the smaller side may be -inf.
  const Real ea = lse_a == ninf ? Real(0) : state_exp(lse_a - m);
  const Real eb = lse_b == ninf ? Real(0) : state_exp(lse_b - m);
  const Real sum = ea + eb;
  return {m + state_log(sum), ea / sum, eb / sum};
}

// A state with a compile-time head dimension, usable on host and device.
template <class Real, int D>
struct AttentionState {
  Real o[D];  // normalized output over the keys seen so far
  Real lse;   // log-sum-exp of their scores; -inf for the empty state

  DB_HD static AttentionState empty() {
    AttentionState s;
    for (int i = 0; i < D; ++i) s.o[i] = Real(0);
    s.lse = negative_infinity<Real>();
    return s;
  }

  DB_HD void merge(const AttentionState& other) {
    const MergeWeights<Real> w = merge_weights(lse, other.lse);
    for (int i = 0; i < D; ++i) o[i] = w.weight_a * o[i] + w.weight_b * other.o[i];
    lse = w.lse;
  }
};

// Runtime-D merge of `b` into `a` (host code and kernels whose threads each own a slice of o).
template <class Real>
DB_HD void merge_state_into(Real* o_a, Real& lse_a, const Real* o_b, Real lse_b, int d) {
  const MergeWeights<Real> w = merge_weights(lse_a, lse_b);
  for (int i = 0; i < d; ++i) o_a[i] = w.weight_a * o_a[i] + w.weight_b * o_b[i];
  lse_a = w.lse;
}

}  // namespace decode_bench
