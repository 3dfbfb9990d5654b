#pragma once
// The page layout FlashInfer's paged paths take, decode and prefill alike: KV head g of page p at
// element p * page_stride + g * head_stride + e * token_stride, or packed pages (all three 0:
// HND, a page of heads_kv x page_size x head_dim). One check and one stride triple for both, so
// the two launchers cannot disagree on what a layout is. Host-only (no FlashInfer header).
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

namespace decode_bench::flashinfer_launch {

struct PagedLayout {
  int heads_kv = 0;
  int page_size = 0;
  int head_dim = 0;
  std::int64_t page_stride = 0;   // elements; all three 0: packed pages
  std::int64_t head_stride = 0;
  std::int64_t token_stride = 0;
};

// Why FlashInfer's paged_kv_t cannot address this layout (it keeps strides in 32 bits; its page
// offsets are 64-bit), or nullopt. page_size >= 1 is the caller's check.
inline std::optional<std::string> paged_layout_reason(const PagedLayout& l) {
  const bool packed = l.page_stride == 0 && l.head_stride == 0 && l.token_stride == 0;
  if (!packed) {
    if (l.token_stride < l.head_dim || l.head_stride < l.head_dim || l.page_stride < l.head_dim)
      return "page_stride, head_stride and token_stride must all be 0 (packed pages) or >= head_dim";
    constexpr std::int64_t kMax = std::numeric_limits<std::uint32_t>::max();
    if (l.page_stride > kMax || l.head_stride > kMax || l.token_stride > kMax)
      return "page_stride, head_stride and token_stride must fit 32 bits (FlashInfer's paged_kv_t)";
  } else if (static_cast<std::int64_t>(l.heads_kv) * l.page_size * l.head_dim >
             std::numeric_limits<std::uint32_t>::max()) {
    return "a page of heads_kv x page_size x head_dim elements must fit 32 bits (FlashInfer's paged_kv_t)";
  }
  return std::nullopt;
}

// The layout of a launcher's arguments (PagedDecodeArgs, PagedPrefillArgs: the same six fields).
template <class Args>
PagedLayout paged_layout_of(const Args& a) {
  return {a.heads_kv, a.page_size, a.head_dim, a.page_stride, a.head_stride, a.token_stride};
}

// paged_kv_t's kv_strides for QKVLayout::kHND: page, head, token (packed pages when page_stride is 0).
inline std::array<std::int64_t, 3> hnd_strides(const PagedLayout& l) {
  if (l.page_stride == 0)
    return {std::int64_t{l.heads_kv} * l.page_size * l.head_dim, std::int64_t{l.page_size} * l.head_dim,
            std::int64_t{l.head_dim}};
  return {l.page_stride, l.head_stride, l.token_stride};
}

}  // namespace decode_bench::flashinfer_launch
