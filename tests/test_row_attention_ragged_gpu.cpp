// Ragged decode batches on row attention through the work list (kernels/row_attention_balance.hpp)
// against the float64 reference: zipf and uniform batches holding the extremes (length 0, 1 and
// 100x the median) at GQA groups 3, 4 and 8 and MQA (one KV head, 64 and 128 query heads: one and
// two row blocks), FP16 / BF16 / FP8 on the tensor-core path, the CUDA-core row kernel (FP32 and
// FP16) on the same entries, contiguous and over shuffled pages, several launches on one workspace
// (the merge counters must come back to zero). Uniform batches keep the uniform plan exactly.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/tuning_policy.hpp"
#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/ragged_lengths.hpp"
#include "tests/row_attention_case.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;
using testing::DecodeCaseResult;
using testing::run_decode_case;

DecodeCaseResult run_any(DType dtype, const DecodeCase& c) { return testing::run_decode_case_as(dtype, c); }
std::string describe(DType dtype, const DecodeCase& c) { return testing::describe_ragged_case(dtype, c); }

// The work-list plan's shape: entries for every item, its sequence chunks mirrored into the
// decode plan, the longest sequence split, and the workspace holding exactly counters, entries and
// the split items' partials (within the bound of row_attention_balance.hpp).
void expect_work_list(const DecodePlan& plan, const DecodeCase& c, const std::string& what) {
  const RowAttentionPlan& r = plan.rows;
  EXPECT_EQ(plan.path, DecodePath::tensor_core) << what;
  ASSERT_FALSE(r.work_entries.empty()) << what;
  EXPECT_EQ(r.work_entries.size(), plan.work_items.size() * static_cast<std::size_t>(c.shape.heads_kv)) << what;
  EXPECT_EQ(plan.chunk_bound, r.chunk_bound) << what;
  EXPECT_GT(plan.num_splits, 1) << what << ": the 100x-median sequence must be split";
  for (const RowWorkEntry& e : r.work_entries) {
    const TokenRange t = row_chunk_range(e.token_end - e.token_begin, e.chunk, e.num_chunks, r.tile_tokens);
    EXPECT_LE(t.end - t.begin, r.chunk_bound) << what;
    EXPECT_EQ(e.token_end, c.lengths[static_cast<std::size_t>(e.item / c.shape.heads_kv)]) << what;
  }
  int dev = 0, sms = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  EXPECT_LE(r.partial_states * r.row_blocks, 4LL * sms * r.blocks_per_sm * c.shape.group()) << what;
  const std::size_t counters = (static_cast<std::size_t>(c.lengths.size()) * c.shape.heads_kv * r.row_blocks *
                                    sizeof(unsigned) + 255) / 256 * 256;
  EXPECT_EQ(r.workspace_init_bytes, r.partial_states > 0 ? counters : 0u) << what;
  EXPECT_EQ(r.workspace_bytes, r.workspace_init_bytes + row_work_entries_bytes(r) +
                                   static_cast<std::size_t>(r.partial_states) * (c.shape.head_dim + 1) * sizeof(float))
      << what;
}

DecodePlan expect_verified(DType dtype, const DecodeCase& c) {
  const auto r = run_any(dtype, c);
  EXPECT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
  return r.plan;
}

// The batches every case runs: zipf with mean 256 (median a few tokens, the 100x-median sequence
// several chunks) and uniform in [1, 300] (its 100x-median sequence ~15K tokens), both with 0 and 1.
std::vector<std::vector<std::int32_t>> ragged_batches(std::uint64_t seed) {
  return {testing::zipf_batch_with_extremes(256, seed, 32), testing::uniform_batch_with_extremes(1, 300, seed + 1, 12)};
}

