#include "backends/flashinfer/flashinfer_slot_pages.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "harness/cuda_check.hpp"

namespace decode_bench {
namespace {

constexpr int kSlotPageSize = 16;

}  // namespace

SlotPages address_slots_as_pages(const AttentionProblem& p, Workspace& workspace) {
  const ContiguousKV<void>& kv = p.contiguous;
  const std::int64_t slot_rows = kv.slot_stride / kv.head_dim;  // H_kv * max_len
  SlotPages t;
  t.page_size = kSlotPageSize;
  while (t.page_size > 1 && slot_rows % t.page_size != 0) t.page_size /= 2;
  const std::int64_t pages_per_slot = slot_rows / t.page_size;
  if (pages_per_slot * p.batch > std::numeric_limits<std::int32_t>::max())
    throw std::invalid_argument("FlashInfer page tables: the contiguous pool has more than 2^31 pages of " +
                                std::to_string(t.page_size) + " tokens");
  t.indptr.assign(1, 0);
  for (int b = 0; b < p.batch; ++b) {
    const std::int32_t len = p.host_seq_lens[b];
    const std::int32_t pages = (len + t.page_size - 1) / t.page_size;
    for (std::int32_t i = 0; i < pages; ++i) t.indices.push_back(static_cast<std::int32_t>(b * pages_per_slot + i));
    t.indptr.push_back(t.indptr.back() + pages);
    t.last_page_len.push_back((len - 1) % t.page_size + 1);
  }
  const auto upload = [&](const std::vector<std::int32_t>& host) {
    void* d = workspace.allocate(host.size() * sizeof(std::int32_t));
    DB_CUDA_CHECK(cudaMemcpyAsync(d, host.data(), host.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                                  workspace.stream()));
    return static_cast<const std::int32_t*>(d);
  };
  t.device_indices = upload(t.indices);
  t.device_indptr = upload(t.indptr);
  t.device_last_page_len = upload(t.last_page_len);
  t.page_stride = static_cast<std::int64_t>(t.page_size) * kv.head_dim;
  t.head_stride = kv.head_stride;
  t.token_stride = kv.head_dim;
  return t;
}

}  // namespace decode_bench
