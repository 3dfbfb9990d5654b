#include "pools/capacity.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "pools/contiguous_pool.hpp"
#include "pools/paged_pool.hpp"

namespace decode_bench {

std::string CapacityQuery::invalid_reason() const {
  if (auto r = layout.invalid_reason(); !r.empty()) return r;
  if (layers < 1) return "layers must be >= 1 (got " + std::to_string(layers) + ")";
  if (auto r = max_seq_len_invalid_reason(max_seq_len); !r.empty()) return r;
  if (page_size < 1) return "page_size must be >= 1 (got " + std::to_string(page_size) + ")";
  if (prefix < 0 || prefix >= max_seq_len)
    return "prefix must be in [0, max_seq_len) (got " + std::to_string(prefix) + ", max_seq_len " +
           std::to_string(max_seq_len) + ")";
  if (budget_bytes == 0) return "budget must be > 0 bytes";
  return {};
}

namespace {

std::unique_ptr<KVPool> make_pool(PoolKind kind, const CapacityQuery& q, BackendKind backend) {
  const KVLayout layout = q.pool_layout();
  if (kind == PoolKind::contiguous)
    return std::make_unique<ContiguousPool>(ContiguousPoolConfig::for_budget(layout, q.budget_bytes, q.max_seq_len),
                                            make_backend(backend));
  PagedPoolConfig c = PagedPoolConfig::for_budget(layout, q.budget_bytes, q.page_size, q.max_seq_len, q.max_seqs);
  c.page_order = q.page_order;
  c.order_seed = q.seed;
  return std::make_unique<PagedPool>(c, make_backend(backend));
}

}  // namespace

CapacityResult measure_capacity(PoolKind kind, const CapacityQuery& q, BackendKind backend) {
  if (auto r = q.invalid_reason(); !r.empty()) throw PoolError(PoolErrorKind::InvalidArgument, "capacity: " + r);
  auto pool = make_pool(kind, q, backend);
  CapacityResult result;
  result.pool = kind;
  result.backend = backend;
  LengthSampler sampler(q.lengths, q.seed);
  std::int64_t total_length = 0;
  try {
    std::optional<SequenceHandle> parent;
    if (q.prefix > 0 && q.share_prefix) parent = pool->admit(nullptr, nullptr, q.prefix);
    for (;;) {
      const std::int64_t suffix = std::min(sampler.next(), q.max_seq_len - q.prefix);
      if (parent) {
        const SequenceHandle child = pool->fork(*parent);
        try {
          pool->extend(child, suffix);
        } catch (const PoolError&) {
          pool->release(child);  // a sequence that did not fit is not held
          throw;
        }
      } else {
        pool->admit(nullptr, nullptr, q.prefix + suffix);
      }
      ++result.sequences;
      total_length += q.prefix + suffix;
    }
  } catch (const PoolError& e) {
    if (e.kind() == PoolErrorKind::InvalidArgument || e.kind() == PoolErrorKind::OutOfDeviceMemory) throw;
    result.stopped_by = e.what();
  }
  pool->backend().synchronize();
  result.stats = pool->stats();
  result.mean_length = result.sequences ? static_cast<double>(total_length) / static_cast<double>(result.sequences) : 0;
  return result;
}

CapacityCheck measure_capacity_checked(PoolKind pool, const CapacityQuery& query, bool with_device) {
  CapacityCheck check{measure_capacity(pool, query, BackendKind::accounting), std::nullopt};
  if (with_device) check.device = measure_capacity(pool, query, BackendKind::device);
  return check;
}

nlohmann::json CapacityResult::to_json() const {
  return {{"backend", backend_name(backend)},
          {"sequences", sequences},
          {"bytes_reserved", stats.bytes_reserved},
          {"bytes_used", stats.bytes_used},
          {"fragmentation", stats.fragmentation()},
          {"internal_waste_bytes", stats.internal_waste()},
          {"arena_bytes", stats.arena_bytes},
          {"metadata_bytes", stats.metadata_bytes},
          {"units_total", stats.units_total},
          {"units_used", stats.units_used},
          {"logical_tokens", stats.logical_tokens},
          {"stored_tokens", stats.stored_tokens},
          {"mean_length", mean_length},
          {"stopped_by", stopped_by}};
}

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || !(value >= 0)) return std::nullopt;
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  struct Unit {
    std::string_view name;
    double scale;
  };
  static constexpr Unit kUnits[] = {
      {"", 1}, {"B", 1},
      {"K", 0x1p10}, {"KiB", 0x1p10}, {"KB", 1e3},
      {"M", 0x1p20}, {"MiB", 0x1p20}, {"MB", 1e6},
      {"G", 0x1p30}, {"GiB", 0x1p30}, {"GB", 1e9},
      {"T", 0x1p40}, {"TiB", 0x1p40}, {"TB", 1e12}};
  for (const Unit& u : kUnits) {
    if (u.name != suffix) continue;
    const double bytes = value * u.scale;
    if (bytes != std::floor(bytes) || bytes >= 0x1p64) return std::nullopt;
    return static_cast<std::uint64_t>(bytes);
  }
  return std::nullopt;
}

std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f %s" : "%.2f %s", v, units[u]);
  return buf;
}

}  // namespace decode_bench