TEST(RowAttentionRaggedGpu, ZipfAndUniformBatchesAtGqaGroupsAndMqa) {
  DB_REQUIRE_GPU();
  struct Heads {
    int q, kv;
  };
  for (const Heads h : {Heads{12, 4}, Heads{16, 4}, Heads{16, 2}, Heads{64, 1}, Heads{128, 1}})
    for (const auto& lengths : ragged_batches(static_cast<std::uint64_t>(h.q + h.kv)))
      for (int page : {0, 1, 16})
        for (DType dtype : {DType::fp16, DType::bf16}) {
          DecodeCase c{DecodeKernel::flash_decode, {h.q, h.kv, 128}, lengths, page, 0,
                       static_cast<std::uint64_t>(100 + h.q + page)};
          c.host_lengths = true;
          c.launches = 3;
          c.path = DecodePath::tensor_core;
          expect_work_list(expect_verified(dtype, c), c, describe(dtype, c));
        }
}

// FP8 on the tensor-core path (pinned: the planner keeps FP8 on the CUDA cores where they have a
// tiling), and head dims 64 and 256, on the zipf batch, contiguous and paged.
TEST(RowAttentionRaggedGpu, Fp8AndOtherHeadDims) {
  DB_REQUIRE_GPU();
  const auto lengths = testing::zipf_batch_with_extremes(256, 91, 24);
  for (int page : {0, 16}) {
    for (DType dtype : {DType::fp8_e4m3, DType::fp8_e5m2}) {
      DecodeCase c{DecodeKernel::flash_decode, {24, 8, 128}, lengths, page, 0, 92};
      c.host_lengths = true;
      c.launches = 2;
      c.path = DecodePath::tensor_core;
      expect_work_list(expect_verified(dtype, c), c, describe(dtype, c));
    }
    for (int d : {64, 256}) {
      DecodeCase c{DecodeKernel::flash_decode, {32, 8, d}, lengths, page, 0, static_cast<std::uint64_t>(93 + d)};
      c.host_lengths = true;
      c.launches = 2;
      expect_work_list(expect_verified(DType::fp16, c), c, describe(DType::fp16, c));  // automatic: group 4
    }
  }
}

// Uniform batches (every length alike, host lengths given) plan exactly as without host lengths:
// no entries, the same split count, tiling and workspace; this includes the long 1 x 64K at 32 / 8
// heads (8 items, many splits each) and 64 x 1K.
TEST(RowAttentionRaggedGpu, UniformBatchesKeepTheUniformPlan) {
  DB_REQUIRE_GPU();
  for (const auto& [seqs, len] : std::vector<std::pair<int, std::int32_t>>{{1, 65536}, {64, 1024}, {16, 4096}, {7, 0}}) {
    const std::vector<std::int32_t> lengths(static_cast<std::size_t>(seqs), len);
    DecodeProblem p{{32, 8, 128}, DType::fp16, seqs, len};
    DecodePlan without, with;
    DecodeOptions rows;  // 7 x 0 would take the short-sequence kernel
    rows.tuning.fd_short_seq = false;
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, rows, &without), cudaSuccess);
    p.host_seq_lens = lengths.data();
    ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, rows, &with), cudaSuccess);
    SCOPED_TRACE(std::to_string(seqs) + " x " + std::to_string(len));
    EXPECT_EQ(with.path, DecodePath::tensor_core);
    EXPECT_TRUE(with.rows.work_entries.empty());
    EXPECT_TRUE(with.work_items.empty());
    EXPECT_EQ(with.rows.splits, without.rows.splits);
    EXPECT_EQ(with.rows.rows_per_block, without.rows.rows_per_block);
    EXPECT_EQ(with.rows.row_blocks, without.rows.row_blocks);
    EXPECT_EQ(with.rows.stages, without.rows.stages);
    EXPECT_EQ(with.rows.workspace_bytes, without.rows.workspace_bytes);
    EXPECT_EQ(with.rows.workspace_init_bytes, without.rows.workspace_init_bytes);
    EXPECT_EQ(with.num_splits, without.num_splits);
    EXPECT_EQ(with.chunk_bound, 0);
  }
  // A pinned split count, or DECODE_BENCH_FD_BALANCE=0, keeps a ragged batch on the uniform grid too.
  const std::vector<std::int32_t> ragged{5000, 3, 0, 17};
  DecodeProblem p{{32, 8, 128}, DType::fp16, 4, 5000};
  p.host_seq_lens = ragged.data();
  DecodePlan pinned;
  ASSERT_EQ(plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, {.splits = 3}, &pinned), cudaSuccess);
  EXPECT_TRUE(pinned.rows.work_entries.empty());
  EXPECT_EQ(pinned.rows.splits, 3);
  DecodePlan off;
  DecodeOptions balance_off;
  balance_off.tuning.fd_balance = false;
  const cudaError_t off_status = plan_decode<ContiguousKV<__half>>(DecodeKernel::flash_decode, p, balance_off, &off);
  ASSERT_EQ(off_status, cudaSuccess);
  EXPECT_TRUE(off.rows.work_entries.empty());
  DecodeCase c{DecodeKernel::flash_decode, {32, 8, 128}, ragged, 16, 0, 97};
  c.host_lengths = true;
  c.launches = 2;
  expect_work_list(expect_verified(DType::bf16, c), c, describe(DType::bf16, c));
}

