#include "sweeps/decode_point.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "backends/decode_bench_support.hpp"
#include "sweeps/point_kernel.hpp"

namespace decode_bench::sweeps {

std::int64_t DecodePoint::max_len() const {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

// Each reason names the parameter and its value: it is all a reader of a "skipped" point gets.
std::optional<std::string> decode_lengths_unsupported(const nlohmann::json& p) {
  if (const std::int64_t prefix = p.value("prefix_len", std::int64_t{0}); prefix > 0)
    return "prefix_len " + std::to_string(prefix) + ": shared-prefix points run under kernel shared_prefix or "
           "batch_decode (layout paged)";
  if (p.value("length_dist", std::string("fixed")) == "zipf") {
    try {
      (void)zipf_lengths_of(p);
    } catch (const std::invalid_argument& e) {
      return "length_dist zipf with T " + std::to_string(p.value("T", std::int64_t{4096})) + " and zipf_alpha " +
             std::to_string(p.value("zipf_alpha", 1.5)) + ": " + e.what();
    }
  }
  // Random lengths may fall below q_len (fixed ones are checked when the preset is validated).
  if (p.value("q_len", 1) > 1)
    if (auto why = variant_invalid_reason(parse_attention_variant(p), parse_decode_point(p).lengths)) return why;
  return std::nullopt;
}

LengthDistribution zipf_lengths_of(const nlohmann::json& p) {
  return LengthDistribution::zipf(static_cast<double>(p.value("T", std::int64_t{4096})), p.value("zipf_alpha", 1.5));
}

std::optional<std::string> decode_request_unsupported(const nlohmann::json& p) {
  if (auto reason = decode_lengths_unsupported(p)) return reason;
  if (p.value("end_to_end", false) && p.value("layout", std::string("contiguous")) == "paged")
    return std::string("end_to_end with layout paged: the E2E upload is of contiguous K/V slabs; use layout contiguous");
  if (p.value("end_to_end", false) && p.value("q_len", 1) > 1)
    return "end_to_end with q_len " + std::to_string(p.value("q_len", 1)) +
           ": the E2E copies are of one query token per sequence";
  return std::nullopt;
}

std::optional<std::string> decode_point_unsupported(const nlohmann::json& p) {
  if (auto reason = decode_request_unsupported(p)) return reason;
  const DecodeShape shape{p.value("heads_q", 1), p.value("heads_kv", 1), p.value("head_dim", 128)};
  const DType dtype = parse_dtype(p.value("dtype", std::string("fp16"))).value_or(DType::fp16);
  // A point of no known kernel is judged as flash-decode, as before the kernel table existed.
  return decode_bench_unsupported(kernel_of(p).value_or(KernelKind::flash_decode), shape, dtype,
                                  parse_attention_variant(p));
}

DecodePoint parse_decode_point(const nlohmann::json& p) {
  DecodePoint d;
  d.shape = {p.value("heads_q", 1), p.value("heads_kv", 1), p.value("head_dim", 128)};
  d.dtype = parse_dtype(p.value("dtype", std::string("fp16"))).value_or(DType::fp16);
  d.paged = p.value("layout", std::string("contiguous")) == "paged";
  d.page_size = p.value("page_size", 16);
  d.page_order = p.value("page_order", std::string("sequential"));
  d.fragmentation = p.value("fragmentation", 1.0);
  const auto& blocks = p.contains("blocks") ? p["blocks"] : nlohmann::json("auto");
  d.blocks = blocks.is_number_integer() ? blocks.get<int>() : 0;
  d.timing = p.value("timing", std::string("cold"));
  d.end_to_end = p.value("end_to_end", false);
  d.counters = p.value("counters", true);
  d.seed = p.value("seed", std::uint64_t{0});
  d.variant = parse_attention_variant(p);
  const int batch = p.value("batch", 1);
  const std::int64_t T = p.value("T", std::int64_t{4096});
  const std::string dist = p.value("length_dist", std::string("fixed"));
  if (dist == "uniform") {
    // Mean T: lengths uniform on [1, 2T - 1].
    std::mt19937_64 rng(d.seed + 17);
    std::uniform_int_distribution<std::int64_t> len(1, std::max<std::int64_t>(1, 2 * T - 1));
    for (int b = 0; b < batch; ++b) d.lengths.push_back(static_cast<std::int32_t>(len(rng)));
  } else if (dist == "zipf") {
    // Mean T (of the distribution, not of this draw): P(len = k) ~ k^-alpha on 1..N, the capacity
    // runner's distribution (pools/length_distribution.hpp), seeded like the uniform draw.
    LengthSampler sampler(zipf_lengths_of(p), d.seed + 17);
    for (int b = 0; b < batch; ++b) d.lengths.push_back(static_cast<std::int32_t>(sampler.next()));
  } else {
    d.lengths.assign(batch, static_cast<std::int32_t>(T));
  }
  return d;
}

AttentionVariant parse_attention_variant(const nlohmann::json& p) {
  AttentionVariant v;
  v.q_len = p.value("q_len", 1);
  v.window = p.value("window", std::int64_t{0});
  v.sinks = p.value("sinks", false);
  v.logits_soft_cap = p.value("logits_soft_cap", 0.0);
  return v;
}

}  // namespace decode_bench::sweeps
