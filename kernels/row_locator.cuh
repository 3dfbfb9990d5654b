#pragma once
// Turns token indices into element offsets of K/V rows for one (sequence, KV head), in two steps
// so the paged case can resolve the block table ahead of the data loads:
//   Ticket fetch(t)        issues whatever memory read the location needs (page-table entry)
//   int64 offset(ticket)   finishes the address arithmetic once that read has arrived
// Kernels fetch the tickets of tile i+1 while the K/V loads of tile i are in flight, so the
// page-table latency hides behind the data latency and every row is resolved once per tile,
// never per element. Contiguous rows need no read at all.
// The row-attention kernels stage tiles with all threads of a block and use TileRowMap below
// instead: one tile's block-table entries spread over each warp's lanes.
#include <cstdint>

#include "kernels/fast_divmod.hpp"
#include "kernels/kv_accessor.hpp"

namespace decode_bench::device {

template <class KV> struct RowLocator;

template <class T>
struct RowLocator<ContiguousKV<T>> {
  using Ticket = std::int64_t;
  std::int64_t base;
  int head_dim;

  __device__ RowLocator(const ContiguousKV<T>& kv, int seq, int kv_head, const FastDivmod&)
      : base(kv.row_offset(seq, kv_head, 0)), head_dim(kv.head_dim) {}
  __device__ __forceinline__ Ticket fetch(std::int64_t t) const { return base + t * head_dim; }
  __device__ __forceinline__ std::int64_t offset(Ticket ticket) const { return ticket; }
};

template <class T>
struct RowLocator<PagedKV<T>> {
  struct Ticket {
    std::int32_t page;
    std::uint32_t slot;
  };
  const std::int32_t* seq_pages;  // this sequence's block-table row
  std::int64_t page_stride;       // elements per physical page (all heads)
  std::int64_t head_base;         // kv_head * page_size * D
  int head_dim;
  FastDivmod page_size;

  __device__ RowLocator(const PagedKV<T>& kv, int seq, int kv_head, const FastDivmod& page_div)
      : seq_pages(kv.page_indices + kv.indptr[seq]),
        page_stride(kv.page_stride()),
        head_base(static_cast<std::int64_t>(kv_head) * kv.page_size * kv.head_dim),
        head_dim(kv.head_dim),
        page_size(page_div) {}

  __device__ __forceinline__ Ticket fetch(std::int64_t t) const {
    std::uint32_t logical_page, slot;
    page_size.divmod(static_cast<std::uint32_t>(t), logical_page, slot);
    return {__ldg(seq_pages + logical_page), slot};
  }
  __device__ __forceinline__ std::int64_t offset(Ticket ticket) const {
    return ticket.page * page_stride + head_base + static_cast<std::int64_t>(ticket.slot) * head_dim;
  }
};

// The block-table entries of one tile of at most 64 tokens, held in a warp's registers (lane l:
// the tile's logical pages first + l and first + 32 + l; a tile of 64 tokens spans at most 64
// pages), fetched one tile ahead of that tile's K/V loads. A load into a register stalls only when
// the register is read, so the page-table round trip overlaps the previous tile's math instead of
// sitting in front of every cp.async of the tile (it did: at one block per SM a paged FP16 decode
// ran 118.3 us against 94.5 contiguous, H100, commit 75635a1). offset() shuffles: every lane of
// the warp calls it together. Contiguous K/V needs no entries.
template <class KV> struct TileRowMap;

template <class T>
struct TileRowMap<ContiguousKV<T>> {
  __device__ __forceinline__ void fetch(const RowLocator<ContiguousKV<T>>&, std::int64_t, std::int64_t) {}
  __device__ __forceinline__ std::int64_t offset(const RowLocator<ContiguousKV<T>>& loc, std::int64_t t) const {
    return loc.offset(loc.fetch(t));
  }
};

template <class T>
struct TileRowMap<PagedKV<T>> {
  static constexpr int kMaxTokens = 64;
  std::int32_t page_lo = 0, page_hi = 0;  // entries first + lane, first + 32 + lane
  std::uint32_t first = 0;                // the logical page of the tile's first token

  // Tokens [t0, min(t0 + kMaxTokens, t_end)); nothing when t0 >= t_end (past the last tile).
  __device__ __forceinline__ void fetch(const RowLocator<PagedKV<T>>& loc, std::int64_t t0, std::int64_t t_end) {
    if (t0 >= t_end) return;
    const std::int64_t t_last = t0 + kMaxTokens < t_end ? t0 + kMaxTokens - 1 : t_end - 1;
    first = loc.page_size.div(static_cast<std::uint32_t>(t0));
    const std::uint32_t last = loc.page_size.div(static_cast<std::uint32_t>(t_last));
    const std::uint32_t lane = threadIdx.x & 31u;
    page_lo = first + lane <= last ? __ldg(loc.seq_pages + first + lane) : 0;
    page_hi = first + 32u + lane <= last ? __ldg(loc.seq_pages + first + 32u + lane) : 0;
  }
  // Token t of the fetched tile (t0 <= t < t0 + kMaxTokens, t < t_end).
  __device__ __forceinline__ std::int64_t offset(const RowLocator<PagedKV<T>>& loc, std::int64_t t) const {
    std::uint32_t logical_page, slot;
    loc.page_size.divmod(static_cast<std::uint32_t>(t), logical_page, slot);
    const std::uint32_t e = logical_page - first;
    const std::int32_t lo = __shfl_sync(0xffffffffu, page_lo, static_cast<int>(e & 31u));
    const std::int32_t hi = __shfl_sync(0xffffffffu, page_hi, static_cast<int>(e & 31u));
    return loc.offset({e < 32u ? lo : hi, slot});
  }
};

}  // namespace decode_bench::device