// Host lengths the work list cannot use are refused at plan time: lengths with explicit items
// (they describe decode items only), a length past max_item_tokens, a negative length; and a
// work-list plan run on explicit items is refused at launch.
TEST(RowAttentionRaggedGpu, BadHostLengthsAreRefused) {
  DB_REQUIRE_GPU();
  const std::vector<std::int32_t> ragged{5000, 3, 0, 17};
  const DecodeProblem decode{{32, 8, 128}, DType::fp16, 4, 5000};
  RowAttentionProblem p = decode_as_row_attention(decode);
  RowAttentionPlan plan;
  p.host_seq_lens = ragged.data();
  ASSERT_EQ(plan_row_attention<ContiguousKV<__half>>(p, {RowAttentionPath::tensor_core}, &plan), cudaSuccess);
  ASSERT_FALSE(plan.work_entries.empty());

  RowAttentionProblem items = p;  // an item array's problem with host lengths of fewer sequences
  items.num_items = p.num_items - 1;
  EXPECT_EQ(plan_row_attention<ContiguousKV<__half>>(items, {RowAttentionPath::tensor_core}, &plan),
            cudaErrorInvalidValue);
  RowAttentionProblem too_long = p;
  too_long.max_item_tokens = 4999;  // the longest host length is 5000
  EXPECT_EQ(plan_row_attention<ContiguousKV<__half>>(too_long, {RowAttentionPath::tensor_core}, &plan),
            cudaErrorInvalidValue);
  const std::vector<std::int32_t> negative{5000, -1, 0, 17};
  RowAttentionProblem neg = p;
  neg.host_seq_lens = negative.data();
  EXPECT_EQ(plan_row_attention<ContiguousKV<__half>>(neg, {RowAttentionPath::tensor_core}, &plan),
            cudaErrorInvalidValue);

  // A work-list plan with an item array: run_row_attention refuses before any launch.
  ASSERT_EQ(plan_row_attention<ContiguousKV<__half>>(p, {RowAttentionPath::tensor_core}, &plan), cudaSuccess);
  RowAttentionProblem run_items = p;
  const RowAttentionItem fake{};
  run_items.items = &fake;  // never read: refused by the check
  run_items.q = reinterpret_cast<const float*>(16);
  run_items.o = reinterpret_cast<float*>(16);
  run_items.lse = reinterpret_cast<float*>(16);
  std::uint8_t workspace_stub = 0;
  EXPECT_EQ(run_row_attention<ContiguousKV<__half>>(ContiguousKV<__half>{}, run_items, plan, &workspace_stub, nullptr),
            cudaErrorInvalidValue);
}

