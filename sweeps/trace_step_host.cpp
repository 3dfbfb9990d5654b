#include "sweeps/trace_step_host.hpp"

#include "pools/paged_pool.hpp"
#include "pools/trace_scheduler.hpp"

namespace decode_bench::sweeps {

void TraceStepHost::build(const TraceScheduler& sched, const PagedPool& pool, std::span<const SequenceHandle> handles) {
  const auto& running = sched.running_sequences();
  batch_handles_ = handles;
  position_.resize(running.size());
  for (std::size_t i = 0; i < running.size(); ++i) position_[i] = static_cast<std::int32_t>(i);
  has_levels_ = false;
  if (!group_prompts_) return;
  pages_.clear();
  for (const TraceScheduler::Running& r : running) {
    const TraceRequest& req = sched.trace()[static_cast<std::size_t>(r.request)];
    pages_.push_back({pool.block_table(r.handle), req.system_prompt_len / page_size_,
                      static_cast<std::int32_t>(pool.length(r.handle))});
  }
  const TraceBatchLayout& layout = layout_.build(pages_, page_size_);
  ordered_.resize(running.size());
  for (std::size_t b = 0; b < layout.order.size(); ++b) {
    ordered_[b] = handles[static_cast<std::size_t>(layout.order[b])];
    position_[static_cast<std::size_t>(layout.order[b])] = static_cast<std::int32_t>(b);
  }
  batch_handles_ = ordered_;
  has_levels_ = !layout.layout.levels.empty();
}

void TraceStepHost::set_view_lengths(std::span<const std::int32_t> lengths) {
  lengths_.assign(lengths.begin(), lengths.end());
  indptr_.assign(1, 0);
  last_page_len_.clear();
  for (std::int32_t len : lengths) {
    indptr_.push_back(indptr_.back() + (len + page_size_ - 1) / page_size_);
    last_page_len_.push_back(len == 0 ? 0 : (len - 1) % page_size_ + 1);
  }
}

}  // namespace decode_bench::sweeps
