#pragma once
// A paged pool for sliding-window layers: as a sequence grows, the pages wholly behind its window
// go back to the free list (PagedPool::release_pages_before), so a windowed layer holds about
// window / page_size pages a sequence however long it gets, where a full layer holds them all.
//
// A sequence of L tokens whose newest token (position L - 1) sees the last `window` positions needs
// positions [L - window, L) (kernels/attention_variant.hpp, visible_range); the next token needs
// one position fewer, so nothing released is ever needed again. With q_len new tokens (positions
// L - q_len .. L - 1) the earliest is the first one's: its window begins at L - q_len + 1 - window,
// and the later tokens' windows begin after it. Pages i with (i + 1) x page_size <= first_kept are
// released; the block table keeps their positions
// (PagedPool::kReleasedPage), and the windowed kernels, whose token range starts at the window,
// never read them (docs/kernels/rows_mma.md, "Attention variants").
#include <algorithm>
#include <cstdint>

#include "pools/paged_pool.hpp"

namespace decode_bench {

// The first position a windowed layer still needs for a sequence of `length` tokens whose last
// q_len are the query tokens (window 0: full attention, every position). The one rule: it is
// visible_range(length, q_len, 0, window).begin, the first query token's window
// (tests/test_window_release.cpp holds them equal).
constexpr std::int64_t window_first_kept(std::int64_t length, std::int64_t window, int q_len = 1) {
  return window <= 0 ? 0 : std::max<std::int64_t>(0, length - q_len + 1 - window);
}

// Pages a sequence of `length` tokens holds in a windowed layer once released behind its window:
// ceil(L / page) - floor(first_kept / page).
constexpr std::int64_t window_live_pages(std::int64_t length, std::int64_t window, std::int64_t page_size) {
  return (length + page_size - 1) / page_size - window_first_kept(length, window) / page_size;
}

// The most pages `window` consecutive positions can touch: ceil((window - 1) / page) + 1 (a window
// starting on a page's last position). A sequence growing token by token past window + page - 1
// holds this many at some length, and never more.
constexpr std::int64_t window_peak_pages(std::int64_t window, std::int64_t page_size) {
  return (window - 1 + page_size - 1) / page_size + 1;
}

// After a sequence grew: releases what its window no longer sees (the window of its first of q_len
// query tokens, window_first_kept); returns the pages released.
inline std::int64_t release_behind_window(PagedPool& pool, SequenceHandle h, std::int64_t window, int q_len = 1) {
  return pool.release_pages_before(h, window_first_kept(pool.length(h), window, q_len));
}

}  // namespace decode_bench
