#include "kernels/attention_variant.hpp"

#include <algorithm>
#include <random>
#include <sstream>

namespace decode_bench {

std::string AttentionVariant::describe() const {
  std::ostringstream s;
  const auto sep = [&] { return s.tellp() > 0 ? ", " : ""; };
  if (q_len != 1) s << sep() << "q_len " << q_len;
  if (window != 0) s << sep() << "window " << window;
  if (sinks) s << sep() << "sinks";
  if (logits_soft_cap != 0) s << sep() << "logits_soft_cap " << logits_soft_cap;
  return s.str();
}

std::vector<float> sink_logits(int heads_q, std::uint64_t seed) {
  // Its own stream of the seed (the K/V, q and length generators use others).
  std::mt19937_64 rng(seed ^ 0x51dc5eedULL);
  std::uniform_real_distribution<float> logit(0.0f, 4.0f);
  std::vector<float> z(static_cast<std::size_t>(std::max(heads_q, 0)));
  for (float& x : z) x = logit(rng);
  return z;
}

std::optional<std::string> variant_invalid_reason(const AttentionVariant& v, const std::vector<std::int32_t>& lengths) {
  if (v.q_len < 1 || v.q_len > kMaxQueryLen)
    return "q_len " + std::to_string(v.q_len) + " is outside 1.." + std::to_string(kMaxQueryLen);
  if (v.window < 0) return "window " + std::to_string(v.window) + " must be >= 0 (0: full attention)";
  if (!(v.logits_soft_cap >= 0)) {
    std::ostringstream s;
    s << "logits_soft_cap " << v.logits_soft_cap << " must be >= 0 (0: off)";
    return s.str();
  }
  for (std::size_t b = 0; b < lengths.size(); ++b)
    if (lengths[b] < v.q_len)
      return "q_len " + std::to_string(v.q_len) + " exceeds the length " + std::to_string(lengths[b]) + " of sequence " +
             std::to_string(b) + " (its q_len new tokens are the last q_len of its cache)";
  return std::nullopt;
}

}  // namespace decode_bench
