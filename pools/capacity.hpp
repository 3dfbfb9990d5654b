#pragma once
// Capacity: how many sequences a pool holds in a memory budget. One pure function runs the real
// pool code (admit until the pool refuses) on a chosen backend: `accounting` gives the exact
// count anywhere (CI); `device` does the same with real cudaMalloc'd arenas.
//
// Model (seed paper, sec. VII-D, Figure 5): the budget covers the K and V arenas only.
//   contiguous: slots = budget / (2 * H_kv * L * max_seq_len * D * bytes)
//   paged:      pages = budget / (2 * H_kv * L * page_size * D * bytes),
//               a sequence of n tokens takes ceil(n / page_size) pages
// (L layers fold into heads: the same bytes per token.) Block tables are metadata beside it.
// With a shared prefix of P tokens, every sequence is P + suffix tokens; with sharing one parent
// holds the prefix and each sequence is fork(parent) + suffix (the parent is not counted);
// without sharing each sequence is admitted whole.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "pools/kv_layout.hpp"
#include "pools/length_distribution.hpp"
#include "pools/memory_backend.hpp"
#include "pools/page_allocator.hpp"
#include "pools/pool_stats.hpp"

namespace decode_bench {

enum class PoolKind { contiguous, paged };
constexpr std::string_view pool_kind_name(PoolKind k) { return k == PoolKind::contiguous ? "contiguous" : "paged"; }

struct CapacityQuery {
  std::uint64_t budget_bytes = std::uint64_t{4} << 30;
  KVLayout layout{1, 128, DType::fp32};
  int layers = 1;
  LengthDistribution lengths = LengthDistribution::fixed(512);
  std::int64_t max_seq_len = 512;
  int page_size = 16;              // paged only
  std::int64_t prefix = 0;         // shared prefix tokens, 0 for none
  bool share_prefix = true;        // fork from one parent (true) or admit whole copies (false)
  std::uint64_t seed = 1;
  PageOrder page_order = PageOrder::sequential;
  std::int32_t max_seqs = 0;       // paged slot limit; 0 = min(num_pages, 65536)

  KVLayout pool_layout() const { return {layout.heads_kv * layers, layout.head_dim, layout.dtype}; }
  std::string invalid_reason() const;
};

struct CapacityResult {
  PoolKind pool = PoolKind::contiguous;
  BackendKind backend = BackendKind::accounting;
  std::int64_t sequences = 0;       // admitted before the first refusal (the prefix parent excluded)
  PoolStats stats;                  // at the moment of refusal
  std::string stopped_by;           // the refusing PoolError's kind and message
  double mean_length = 0;           // of the sequences held (prefix + suffix)

  // {backend, sequences, bytes_reserved, bytes_used, fragmentation, ..., mean_length, stopped_by}:
  // the object `decode-bench capacity --output` writes per backend and a sweep point's `capacity`.
  nlohmann::json to_json() const;
};

// Throws PoolError(InvalidArgument) for a bad query, PoolError(OutOfDeviceMemory) when the
// device cannot allocate the budget.
CapacityResult measure_capacity(PoolKind pool, const CapacityQuery& query, BackendKind backend);

// The exact host simulation always; with `with_device` the same count again on real cudaMalloc'd
// arenas. The simulation is the reference, the device run proves the arenas really exist; callers
// decide `with_device` from device_unavailable_reason() (harness/device_query.hpp).
struct CapacityCheck {
  CapacityResult host;                   // accounting backend
  std::optional<CapacityResult> device;  // device backend, when asked for
  bool agree() const { return !device || device->sequences == host.sequences; }
  const CapacityResult& measured() const { return device ? *device : host; }  // the closest to real memory
};
CapacityCheck measure_capacity_checked(PoolKind pool, const CapacityQuery& query, bool with_device);

// "4GiB", "512MiB", "1.5GB", "4096": binary suffixes (KiB.., and bare K/M/G/T), decimal (KB..),
// optional B. nullopt for anything else (or a non-integral byte count).
std::optional<std::uint64_t> parse_byte_size(std::string_view text);
std::string format_bytes(std::uint64_t bytes);

}  // namespace decode_bench