// The CUDA-core row kernel on the same work list (run through plan_row_attention directly: the
// decode planner pins the tensor cores): FP32 storage, whose only row kernel it is, and FP16.
template <class Elem>
testing::RowCaseResult run_rows_simt(const DecodeCase& c) {
  std::mt19937_64 rng(c.seed);
  const DecodeShape& s = c.shape;
  const int seqs = static_cast<int>(c.lengths.size());
  const testing::CaseKv<Elem> kv_data(s, c.lengths, c.page_size, c.seed, false, rng);
  std::vector<float> q = testing::random_values<float>(static_cast<std::size_t>(seqs) * s.heads_q * s.head_dim, rng,
                                                       -2.f, 2.f);
  DeviceBuffer<float> d_q(q), d_o(q.size()), d_lse(static_cast<std::size_t>(seqs) * s.heads_q);
  DeviceBuffer<std::int32_t> d_lens(c.lengths);
  DecodeProblem problem{s, dtype_of<Elem>::value, seqs, *std::max_element(c.lengths.begin(), c.lengths.end()),
                        d_lens.get(), d_q.get(), d_o.get(), d_lse.get()};
  problem.host_seq_lens = c.lengths.data();
  const RowAttentionProblem rows = decode_as_row_attention(problem);
  testing::RowCaseResult result;
  kv_data.on_device([&](const auto& kv) {
    using KV = std::decay_t<decltype(kv)>;
    result.status = plan_row_attention<KV>(rows, {RowAttentionPath::simt, 0, RowAttentionTiling::automatic, true}, &result.plan);
    if (result.status != cudaSuccess) return;
    DeviceBuffer<std::uint8_t> workspace(std::max<std::size_t>(result.plan.workspace_bytes, 1));
    workspace.poison();
    result.status = init_row_attention_workspace(result.plan, workspace.get(), nullptr);
    for (int launch = 0; launch < c.launches && result.status == cudaSuccess; ++launch) {
      d_o.poison();
      d_lse.poison();
      result.status = run_row_attention<KV>(kv, rows, result.plan, workspace.get(), nullptr);
      if (result.status == cudaSuccess) result.status = cudaDeviceSynchronize();
    }
  });
  if (result.status != cudaSuccess) return result;
  std::int64_t work = 0;  // tokens x query heads x head dim
  for (const std::int32_t len : c.lengths) work += static_cast<std::int64_t>(len) * s.heads_q * s.head_dim;
  if (testing::takes_gpu_reference(c.reference, work)) {
    result.gpu_reference = true;
    kv_data.on_device_slab([&](const auto& slab) {
      result.verification = testing::verify_on_gpu_reference(slab, s, seqs, kv_data.slot_len, d_lens.get(), d_q.get(),
                                                             d_o.get(), d_lse.get(), dtype_of<Elem>::value);
    });
    return result;
  }
  const std::vector<float> o = d_o.download(), lse = d_lse.download();
  result.verification.passed = true;
  const std::size_t per_seq = static_cast<std::size_t>(s.heads_q) * s.head_dim;
  for (int b = 0; b < seqs; ++b) {
    const ReferenceOutput ref =
        reference_decode(kv_data.host, b, c.lengths[static_cast<std::size_t>(b)], std::span<const float>(q).subspan(b * per_seq, per_seq), s);
    accumulate(result.verification,
               verify_decode(std::span<const float>(o).subspan(b * per_seq, per_seq),
                             std::span<const float>(lse).subspan(static_cast<std::size_t>(b) * s.heads_q, s.heads_q), ref,
                             dtype_of<Elem>::value));
  }
  return result;
}

TEST(RowAttentionRaggedGpu, CudaCoreRowKernelOnTheWorkList) {
  DB_REQUIRE_GPU();
  for (const auto& lengths : ragged_batches(111))
    for (int page : {0, 1}) {
      DecodeCase c{DecodeKernel::flash_decode, {24, 8, 128}, lengths, page, 0, 112};
      c.launches = 2;
      for (const DType dtype : {DType::fp32, DType::fp16}) {
        const auto r = dtype == DType::fp32 ? run_rows_simt<float>(c) : run_rows_simt<__half>(c);
        EXPECT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
        EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
        EXPECT_EQ(r.plan.path, RowAttentionPath::simt);
        EXPECT_FALSE(r.plan.work_entries.empty());
        EXPECT_GT(r.plan.splits, 1);
      }
    }
}

}  // namespace
}  // namespace decode_bench
