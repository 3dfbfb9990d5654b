#include "sweeps/trace_prefix_layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace decode_bench::sweeps {

std::int64_t TraceBatchLayout::shared_sequences() const {
  std::int64_t n = 0;
  for (const SharedLevel& level : layout.levels) n += level.num_seqs;
  return n;
}

const TraceBatchLayout& TraceBatchLayoutBuilder::build(std::span<const TraceSequencePages> seqs, int page_size) {
  const std::size_t n = seqs.size();
  // Groups by first page, numbered in the order of their first sequence: the page -> group table
  // is valid where its stamp is this build's, so nothing is cleared between builds.
  if (++stamp_ == 0) {
    std::fill(page_stamp_.begin(), page_stamp_.end(), 0u);
    stamp_ = 1;
  }
  group_.assign(n, -1);
  head_.clear();
  members_.clear();
  common_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const TraceSequencePages& s = seqs[i];
    if (s.prompt_pages < 1 || s.table.empty()) continue;
    const std::int32_t first = s.table[0];
    if (first < 0)
      throw std::invalid_argument("trace_batch_layout: sequence " + std::to_string(i) +
                                  " starts on a released page (" + std::to_string(first) + ")");
    const auto page = static_cast<std::size_t>(first);
    if (page >= page_stamp_.size()) {
      const std::size_t size = std::max(page + 1, 2 * page_stamp_.size());
      page_stamp_.resize(size, 0u);
      page_group_.resize(size, -1);
    }
    if (page_stamp_[page] != stamp_) {
      page_stamp_[page] = stamp_;
      page_group_[page] = static_cast<int>(head_.size());
      head_.push_back(static_cast<int>(i));
      members_.push_back(0);
      common_.push_back(s.prompt_pages);
    }
    const int g = page_group_[page];
    group_[i] = g;
    ++members_[static_cast<std::size_t>(g)];
    // The pages every member lists: the common prefix with the first member, at most the system
    // prompt's whole pages, and short of each member's last token (its own suffix is never empty).
    const TraceSequencePages& head = seqs[static_cast<std::size_t>(head_[static_cast<std::size_t>(g)])];
    std::int64_t& common = common_[static_cast<std::size_t>(g)];
    const std::int64_t limit = std::min<std::int64_t>(
        {common, s.prompt_pages, static_cast<std::int64_t>(s.table.size()), (s.length - 1) / page_size});
    std::int64_t k = 0;
    while (k < limit && s.table[static_cast<std::size_t>(k)] == head.table[static_cast<std::size_t>(k)]) ++k;
    common = k;
  }

  // One level per group of two or more that shares a page, in group order; then every other
  // sequence in running order. Batch positions by a counting pass (no per-group lists).
  TraceBatchLayout& out = out_;
  out.layout.page_size = page_size;
  out.layout.levels.clear();
  next_.assign(head_.size(), -1);
  int at = 0;
  for (std::size_t g = 0; g < head_.size(); ++g) {
    if (members_[g] < 2 || common_[g] < 1) continue;
    SharedLevel level;
    level.depth = 0;
    level.token_begin = 0;
    level.token_end = common_[g] * page_size;
    level.first_seq = at;
    level.num_seqs = members_[g];
    out.layout.levels.push_back(level);
    next_[g] = at;
    at += members_[g];
  }
  out.order.resize(n);
  out.layout.suffix_begin.resize(n);
  out.layout.lengths.resize(n);
  int tail = at;
  for (std::size_t i = 0; i < n; ++i) {
    const int g = group_[i];
    const bool leveled = g >= 0 && next_[static_cast<std::size_t>(g)] >= 0;
    const int b = leveled ? next_[static_cast<std::size_t>(g)]++ : tail++;
    out.order[static_cast<std::size_t>(b)] = static_cast<int>(i);
    out.layout.suffix_begin[static_cast<std::size_t>(b)] =
        leveled ? common_[static_cast<std::size_t>(g)] * page_size : 0;
    out.layout.lengths[static_cast<std::size_t>(b)] = seqs[i].length;
  }
  return out;
}

TraceBatchLayout trace_batch_layout(std::span<const TraceSequencePages> seqs, int page_size) {
  TraceBatchLayoutBuilder builder;
  return builder.build(seqs, page_size);
}

}  // namespace decode_bench::sweeps
