#pragma once
// A row-attention problem with fresh random data for GPU tests: sequences laid out contiguously or
// over shuffled pages, items (kv_seq, kv_head, n rows, token range) whose rows read random query
// vectors through row_q (rows of many sequences, the shared-prefix shape), outputs poisoned, run
// through plan_row_attention / run_row_attention and checked row by row against the float64
// reference over the item's range (the CPU's, or the GPU's for large cases:
// tests/case_reference.hpp). FP8: the benchmark generator's bytes (kernels/fp8_generator.hpp,
// realistic magnitudes) under per-KV-head scales (fp8_random_head_scales), read by the reference
// through the same bytes and scales.
#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/fp8_quantize.hpp"
#include "sweeps/decode_fill.hpp"
#include "kernels/row_attention.hpp"
#include "tests/case_kv.hpp"
#include "tests/case_reference.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench::testing {

struct RowCaseItem {
  int seq = 0, kv_head = 0, rows = 1;
  std::int64_t token_begin = 0, token_end = 0;
};

struct RowCase {
  DecodeShape shape{4, 1, 128};
  std::vector<std::int32_t> lengths{64};  // tokens stored per sequence
  std::vector<RowCaseItem> items;
  int page_size = 0;  // 0: contiguous
  int splits = 0;     // 0: automatic
  RowAttentionPath path = RowAttentionPath::automatic;
  RowAttentionTiling tiling = RowAttentionTiling::automatic;
  bool identity_rows = false;  // row_q = nullptr (row r reads q row r)
  double steal_pool = -1;      // RowAttentionOptions::steal_pool (< 0: the planner's)
  TuningPolicy tuning{};       // RowAttentionOptions::tuning (the planner's knobs)
  std::uint64_t seed = 1;
  CaseReference reference = CaseReference::automatic;
};

struct RowCaseResult {
  VerificationResult verification;
  RowAttentionPlan plan;
  cudaError_t status = cudaSuccess;
  bool gpu_reference = false;  // checked against the GPU reference
};

