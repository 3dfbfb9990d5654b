#pragma once
// Occupancy of a pool. All byte counts cover K and V together; the budget is the K+V arena, and
// block tables / lengths are metadata reported beside it (they are not part of the seed paper's
// 4 GB, and the figure's numbers only come out with them left out).
#include <cstdint>

namespace decode_bench {

struct PoolStats {
  std::int64_t sequences = 0;
  std::int64_t logical_tokens = 0;  // sum of sequence lengths (a shared token counts per sharer)
  std::int64_t stored_tokens = 0;   // distinct token rows held in the arena (shared pages once)
  // Allocation units: pages for PagedPool, slots (one max_seq_len slab each) for ContiguousPool.
  std::int64_t units_total = 0;
  std::int64_t units_used = 0;
  std::int64_t units_free = 0;
  std::uint64_t arena_bytes = 0;     // K + V arenas as allocated
  std::uint64_t bytes_reserved = 0;  // arena bytes held by live sequences
  std::uint64_t bytes_used = 0;      // stored_tokens * token_kv_bytes
  std::uint64_t metadata_bytes = 0;  // block tables, lengths, batch CSR buffers

  std::uint64_t internal_waste() const { return bytes_reserved - bytes_used; }
  // 1 - used / reserved: the share of held memory that holds no token.
  double fragmentation() const {
    return bytes_reserved == 0 ? 0.0 : 1.0 - static_cast<double>(bytes_used) / static_cast<double>(bytes_reserved);
  }
};

}  // namespace decode_bench
