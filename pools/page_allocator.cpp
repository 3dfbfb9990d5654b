#include "pools/page_allocator.hpp"

#include <algorithm>
#include <random>

namespace decode_bench {

PageAllocator::PageAllocator(std::int32_t num_pages) : refcount_(num_pages, 0), fill_(num_pages, 0) {
  free_.reserve(num_pages);
  for (std::int32_t p = num_pages - 1; p >= 0; --p) free_.push_back(p);  // pop() yields 0 first
}

std::int32_t PageAllocator::pop() {
  const std::int32_t page = free_.back();
  free_.pop_back();
  refcount_[page] = 1;
  fill_[page] = 0;
  return page;
}

void PageAllocator::retain(std::int32_t page) {
  if (refcount_[page]++ == 0) filled_ += fill_[page];
}

void PageAllocator::release(std::int32_t page) {
  if (--refcount_[page] == 0) {
    filled_ -= fill_[page];
    fill_[page] = 0;
    free_.push_back(page);
  }
}

void PageAllocator::arrange(PageOrder order, std::uint64_t seed, std::int64_t churn_ops) {
  std::mt19937_64 rng(seed);
  if (order == PageOrder::shuffled) {
    std::shuffle(free_.begin(), free_.end(), rng);
    return;
  }
  if (order != PageOrder::churned) return;
  // Groups of 1..8 pages stand in for sequences; each step admits one or releases a random one.
  std::vector<std::vector<std::int32_t>> held;
  std::uniform_int_distribution<int> group_size(1, 8);
  for (std::int64_t op = 0; op < churn_ops; ++op) {
    const bool admit = held.empty() || (rng() % 2 == 0);
    if (admit) {
      const int want = group_size(rng);
      if (want > free_count()) continue;
      std::vector<std::int32_t> group;
      for (int i = 0; i < want; ++i) group.push_back(pop());
      held.push_back(std::move(group));
    } else {
      const std::size_t victim = rng() % held.size();
      for (std::int32_t p : held[victim]) release(p);
      held[victim] = std::move(held.back());
      held.pop_back();
    }
  }
  std::shuffle(held.begin(), held.end(), rng);
  for (const auto& group : held)
    for (std::int32_t p : group) release(p);
}

}  // namespace decode_bench