template <class Elem>
RowCaseResult run_row_case(const RowCase& c) {
  std::mt19937_64 rng(c.seed);
  const DecodeShape& s = c.shape;
  const int seqs = static_cast<int>(c.lengths.size());
  const std::size_t D = s.head_dim;
  const CaseKv<Elem> kv_data(s, c.lengths, c.page_size, c.seed, false, rng);
  const int q_rows = seqs * s.heads_q;
  std::vector<float> q = random_values<float>(static_cast<std::size_t>(q_rows) * D, rng, -2.f, 2.f);

  std::vector<RowAttentionItem> items;
  std::vector<std::int32_t> row_q;
  std::int64_t max_tokens = 0;
  int max_rows = 0;
  std::uniform_int_distribution<int> pick(0, q_rows - 1);
  for (const auto& it : c.items) {
    const int first = static_cast<int>(row_q.size());
    for (int r = 0; r < it.rows; ++r) row_q.push_back(c.identity_rows ? first + r : pick(rng));
    items.push_back({it.seq, it.kv_head, first, first + it.rows, it.token_begin, it.token_end});
    max_tokens = std::max(max_tokens, it.token_end - it.token_begin);
    max_rows = std::max(max_rows, it.rows);
  }
  const int num_rows = static_cast<int>(row_q.size());

  DeviceBuffer<float> d_q(q), d_o(std::max<std::size_t>(static_cast<std::size_t>(num_rows) * D, 1)),
      d_lse(std::max(num_rows, 1));
  DeviceBuffer<RowAttentionItem> d_items(std::max<std::size_t>(items.size(), 1));
  if (!items.empty())
    cudaMemcpy(d_items.get(), items.data(), items.size() * sizeof(RowAttentionItem), cudaMemcpyHostToDevice);
  DeviceBuffer<std::int32_t> d_row_q(row_q.empty() ? std::vector<std::int32_t>{0} : row_q);
  RowAttentionProblem problem;
  problem.shape = s;
  problem.kv_dtype = dtype_of<Elem>::value;
  problem.num_items = static_cast<int>(items.size());
  problem.items = d_items.get();
  problem.num_rows = num_rows;
  problem.row_q = c.identity_rows ? nullptr : d_row_q.get();
  problem.max_item_tokens = max_tokens;
  problem.max_item_rows = max_rows;
  problem.q = d_q.get();
  problem.o = d_o.get();
  problem.lse = d_lse.get();

  RowCaseResult result;
  const auto launch = [&](const auto& kv) {
    using KV = std::decay_t<decltype(kv)>;
    RowAttentionOptions options{c.path, c.splits, c.tiling};
    options.steal_pool = c.steal_pool;
    options.tuning = c.tuning;
    result.status = plan_row_attention<KV>(problem, options, &result.plan);
    if (result.status != cudaSuccess) return;
    DeviceBuffer<std::uint8_t> workspace(std::max<std::size_t>(result.plan.workspace_bytes, 1));
    workspace.poison();
    result.status = init_row_attention_workspace(result.plan, workspace.get(), nullptr);
    for (int launch = 0; launch < 2 && result.status == cudaSuccess; ++launch) {  // twice: counters reset
      d_o.poison();
      d_lse.poison();
      result.status = run_row_attention<KV>(kv, problem, result.plan, workspace.get(), nullptr);
      if (result.status == cudaSuccess) result.status = cudaDeviceSynchronize();
    }
  };
  kv_data.on_device(launch);
  if (result.status != cudaSuccess) return result;

  // One reference per item: its rows' queries as the query heads of a one-KV-head problem over the
  // item's head and range (head_view), on the CPU or, for large cases, the GPU.
  const auto item_queries = [&](const RowAttentionItem& it) {
    std::vector<float> qi(static_cast<std::size_t>(it.row_end - it.row_begin) * D);
    for (int r = it.row_begin; r < it.row_end; ++r)
      std::copy_n(q.begin() + static_cast<std::size_t>(row_q[r]) * D, D, qi.begin() + (r - it.row_begin) * D);
    return qi;
  };
  std::int64_t work = 0;  // tokens x rows x head dim
  for (const auto& it : items) work += (it.token_end - it.token_begin) * (it.row_end - it.row_begin) * s.head_dim;
  result.verification.passed = true;
  if (takes_gpu_reference(c.reference, work)) {
    result.gpu_reference = true;
    kv_data.on_device_slab([&](const auto& slab) {
      for (const auto& it : items) {
        const int rows = it.row_end - it.row_begin;
        if (rows == 0) continue;
        const auto tokens = static_cast<std::int32_t>(it.token_end - it.token_begin);
        const DeviceBuffer<float> d_qi(item_queries(it));
        const DeviceBuffer<std::int32_t> d_len(std::vector<std::int32_t>{tokens});
        const DecodeShape one_head{rows, 1, s.head_dim};
        accumulate(result.verification,
                   verify_on_gpu_reference(head_view(slab, it.kv_seq, it.kv_head, it.token_begin), one_head, 1, tokens,
                                           d_len.get(), d_qi.get(), d_o.get() + static_cast<std::size_t>(it.row_begin) * D,
                                           d_lse.get() + it.row_begin, dtype_of<Elem>::value));
      }
    });
    return result;
  }
  const std::vector<float> o = d_o.download(), lse = d_lse.download();
  for (const auto& it : items) {
    const int rows = it.row_end - it.row_begin;
    if (rows == 0) continue;
    const DecodeShape one_head{rows, 1, s.head_dim};
    const ReferenceOutput ref = reference_decode_range(head_view(kv_data.host, it.kv_seq, it.kv_head, it.token_begin), 0,
                                                       0, it.token_end - it.token_begin, item_queries(it), one_head);
    accumulate(result.verification,
               verify_decode(std::span<const float>(o.data() + static_cast<std::size_t>(it.row_begin) * D, rows * D),
                             std::span<const float>(lse.data() + it.row_begin, rows), ref, dtype_of<Elem>::value));
  }
  return result;
}

// A row-attention case on the storage type `dtype` (run_row_case).
inline RowCaseResult run_row_case_as(DType dtype, const RowCase& c) {
  RowCaseResult unknown;  // a storage type without a case: the callers' status check fails
  unknown.status = cudaErrorInvalidValue;
  return with_storage_element(dtype, [&](auto elem) { return run_row_case<decltype(elem)>(c); }, unknown);
}

}  // namespace decode_bench::testing
