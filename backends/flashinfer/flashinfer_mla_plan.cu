// FlashInfer's MLAPlan (its scheduler for BatchMLAPagedAttention) and our checks of the shapes,
// shared by the FP16 and BF16 run translation units. No kernel is compiled here.
#include "backends/flashinfer/flashinfer_mla.hpp"

#include <algorithm>
#include <limits>
#include <sstream>
#include <vector>

#include <flashinfer/attention/scheduler.cuh>

#include "backends/flashinfer/flashinfer_error.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

// The mask every request is planned and run with: causal, right-aligned. At q_len 1 it masks
// nothing; at q_len > 1 it is decode-bench's multi-token-prediction rule. One mask keeps one set of
// kernels per dtype.
constexpr bool kCausal = true;

std::optional<std::string> host_arrays_reason(const MlaArgs& s, const std::int32_t* kv_indptr_host,
                                              const std::int32_t* kv_len_host) {
  if (kv_indptr_host == nullptr || kv_len_host == nullptr) return "kv_indptr_host and kv_len_host must be set";
  if (kv_indptr_host[0] != 0) return "kv_indptr_host[0] must be 0";
  for (int b = 0; b < s.batch; ++b) {
    const std::int64_t pages = kv_indptr_host[b + 1] - kv_indptr_host[b];
    const std::int64_t len = kv_len_host[b];
    if (len < s.q_len || pages * s.page_size < len || (pages - 1) * s.page_size >= len) {
      std::ostringstream m;
      m << "request " << b << " has " << len << " KV tokens in " << pages << " pages of " << s.page_size
        << ": FlashInfer's causal MLA decode is planned here for at least q_len (" << s.q_len
        << ") tokens, in as many pages as they fill";
      return m.str();
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> mla_unsupported_reason(const MlaArgs& s) {
  if (s.kv_lora_rank != 512 || s.rope_dim != 64) {
    std::ostringstream m;
    m << "kv_lora_rank " << s.kv_lora_rank << ", rope_dim " << s.rope_dim
      << ": FlashInfer's MLA kernel is compiled here for 512 and 64 (DeepSeek-V3's latent)";
    return m.str();
  }
  if (s.batch < 1) return "batch " + std::to_string(s.batch) + " must be >= 1";
  if (s.heads < 1) return "heads " + std::to_string(s.heads) + " must be >= 1";
  if (s.q_len < 1) return "q_len " + std::to_string(s.q_len) + " must be >= 1";
  if (s.page_size < 1) return "page_size " + std::to_string(s.page_size) + " must be >= 1";
  const std::int64_t key_dim = s.kv_lora_rank + s.rope_dim;
  constexpr std::int64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();
  if (s.row_stride < key_dim || s.page_stride < std::int64_t{s.page_size} * s.row_stride)
    return "row_stride must be >= kv_lora_rank + rope_dim and page_stride >= page_size x row_stride";
  if (s.page_stride > kMaxU32) return "page_stride must fit 32 bits (FlashInfer's MLAParams)";
  if (s.kpe_offset < s.kv_lora_rank || s.kpe_offset + s.rope_dim > s.row_stride)
    return "kpe_offset must place rope_dim values after the kv_lora_rank ckv values within a row";
  // 16-byte loads of ckv and kpe rows (8 16-bit elements).
  if (s.row_stride % 8 != 0 || s.page_stride % 8 != 0 || s.kpe_offset % 8 != 0)
    return "row_stride, page_stride and kpe_offset must be multiples of 8 elements (FlashInfer's 16-byte loads)";
  if (static_cast<std::int64_t>(s.heads) * key_dim > kMaxU32) return "heads x 576 must fit 32 bits";
  if (!(s.sm_scale > 0)) return "sm_scale must be > 0";
  return std::nullopt;
}

std::optional<std::string> mla_work_list_reason(int batch, int q_len, int heads, int num_sm) {
  const std::int64_t rows = std::int64_t{q_len} * heads;
  const std::int64_t tiles = std::int64_t{batch} * ((rows + 63) / 64);
  if (tiles + num_sm <= kMlaMaxWorkItems) return std::nullopt;
  std::ostringstream m;
  m << "batch " << batch << " x " << (rows + 63) / 64 << " query tiles (q_len " << q_len << " x " << heads
    << " heads) and up to " << num_sm << " split items: FlashInfer's MLAPlan holds at most " << kMlaMaxWorkItems
    << " work items";
  return m.str();
}

cudaError_t mla_plan(const MlaArgs& s, const std::int32_t* kv_indptr_host, const std::int32_t* kv_len_host,
                     void* float_workspace, std::size_t float_bytes, void* int_workspace, void* int_workspace_host,
                     std::size_t int_bytes, cudaStream_t stream, MlaPlan* plan, std::string* error) {
  if (auto reason = mla_unsupported_reason(s)) return refuse(*reason, error);
  if (auto reason = host_arrays_reason(s, kv_indptr_host, kv_len_host)) return refuse(*reason, error);
  if (float_workspace == nullptr || int_workspace == nullptr || int_workspace_host == nullptr)
    return refuse("the float workspace and the integer workspace (device and host) must be set", error);
  int device = 0, num_sm = 0;
  if (const cudaError_t e = cudaGetDevice(&device); e != cudaSuccess) return refuse(cudaGetErrorString(e), error);
  if (const cudaError_t e = cudaDeviceGetAttribute(&num_sm, cudaDevAttrMultiProcessorCount, device); e != cudaSuccess)
    return refuse(cudaGetErrorString(e), error);
  if (auto reason = mla_work_list_reason(s.batch, s.q_len, s.heads, num_sm)) return refuse(*reason, error);
  // MLAPlan takes mutable host arrays; it reads them only.
  std::vector<std::int32_t> qo_indptr(static_cast<std::size_t>(s.batch) + 1);
  for (int b = 0; b <= s.batch; ++b) qo_indptr[b] = b * s.q_len;
  std::vector<std::int32_t> kv_indptr(kv_indptr_host, kv_indptr_host + s.batch + 1);
  std::vector<std::int32_t> kv_len(kv_len_host, kv_len_host + s.batch);
  flashinfer::MLAPlanInfo info;
  const cudaError_t status = call_flashinfer(
      [&] {
        const auto u = [](int v) { return static_cast<std::uint32_t>(v); };
        return flashinfer::MLAPlan<std::int32_t>(float_workspace, float_bytes, int_workspace, int_workspace_host,
                                                 int_bytes, info, qo_indptr.data(), kv_indptr.data(), kv_len.data(),
                                                 u(s.batch), u(s.heads), u(s.kv_lora_rank), kCausal, stream);
      },
      error);
  if (status != cudaSuccess) return status;
  if (const cudaError_t sync = wait_for_plan_copy(stream, error); sync != cudaSuccess) return sync;
  plan->num_blks_x = info.num_blks_x;
  plan->num_blks_y = info.num_blks_y;
  plan->q_indptr_offset = info.q_indptr_offset;
  plan->kv_indptr_offset = info.kv_indptr_offset;
  plan->partial_indptr_offset = info.partial_indptr_offset;
  plan->merge_packed_offset_start_offset = info.merge_packed_offset_start_offset;
  plan->merge_packed_offset_end_offset = info.merge_packed_offset_end_offset;
  plan->merge_partial_packed_offset_start_offset = info.merge_partial_packed_offset_start_offset;
  plan->merge_partial_packed_offset_end_offset = info.merge_partial_packed_offset_end_offset;
  plan->merge_partial_stride_offset = info.merge_partial_stride_offset;
  plan->q_len_offset = info.q_len_offset;
  plan->kv_len_offset = info.kv_len_offset;
  plan->q_start_offset = info.q_start_offset;
  plan->kv_start_offset = info.kv_start_offset;
  plan->kv_end_offset = info.kv_end_offset;
  plan->work_indptr_offset = info.work_indptr_offset;
  plan->partial_o_offset = info.partial_o_offset;
  plan->partial_lse_offset = info.partial_lse_offset;
  // The work list's totals, from the host image plan uploaded: items per cluster in work_indptr;
  // per merge range (one per split query-row range, num_sm slots, unused ones empty) where its
  // partial rows end, the largest being every partial row written.
  using flashinfer::GetPtrFromBaseOffset;
  const auto host = [&](std::int64_t offset) { return GetPtrFromBaseOffset<std::int32_t>(int_workspace_host, offset); };
  plan->work_items = host(info.work_indptr_offset)[info.num_blks_y];
  const std::int32_t* merge_start = host(info.merge_packed_offset_start_offset);
  const std::int32_t* merge_end = host(info.merge_packed_offset_end_offset);
  const std::int32_t* partial_end = host(info.merge_partial_packed_offset_end_offset);
  plan->merge_ranges = plan->partial_rows = 0;
  for (int c = 0; c < num_sm; ++c) {
    if (merge_end[c] > merge_start[c]) ++plan->merge_ranges;
    plan->partial_rows = std::max<std::int64_t>(plan->partial_rows, partial_end[c]);
  }
  plan->float_workspace_bytes = float_bytes;
  plan->int_workspace_bytes = int_bytes;
  return cudaSuccess;
}

}  // namespace decode_bench::flashinfer_launch
