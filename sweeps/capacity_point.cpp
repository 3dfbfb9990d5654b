#include "sweeps/capacity_point.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "pools/latent_cache.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

constexpr std::int64_t kInt32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Every message names the key and the value as the point holds it: the driver records it as the
// point's reason, and that is all a reader of the results file gets.
[[noreturn]] void bad(const std::string& key, const json& value, const std::string& why) {
  throw std::invalid_argument("capacity point: " + key + " " + value.dump() + ": " + why);
}

// The integer at `key` in [lo, hi], or `fallback` when the point does not have it (axis default).
std::int64_t integer(const json& p, const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
  if (!p.contains(key)) return fallback;
  const json& v = p[key];
  if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t(kInt64Max)))
    bad(key, v, "must be an integer");
  const auto x = v.get<std::int64_t>();
  if (x < lo || x > hi)
    bad(key, v, hi == kInt64Max ? "must be >= " + std::to_string(lo)
                                : "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return x;
}

double number(const json& p, const std::string& key, double fallback) {
  if (!p.contains(key)) return fallback;
  if (!p[key].is_number() || !std::isfinite(p[key].get<double>())) bad(key, p[key], "must be a finite number");
  return p[key].get<double>();
}

std::string text(const json& p, const std::string& key, const std::string& fallback) {
  if (!p.contains(key)) return fallback;
  if (!p[key].is_string()) bad(key, p[key], "must be a string");
  return p[key].get<std::string>();
}

// Suffix lengths with mean `mean` (T - prefix_len), drawn as the decode points draw whole lengths.
LengthDistribution suffix_lengths(const json& p, std::int64_t mean) {
  const std::string dist = text(p, "length_dist", "fixed");
  if (dist == "fixed") return LengthDistribution::fixed(mean);
  if (dist == "uniform") return LengthDistribution::uniform(1, 2 * mean - 1);
  if (dist != "zipf") bad("length_dist", dist, "expected fixed, uniform or zipf");
  const double alpha = number(p, "zipf_alpha", 1.5);
  if (!(alpha > 0)) bad("zipf_alpha", p["zipf_alpha"], "must be > 0");
  try {
    return LengthDistribution::zipf(static_cast<double>(mean), alpha);
  } catch (const std::invalid_argument& e) {
    bad("zipf_alpha", alpha, std::string("with mean ") + std::to_string(mean) + ": " + e.what());
  }
}

}  // namespace

CapacityPoint parse_capacity_point(const json& p) {
  CapacityPoint c;
  const std::string layout = text(p, "layout", "contiguous");
  if (layout != "contiguous" && layout != "paged") bad("layout", layout, "expected contiguous or paged");
  c.pool = layout == "paged" ? PoolKind::paged : PoolKind::contiguous;

  CapacityQuery& q = c.query;
  const std::string dtype = text(p, "dtype", "fp16");
  const auto parsed = parse_dtype(dtype);
  if (!parsed) bad("dtype", dtype, "expected " + std::string(dtype_choices()));
  const std::string attention = text(p, "attention", "mha");
  if (attention == "mla") {
    // One latent row of kv_lora_rank + rope_dim per token per layer, counted as K and V halves.
    const std::int64_t row = integer(p, "kv_lora_rank", 512, 1, 4096) + integer(p, "rope_dim", 64, 0, 1024);
    try {
      q.layout = latent_capacity_layout(static_cast<int>(row), *parsed);
    } catch (const std::invalid_argument& e) {
      bad("rope_dim", p.value("rope_dim", json(64)), e.what());
    }
  } else if (attention == "mha") {
    q.layout = {static_cast<int>(integer(p, "heads_kv", 1, 1, kInt32Max)),
                static_cast<int>(integer(p, "head_dim", 128, 1, kInt32Max)), *parsed};
  } else {
    bad("attention", attention, "expected mha or mla");
  }
  q.budget_bytes = static_cast<std::uint64_t>(integer(p, "budget_bytes", std::int64_t{4} << 30, 1, kInt64Max));
  q.page_size = static_cast<int>(integer(p, "page_size", 16, 1, kInt32Max));
  const std::string order = text(p, "page_order", "sequential");
  const auto page_order = parse_page_order(order);
  if (!page_order) bad("page_order", order, "expected sequential, shuffled or churned");
  q.page_order = *page_order;
  q.seed = static_cast<std::uint64_t>(integer(p, "seed", 0, 0, kInt64Max));

  const std::int64_t T = integer(p, "T", 4096, 1, kInt32Max);
  q.prefix = integer(p, "prefix_len", 0, 0, kInt64Max);
  if (q.prefix >= T) bad("prefix_len", q.prefix, "must be below T " + std::to_string(T) + " (T = prefix_len + suffix_len)");
  // Contiguous pools only share by copying, so only a paged point forks the prefix.
  q.share_prefix = c.pool == PoolKind::paged;
  q.lengths = suffix_lengths(p, T - q.prefix);

  const double fragmentation = number(p, "fragmentation", 1.0);
  if (!(fragmentation >= 1)) bad("fragmentation", p["fragmentation"], "must be >= 1 (max_seq_len over T)");
  const double max_len = std::ceil(static_cast<double>(T) * fragmentation);
  if (max_len > static_cast<double>(kInt32Max))
    bad("fragmentation", p["fragmentation"],
        "max_seq_len = ceil(T * fragmentation) = " + std::to_string(max_len) + " exceeds 2^31 - 1");
  q.max_seq_len = static_cast<std::int64_t>(max_len);

  if (const std::string r = q.invalid_reason(); !r.empty()) throw std::invalid_argument("capacity point: " + r);
  return c;
}

}  // namespace decode_bench::sweeps
