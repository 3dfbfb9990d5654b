#pragma once
// The base of the log-sum-exp a backend writes. decode-bench's results and its reference use the
// natural log; some kernels (FlashInfer's) keep log2 throughout, as exp2 is the cheaper
// instruction. A backend says which (Backend::lse_base) and the pipeline converts after the
// checked launch, on the host and outside every timed region, so the timed launches are the
// backend's own kernels alone.
#include <numbers>
#include <span>
#include <string_view>

namespace decode_bench {

enum class LseBase { natural, two };

constexpr std::string_view lse_base_name(LseBase base) { return base == LseBase::two ? "2" : "e"; }

// In place: log2(x) * ln 2 = ln(x). NaN (a poisoned, unwritten element) stays NaN, +-inf stays.
inline void lse_to_natural(std::span<float> lse, LseBase base) {
  if (base == LseBase::natural) return;
  for (float& x : lse) x = static_cast<float>(static_cast<double>(x) * std::numbers::ln2);
}

}  // namespace decode_bench
