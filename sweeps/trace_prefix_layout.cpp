#include "sweeps/trace_prefix_layout.hpp"

#include <algorithm>
#include <map>

namespace decode_bench::sweeps {

std::int64_t TraceBatchLayout::shared_sequences() const {
  std::int64_t n = 0;
  for (const SharedLevel& level : layout.levels) n += level.num_seqs;
  return n;
}

TraceBatchLayout trace_batch_layout(std::span<const TraceSequencePages> seqs, int page_size) {
  // Groups by first page, in the order of their first sequence.
  std::map<std::int32_t, std::size_t> group_of_page;
  std::vector<std::vector<int>> groups;
  std::vector<int> alone;
  for (std::size_t i = 0; i < seqs.size(); ++i) {
    const TraceSequencePages& s = seqs[i];
    if (s.prompt_pages < 1 || s.table.empty()) {
      alone.push_back(static_cast<int>(i));
      continue;
    }
    const auto [it, fresh] = group_of_page.try_emplace(s.table[0], groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(static_cast<int>(i));
  }
  TraceBatchLayout out;
  out.layout.page_size = page_size;
  std::vector<int> tail;
  for (const std::vector<int>& g : groups) {
    // The pages every member lists: the common prefix with the first member, at most the system
    // prompt's whole pages, and short of each member's last token (its own suffix is never empty).
    const TraceSequencePages& head = seqs[static_cast<std::size_t>(g[0])];
    std::int64_t common = head.prompt_pages;
    for (int m : g) {
      const TraceSequencePages& s = seqs[static_cast<std::size_t>(m)];
      std::int64_t k = 0;
      const std::int64_t limit = std::min<std::int64_t>({common, s.prompt_pages, static_cast<std::int64_t>(s.table.size()),
                                                         (s.length - 1) / page_size});
      while (k < limit && s.table[static_cast<std::size_t>(k)] == head.table[static_cast<std::size_t>(k)]) ++k;
      common = k;
    }
    if (g.size() < 2 || common < 1) {
      tail.insert(tail.end(), g.begin(), g.end());
      continue;
    }
    SharedLevel level;
    level.depth = 0;
    level.token_begin = 0;
    level.token_end = common * page_size;
    level.first_seq = static_cast<int>(out.order.size());
    level.num_seqs = static_cast<int>(g.size());
    out.layout.levels.push_back(level);
    for (int m : g) {
      out.order.push_back(m);
      out.layout.suffix_begin.push_back(level.token_end);
      out.layout.lengths.push_back(seqs[static_cast<std::size_t>(m)].length);
    }
  }
  tail.insert(tail.end(), alone.begin(), alone.end());
  std::sort(tail.begin(), tail.end());
  for (int m : tail) {
    out.order.push_back(m);
    out.layout.suffix_begin.push_back(0);
    out.layout.lengths.push_back(seqs[static_cast<std::size_t>(m)].length);
  }
  return out;
}

}  // namespace decode_bench::sweeps
