#pragma once
// The softmaxes of every kernel family run in the log2 domain (exp2f): scores, caps and sinks are
// scaled by log2(e) on the way in, and a row's log-sum-exp by ln(2) on the way out (natural log).
// One definition, so no kernel carries the literals.

namespace decode_bench::device {

// log2(e) in double, for the launches' softmax_scale x log2(e), taken in double and rounded to
// float once (the kernels' q scale); the kernels' float is the same literal rounded once more.
inline constexpr double kLog2eDouble = 1.4426950408889634;
inline constexpr float kLog2e = static_cast<float>(kLog2eDouble);
inline constexpr float kLn2 = 0.6931471805599453f;

}  // namespace decode_bench::device
