#pragma once
// The paged pool's page bookkeeping, independent of where pages live: a LIFO free list,
// a refcount per page (forks share pages) and a fill count per page (tokens written; every
// sharer of a page sees the same fill because a write to a shared page copies it first).
//
// Physical page order is a knob: sequential hands out pages 0, 1, 2, ...; shuffled permutes the
// free list with a seed; churned runs random admits/releases of page groups first, leaving the
// free list in the scrambled order a long-running server would have.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace decode_bench {

enum class PageOrder { sequential, shuffled, churned };

constexpr std::string_view page_order_name(PageOrder o) {
  switch (o) {
    case PageOrder::sequential: return "sequential";
    case PageOrder::shuffled: return "shuffled";
    case PageOrder::churned: return "churned";
  }
  return "?";
}

// The inverse of page_order_name; nullopt for any other text.
constexpr std::optional<PageOrder> parse_page_order(std::string_view s) {
  for (PageOrder o : {PageOrder::sequential, PageOrder::shuffled, PageOrder::churned})
    if (s == page_order_name(o)) return o;
  return std::nullopt;
}

class PageAllocator {
 public:
  explicit PageAllocator(std::int32_t num_pages);

  std::int32_t total() const { return static_cast<std::int32_t>(refcount_.size()); }
  std::int32_t free_count() const { return static_cast<std::int32_t>(free_.size()); }
  std::int32_t used_count() const { return total() - free_count(); }

  std::int32_t pop();                  // precondition: free_count() > 0; refcount 1, fill 0
  void retain(std::int32_t page);      // one more sharer
  void release(std::int32_t page);     // one fewer; back on the free list at zero
  std::int32_t refcount(std::int32_t page) const { return refcount_[page]; }
  std::int32_t fill(std::int32_t page) const { return fill_[page]; }
  void set_fill(std::int32_t page, std::int32_t tokens) {
    if (refcount_[page] > 0) filled_ += tokens - fill_[page];
    fill_[page] = tokens;
  }
  // Sum of fill over pages in use, kept as pages change (a pool's stats each serving step would
  // otherwise walk every page).
  std::int64_t filled_tokens() const { return filled_; }

  // Reorders the free list (only valid while every page is free).
  void arrange(PageOrder order, std::uint64_t seed, std::int64_t churn_ops);
  const std::vector<std::int32_t>& free_list() const { return free_; }  // top = back()

 private:
  std::vector<std::int32_t> free_;
  std::vector<std::int32_t> refcount_;
  std::vector<std::int32_t> fill_;
  std::int64_t filled_ = 0;
};

}  // namespace decode_bench
