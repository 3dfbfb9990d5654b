#pragma once
// Turns token indices into element offsets of K/V rows for one (sequence, KV head), in two steps
// so the paged case can resolve the block table ahead of the data loads:
//   Ticket fetch(t)        issues whatever memory read the location needs (page-table entry)
//   int64 offset(ticket)   finishes the address arithmetic once that read has arrived
// Kernels fetch the tickets of tile i+1 while the K/V loads of tile i are in flight, so the
// page-table latency hides behind the data latency and every row is resolved once per tile,
// never per element. Contiguous rows need no read at all.
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

}  // namespace decode_bench::device

namespace decode_bench {

// The page size of a paged accessor as the fast divider its RowLocator takes (host side, at the
// launch); contiguous accessors divide by nothing.
template <class T>
FastDivmod page_divider(const ContiguousKV<T>&) { return FastDivmod(1); }
template <class T>
FastDivmod page_divider(const PagedKV<T>& kv) { return FastDivmod(static_cast<std::uint32_t>(kv.page_size)); }

}  // namespace decode_bench
