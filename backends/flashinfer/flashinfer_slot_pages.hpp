#pragma once
// Page tables that let FlashInfer's paged kernels read decode-bench's contiguous slots
// (slots, H_kv, max_len, D) as pages of `page_size` tokens: page stride page_size x D, head stride
// max_len x D (the slot's), token stride D; page p of slot s at index s x H_kv x max_len /
// page_size + p. page_size is 16 (decode-bench's paged experiments' page size), halved until it
// divides H_kv x max_len. FlashInfer has no batched contiguous decode; its batch decode and batch
// prefill both take these tables. Shared by the flashinfer and flashinfer_tc backends.
#include <cstdint>
#include <vector>

#include "harness/attention_problem.hpp"
#include "harness/backend.hpp"

namespace decode_bench {

struct SlotPages {
  int page_size = 0;
  std::int64_t page_stride = 0, head_stride = 0, token_stride = 0;  // elements
  // Host copies (kept for the plan's lifetime: the uploads read from them) and their device copies
  // in the point's workspace.
  std::vector<std::int32_t> indptr, indices, last_page_len;
  const std::int32_t* device_indptr = nullptr;
  const std::int32_t* device_indices = nullptr;
  const std::int32_t* device_last_page_len = nullptr;
  // The bytes of the three tables, read by the kernels beyond the decode's minimum.
  double table_bytes() const {
    return static_cast<double>(indptr.size() + indices.size() + last_page_len.size()) * sizeof(std::int32_t);
  }
};

// The tables for problem p (layout contiguous, every sequence at least one token), uploaded into
// the workspace on its stream. Throws std::invalid_argument when the pool has more than 2^31 pages.
SlotPages address_slots_as_pages(const AttentionProblem& p, Workspace& workspace);

}  // namespace decode_bench
