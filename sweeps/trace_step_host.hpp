#pragma once
// The host side of a paged trace step's batch (sweeps/trace_runner.cpp), apart from anything the
// device does: the batch order (with system prompts, sequences reading the same prompt pages next
// to each other: sweeps/trace_prefix_layout.hpp), each running sequence's batch position, and,
// from the view's lengths, the CSR page counts and last-page lengths the planner takes. No CUDA
// call, so its cost per step is measurable on the host (tests/trace_host_bench.cpp) and its
// output testable against a rebuild.
//
// The storage is kept from step to step (a serving loop builds this every step): only the
// vectors' contents change.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "kernels/shared_prefix_layout.hpp"
#include "pools/handle.hpp"
#include "sweeps/trace_prefix_layout.hpp"

namespace decode_bench {
class PagedPool;
class TraceScheduler;
}  // namespace decode_bench

namespace decode_bench::sweeps {

class TraceStepHost {
 public:
  // group_prompts: order by shared system-prompt pages and form the shared-prefix layout.
  TraceStepHost(int page_size, bool group_prompts) : page_size_(page_size), group_prompts_(group_prompts) {}

  // The step's batch from the scheduler's running sequences (inside on_batch: `handles` are theirs,
  // in running order) and the pool's block tables and lengths.
  void build(const TraceScheduler& sched, const PagedPool& pool, std::span<const SequenceHandle> handles);
  // The view's lengths (batch order): page counts (indptr) and last-page lengths.
  void set_view_lengths(std::span<const std::int32_t> lengths);

  std::span<const SequenceHandle> batch_handles() const { return batch_handles_; }
  // Running index -> batch position.
  std::span<const std::int32_t> position() const { return position_; }
  // The shared-prefix layout in batch order when some level exists, else nullptr.
  const SharedPrefixLayout* prefix_layout() const { return has_levels_ ? &layout_.result().layout : nullptr; }
  std::int64_t shared_sequences() const { return has_levels_ ? layout_.result().shared_sequences() : 0; }
  std::span<const std::int32_t> lengths() const { return lengths_; }
  std::span<const std::int32_t> indptr() const { return indptr_; }
  std::span<const std::int32_t> last_page_len() const { return last_page_len_; }

 private:
  int page_size_;
  bool group_prompts_;
  std::vector<TraceSequencePages> pages_;
  TraceBatchLayoutBuilder layout_;
  bool has_levels_ = false;
  std::vector<SequenceHandle> ordered_;
  std::span<const SequenceHandle> batch_handles_;
  std::vector<std::int32_t> position_, lengths_, indptr_, last_page_len_;
};

}  // namespace decode_bench::sweeps
