#include "backends/flashinfer/flashinfer_cascade.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "backends/flashinfer/flashinfer_merge_state.hpp"
#include "backends/flashinfer/flashinfer_steps.hpp"
#include "harness/cuda_check.hpp"

namespace decode_bench {
namespace {

using namespace flashinfer_launch;

constexpr std::size_t kIoBytes = 2;  // q, o and K/V elements: fp16 or bf16

// The levels of one depth, in sequence order.
std::map<int, std::vector<SharedLevel>> levels_by_depth(const SharedPrefixLayout& layout) {
  std::map<int, std::vector<SharedLevel>> out;
  for (const SharedLevel& l : layout.levels) out[l.depth].push_back(l);
  return out;
}

// Page tables assembled on the device: the host indptr and last-page lengths uploaded, the page
// indices copied segment by segment out of the pool's own table (stream-ordered, no host copy).
struct DeviceTables {
  std::vector<std::int32_t> indptr, last_page_len;  // host
  std::vector<std::pair<std::int64_t, std::int64_t>> segments;  // (first entry in the pool's table, pages)
  const std::int32_t* d_indptr = nullptr;
  const std::int32_t* d_indices = nullptr;
  const std::int32_t* d_last_page_len = nullptr;

  void add(std::int64_t first, std::int64_t pages, std::int32_t last_len) {
    segments.emplace_back(first, pages);
    indptr.push_back(static_cast<std::int32_t>(indptr.back() + pages));
    last_page_len.push_back(last_len);
  }
  void upload(const std::int32_t* pool_indices, Workspace& ws) {
    const auto up = [&](const std::vector<std::int32_t>& host) {
      void* d = ws.allocate(host.size() * sizeof(std::int32_t));
      DB_CUDA_CHECK(cudaMemcpyAsync(d, host.data(), host.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                                    ws.stream()));
      return static_cast<const std::int32_t*>(d);
    };
    d_indptr = up(indptr);
    d_last_page_len = up(last_page_len);
    auto* indices = static_cast<std::int32_t*>(ws.allocate(static_cast<std::size_t>(indptr.back()) * sizeof(std::int32_t)));
    std::int64_t at = 0;
    for (const auto& [first, pages] : segments) {
      DB_CUDA_CHECK(cudaMemcpyAsync(indices + at, pool_indices + first, pages * sizeof(std::int32_t),
                                    cudaMemcpyDeviceToDevice, ws.stream()));
      at += pages;
    }
    d_indices = indices;
  }
};

}  // namespace

std::optional<std::string> cascade_unsupported_reason(const AttentionProblem& p) {
  if (!p.prefix) return std::string("kernel shared_prefix needs a shared-prefix batch (prefix_len > 0, layout paged)");
  if (p.layout != KvLayoutKind::paged) return std::string("kernel shared_prefix reads shared pages: it needs layout paged");
  const SharedPrefixLayout& layout = *p.prefix;
  if (layout.page_size != p.paged.page_size)
    return "the shared-prefix layout's page size " + std::to_string(layout.page_size) + " is not the pool's " +
           std::to_string(p.paged.page_size);
  for (const auto& [depth, levels] : levels_by_depth(layout)) {
    for (std::size_t i = 1; i < levels.size(); ++i) {
      if (levels[i].first_seq != levels[i - 1].first_seq + levels[i - 1].num_seqs)
        return "the depth-" + std::to_string(depth) + " levels share sequences that are not consecutive (sequence " +
               std::to_string(levels[i - 1].first_seq + levels[i - 1].num_seqs) +
               " has none): FlashInfer's batch prefill reads the queries of its requests as consecutive rows";
    }
  }
  MergeStateArgs merge;
  merge.heads = p.shape.heads_q;
  merge.head_dim = p.shape.head_dim;
  if (auto why = merge_state_unsupported_reason(merge); why && !layout.levels.empty())
    return "FlashInfer's MergeStateInPlace: " + *why;
  for (int b = 0; b < layout.num_seqs(); ++b)
    if (layout.lengths[b] <= layout.suffix_begin[b])
      return "sequence " + std::to_string(b) + " has no token of its own: the cascade's suffix step needs one";
  return std::nullopt;
}

PlannedCascade plan_cascade(const AttentionProblem& p, CascadeSuffix suffix, Workspace& workspace) {
  if (auto why = cascade_unsupported_reason(p)) throw std::invalid_argument(*why);
  const SharedPrefixLayout& layout = *p.prefix;
  const int n = layout.num_seqs();
  const int ps = p.paged.page_size;
  const int hq = p.shape.heads_q, d = p.shape.head_dim;
  const std::int64_t row_elems = std::int64_t{hq} * d;
  PlannedCascade out;
  std::vector<std::function<cudaError_t(cudaStream_t)>> launches;

  // 1. The suffix of each sequence: its pages from suffix_begin, one query token each, into o and lse.
  DeviceTables suffix_tables;
  suffix_tables.indptr.assign(1, 0);
  for (int b = 0; b < n; ++b) {
    const std::int64_t first = p.host_indptr[b] + layout.suffix_begin[b] / ps;
    suffix_tables.add(first, p.host_indptr[b + 1] - first, p.host_last_page_len[b]);
  }
  suffix_tables.upload(p.paged.page_indices, workspace);
  PlannedStep suffix_step;
  if (suffix == CascadeSuffix::batch_prefill) {
    std::vector<std::int32_t> qo(n + 1);
    for (int b = 0; b <= n; ++b) qo[b] = b;
    auto* d_qo = static_cast<std::int32_t*>(workspace.allocate(qo.size() * sizeof(std::int32_t)));
    DB_CUDA_CHECK(cudaMemcpyAsync(d_qo, qo.data(), qo.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                                  workspace.stream()));
    PagedPrefillArgs a;
    a.q = p.q;
    a.k_pages = p.paged.k;
    a.v_pages = p.paged.v;
    a.qo_indptr = d_qo;
    a.page_indices = suffix_tables.d_indices;
    a.kv_indptr = suffix_tables.d_indptr;
    a.last_page_len = suffix_tables.d_last_page_len;
    a.o = p.o;
    a.lse = p.lse;
    a.requests = n;
    a.total_rows = n;
    a.heads_q = hq;
    a.heads_kv = p.shape.heads_kv;
    a.head_dim = d;
    a.page_size = ps;
    a.sm_scale = static_cast<float>(p.shape.softmax_scale());
    suffix_step = plan_prefill_step(a, p.kv_dtype, qo.data(), suffix_tables.indptr.data(), workspace);
    suffix_step.plan["path"] = "batch_prefill";
  } else {
    if (p.kv_dtype != DType::fp16)
      throw std::invalid_argument("the CUDA-core suffix of the cascade runs fp16 only, not " +
                                  std::string(dtype_name(p.kv_dtype)));
    PagedDecodeArgs<__half> a;
    a.q = static_cast<const __half*>(p.q);
    a.k_pages = static_cast<const __half*>(p.paged.k);
    a.v_pages = static_cast<const __half*>(p.paged.v);
    a.page_indices = suffix_tables.d_indices;
    a.indptr = suffix_tables.d_indptr;
    a.last_page_len = suffix_tables.d_last_page_len;
    a.o = static_cast<__half*>(p.o);
    a.lse = p.lse;
    a.batch = n;
    a.heads_q = hq;
    a.heads_kv = p.shape.heads_kv;
    a.head_dim = d;
    a.page_size = ps;
    a.sm_scale = static_cast<float>(p.shape.softmax_scale());
    suffix_step = plan_decode_step_fp16(a, suffix_tables.indptr.data(), workspace);
    suffix_step.plan["path"] = "cuda_core_decode";
  }
  suffix_step.plan["pages"] = suffix_tables.indptr.back();
  launches.push_back(suffix_step.run);
  out.extra_bytes += suffix_step.partial_bytes;
  out.launches += suffix_step.plan["split_kv"].get<bool>() ? 2 : 1;
  out.plan["suffix"] = suffix_step.plan;

  // 2 and 3. Each depth: one batch prefill over its levels into a level state, merged into o, lse.
  out.plan["levels"] = nlohmann::json::array();
  for (const auto& [depth, levels] : levels_by_depth(layout)) {
    const int row0 = levels.front().first_seq;
    const int rows = levels.back().first_seq + levels.back().num_seqs - row0;
    std::vector<std::int32_t> qo{0};
    DeviceTables tables;
    tables.indptr.assign(1, 0);
    for (const SharedLevel& l : levels) {
      qo.push_back(qo.back() + l.num_seqs);
      tables.add(p.host_indptr[l.first_seq] + l.token_begin / ps, (l.token_end - l.token_begin) / ps, ps);
    }
    tables.upload(p.paged.page_indices, workspace);
    auto* d_qo = static_cast<std::int32_t*>(workspace.allocate(qo.size() * sizeof(std::int32_t)));
    DB_CUDA_CHECK(cudaMemcpyAsync(d_qo, qo.data(), qo.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                                  workspace.stream()));
    void* level_o = workspace.allocate(static_cast<std::size_t>(rows) * row_elems * kIoBytes);
    auto* level_lse = static_cast<float*>(workspace.allocate(static_cast<std::size_t>(rows) * hq * sizeof(float)));
    PagedPrefillArgs a;
    a.q = static_cast<const unsigned char*>(p.q) + row0 * row_elems * kIoBytes;
    a.k_pages = p.paged.k;
    a.v_pages = p.paged.v;
    a.qo_indptr = d_qo;
    a.page_indices = tables.d_indices;
    a.kv_indptr = tables.d_indptr;
    a.last_page_len = tables.d_last_page_len;
    a.o = level_o;
    a.lse = level_lse;
    a.requests = static_cast<int>(levels.size());
    a.total_rows = rows;
    a.heads_q = hq;
    a.heads_kv = p.shape.heads_kv;
    a.head_dim = d;
    a.page_size = ps;
    a.sm_scale = static_cast<float>(p.shape.softmax_scale());
    PlannedStep step = plan_prefill_step(a, p.kv_dtype, qo.data(), tables.indptr.data(), workspace);
    MergeStateArgs m;
    m.dtype = p.kv_dtype;
    m.o_a = static_cast<unsigned char*>(p.o) + row0 * row_elems * kIoBytes;
    m.lse_a = p.lse + std::int64_t{row0} * hq;
    m.o_b = level_o;
    m.lse_b = level_lse;
    m.rows = rows;
    m.heads = hq;
    m.head_dim = d;
    if (auto why = merge_state_unsupported_reason(m)) throw std::invalid_argument("FlashInfer MergeStateInPlace: " + *why);
    launches.push_back(step.run);
    launches.push_back([m](cudaStream_t s) { return merge_state_in_place(m, s, nullptr); });
    // The level state is written and read back by the merge, which also re-reads and rewrites the
    // suffix state of the same rows: four passes over rows x heads_q x (o + lse).
    out.extra_bytes += step.partial_bytes + 4.0 * rows * hq * (d * static_cast<double>(kIoBytes) + sizeof(float));
    out.launches += (step.plan["split_kv"].get<bool>() ? 2 : 1) + 1;
    step.plan.update({{"depth", depth},
                      {"requests", levels.size()},
                      {"query_rows", rows},
                      {"first_sequence", row0},
                      {"pages", tables.indptr.back()},
                      {"merge", "MergeStateInPlace"}});
    out.plan["levels"].push_back(step.plan);
  }
  // The host tables above are read by asynchronous uploads: they must outlive them.
  DB_CUDA_CHECK(cudaStreamSynchronize(workspace.stream()));
  out.run = [launches = std::move(launches)](cudaStream_t s) {
    for (const auto& launch : launches)
      if (const cudaError_t e = launch(s); e != cudaSuccess) return e;
    return cudaSuccess;
  };
  return out;
}

}  // namespace decode_bench
