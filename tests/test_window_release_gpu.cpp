// Windowed decode on a paged pool released behind the window (pools/windowed_pages.hpp,
// sweeps/window_release.hpp): sequences admitted into a device pool of shuffled pages, every page
// wholly before the first query token's window released (its block-table entry -1, in the pool's
// rows and in the gathered batch the kernels read), then decoded by both kernel families that take a
// window, against the float64 variant reference on the source rows: the tensor-core row family
// (q_len 1 and 4, GQA groups 2 and 8) and the CUDA-core split-K variant twins (groups 1 and 2, one
// query token), windows 1, page - 1, page and T - 1. A kernel reading a released entry would read
// page -1: out of bounds in the pool's view (the Small case runs under compute-sanitizer memcheck,
// gpu_sanitize), a page of NaN in a copy of the pages laid out behind one (0 x NaN in o). Then
// the sweep's own points: released pool, recorded pages, the GPU and CPU references, and a backend
// that keeps the full pool saying why. Skipped with the reason where no GPU exists.
#include <gtest/gtest.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/row_attention_wgmma.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "pools/windowed_pages.hpp"
#include "sweep_test_support.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

using nlohmann::json;

struct ReleasedCase {
  DecodeShape shape;
  std::vector<std::int32_t> lengths;
  int page_size = 16;
  AttentionVariant variant;
  DecodeOptions options{};
  std::uint64_t seed = 1;
};

std::string describe(DType dtype, const ReleasedCase& c) {
  std::string lens;
  for (auto l : c.lengths) lens += std::to_string(l) + ",";
  return std::string(dtype_name(dtype)) + " Hq=" + std::to_string(c.shape.heads_q) + " Hkv=" +
         std::to_string(c.shape.heads_kv) + " T=" + lens + " page=" + std::to_string(c.page_size) +
         " splits=" + std::to_string(c.options.splits) + " [" + c.variant.describe() + "]";
}

struct ReleasedResult {
  cudaError_t status = cudaSuccess;
  VerificationResult verification;
  DecodePlan plan;
  std::int64_t released = 0;  // pages released over the batch
};

// Fills a shuffled device pool with random rows, releases behind each sequence's window (asserting
// the released entries in the host rows and in the gathered device batch), decodes twice (the pool's
// view, then the same pages behind a NaN page that entry -1 reaches), and checks every sequence of
// both against the float64 variant reference on its source rows.
template <class Elem>
ReleasedResult run_released_case(const ReleasedCase& c) {
  const DecodeShape& s = c.shape;
  const int seqs = static_cast<int>(c.lengths.size());
  const int q_len = c.variant.q_len;
  const std::int64_t max_len = *std::max_element(c.lengths.begin(), c.lengths.end());
  std::int32_t pages = 0;
  for (auto l : c.lengths) pages += (l + c.page_size - 1) / c.page_size;
  PagedPool pool({.layout = {s.heads_kv, s.head_dim, dtype_of<Elem>::value}, .page_size = c.page_size,
                  .num_pages = pages, .max_seq_len = max_len, .max_seqs = seqs, .page_order = PageOrder::shuffled,
                  .order_seed = c.seed},
                 make_device_backend());
  std::mt19937_64 rng(c.seed);
  std::vector<std::vector<Elem>> k, v;
  std::vector<SequenceHandle> hs;
  ReleasedResult result;
  for (int b = 0; b < seqs; ++b) {
    const std::size_t n = static_cast<std::size_t>(s.heads_kv) * c.lengths[b] * s.head_dim;
    k.push_back(testing::random_values<Elem>(n, rng));
    v.push_back(testing::random_values<Elem>(n, rng));
    hs.push_back(pool.admit(std::span<const Elem>(k.back()), std::span<const Elem>(v.back()), c.lengths[b]));
  }
  std::vector<std::int64_t> kept_from(seqs);  // first kept entry of each sequence
  for (int b = 0; b < seqs; ++b) {
    result.released += release_behind_window(pool, hs[b], c.variant.window, q_len);
    kept_from[b] = window_first_kept(c.lengths[b], c.variant.window, q_len) / c.page_size;
    EXPECT_EQ(pool.released_pages(hs[b]), kept_from[b]) << "sequence " << b;
  }
  const auto batch = pool.batch<Elem>(hs);
  pool.backend().synchronize();
  // The batch the kernels read: sequence b's entries [indptr[b], indptr[b + 1]), the first
  // kept_from[b] of them -1, the rest the pool's pages.
  std::vector<std::int32_t> indptr(seqs + 1);
  DB_CUDA_CHECK(cudaMemcpy(indptr.data(), batch.kv.indptr, indptr.size() * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
  std::vector<std::int32_t> entries(indptr.back());
  DB_CUDA_CHECK(cudaMemcpy(entries.data(), batch.kv.page_indices, entries.size() * sizeof(std::int32_t),
                           cudaMemcpyDeviceToHost));
  for (int b = 0; b < seqs; ++b) {
    const auto table = pool.block_table(hs[b]);
    EXPECT_EQ(indptr[b + 1] - indptr[b], static_cast<std::int32_t>(table.size()));
    for (std::size_t i = 0; i < table.size(); ++i) {
      EXPECT_EQ(entries[indptr[b] + i], table[i]) << "sequence " << b << " entry " << i;
      EXPECT_EQ(table[i] == PagedPool::kReleasedPage, static_cast<std::int64_t>(i) < kept_from[b])
          << "sequence " << b << " entry " << i;
    }
  }

  const std::size_t per_seq = static_cast<std::size_t>(q_len) * s.heads_q;
  const std::vector<float> q = testing::random_values<float>(seqs * per_seq * s.head_dim, rng, -2.f, 2.f);
  const std::vector<float> sinks = sink_logits(s.heads_q, c.seed);
  DeviceBuffer<float> d_q(q), d_o(q.size()), d_lse(seqs * per_seq), d_sinks(sinks);
  DecodeProblem problem{s, dtype_of<Elem>::value, seqs, max_len, batch.seq_lens_device, d_q.get(), d_o.get(), d_lse.get()};
  problem.host_seq_lens = c.lengths.data();
  problem.variant = row_attention_variant(c.variant, d_sinks.get());
  result.status = plan_decode<PagedKV<Elem>>(DecodeKernel::flash_decode, problem, c.options, &result.plan);
  if (result.status != cudaSuccess) return result;
  DeviceBuffer<std::uint8_t> workspace(result.plan.workspace_bytes);

  // The same pages with a NaN page in front: entry -1 of this view is that page, in bounds, so a
  // kernel that loaded a released page and masked it would carry NaN into o (0 x NaN), where the
  // pool's own view (page -1 out of bounds) is memcheck's to catch.
  const std::int64_t stride = batch.kv.page_stride();
  DeviceBuffer<Elem> guarded_k((pages + 1) * stride), guarded_v((pages + 1) * stride);
  guarded_k.poison();  // 0xFF bytes: NaN in FP16 and BF16
  guarded_v.poison();
  DB_CUDA_CHECK(cudaMemcpy(guarded_k.get() + stride, batch.kv.k, pages * stride * sizeof(Elem), cudaMemcpyDeviceToDevice));
  DB_CUDA_CHECK(cudaMemcpy(guarded_v.get() + stride, batch.kv.v, pages * stride * sizeof(Elem), cudaMemcpyDeviceToDevice));
  PagedKV<Elem> guarded = batch.kv;
  guarded.k = guarded_k.get() + stride;
  guarded.v = guarded_v.get() + stride;

  result.verification.passed = true;
  for (const PagedKV<Elem>& kv_view : {batch.kv, guarded}) {
    workspace.poison();
    d_o.poison();
    d_lse.poison();
    DB_CUDA_CHECK(cudaDeviceSynchronize());  // the poison (legacy stream) before the pool's stream decodes
    result.status = init_decode_workspace(result.plan, workspace.get(), pool.stream());
    if (result.status == cudaSuccess) result.status = run_decode(kv_view, problem, result.plan, workspace.get(), pool.stream());
    if (result.status == cudaSuccess) result.status = cudaStreamSynchronize(pool.stream());
    if (result.status != cudaSuccess) return result;
    const std::vector<float> o = d_o.download(), lse = d_lse.download();
    for (int b = 0; b < seqs; ++b) {
      const auto kv = ContiguousKV<Elem>::make(k[b].data(), v[b].data(), s.heads_kv, c.lengths[b], s.head_dim);
      const std::size_t first = static_cast<std::size_t>(b) * per_seq;
      const ReferenceOutput ref = reference_decode_variant(
          kv, 0, c.lengths[b], std::span<const float>(q.data() + first * s.head_dim, per_seq * s.head_dim), s,
          c.variant, sinks);
      accumulate(result.verification,
                 verify_decode(std::span<const float>(o.data() + first * s.head_dim, per_seq * s.head_dim),
                               std::span<const float>(lse.data() + first, per_seq), ref, dtype_of<Elem>::value));
    }
  }
  return result;
}

// Runs the case, asserts that it ran on `path`, released what the rule says and verified. The other
// families' cases run with DECODE_BENCH_FD_SHORT_SEQ=off: one query token whose window holds at most
// 64 tokens (or 128 where the row twins would run it) plans on the short path otherwise.
void expect_verified(DType dtype, ReleasedCase c, DecodePath path) {
  if (path != DecodePath::short_seq) c.options.tuning.fd_short_seq = false;
  SCOPED_TRACE(describe(dtype, c));
  const ReleasedResult r = dtype == DType::bf16 ? run_released_case<__nv_bfloat16>(c) : run_released_case<__half>(c);
  ASSERT_EQ(r.status, cudaSuccess) << cudaGetErrorString(r.status);
  EXPECT_EQ(r.plan.path, path);
  std::int64_t expected = 0;
  for (auto l : c.lengths) expected += window_first_kept(l, c.variant.window, c.variant.q_len) / c.page_size;
  EXPECT_EQ(r.released, expected);
  EXPECT_TRUE(r.verification.passed) << r.verification.summary();
}

// The windows of the brief around a page and the sequence: 1, page - 1, page, T - 1.
std::vector<std::int64_t> windows_of(int page, std::int64_t t) {
  std::vector<std::int64_t> w{1, page, t - 1};
  if (page > 2) w.push_back(page - 1);
  return w;
}

constexpr DecodeShape kMha{32, 32, 128};
constexpr DecodeShape kGroup2{32, 16, 128};
constexpr DecodeShape kGroup8{32, 4, 128};

// The tensor-core row family: q_len 1 and 4, sinks on, GQA group 8 (its own family) and group 2
// pinned to it; pages of 16 and 7, one sequence of 300 and a ragged pair (the short one's window
// covering it whole at T - 1: nothing released there), the planner's splits and 5.
TEST(WindowReleaseGpu, RowFamilyNeverReadsAReleasedPage) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 1;
  for (int page : {16, 7})
    for (int q_len : {1, 4})
      for (std::int64_t w : windows_of(page, 300))
        for (int splits : {0, 5}) {
          const AttentionVariant v{.q_len = q_len, .window = w, .sinks = true};
          expect_verified(DType::fp16, {kGroup8, {300}, page, v, {.splits = splits}, ++seed}, DecodePath::tensor_core);
          expect_verified(DType::bf16, {kGroup2, {300, 77}, page, v, {.splits = splits, .path = DecodePath::tensor_core}, ++seed},
                          DecodePath::tensor_core);
        }
}

// The CUDA-core split-K variant twins: one query token at groups 1 and 2 (their own routing), a
// window alone and with sinks and a soft-cap, unsplit, the planner's splits and forced ones.
TEST(WindowReleaseGpu, CudaCoreTwinsNeverReadAReleasedPage) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 100;
  for (int page : {16, 7})
    for (std::int64_t w : windows_of(page, 300))
      for (int splits : {0, 1, 7}) {
        const AttentionVariant window{.window = w};
        const AttentionVariant all{.window = w, .sinks = true, .logits_soft_cap = 20.0};
        expect_verified(DType::fp16, {kMha, {300, 77}, page, window, {.splits = splits}, ++seed}, DecodePath::cuda_core);
        expect_verified(DType::bf16, {kGroup2, {300}, page, all, {.splits = splits}, ++seed}, DecodePath::cuda_core);
      }
}

// The short-sequence kernel's variants (one query token, a window of at most 128 tokens: both
// stages), sinks and a soft-cap, at GQA group 8 and MHA, pages of 16 and 7, one sequence of 300 and
// a ragged pair.
TEST(WindowReleaseGpu, ShortPathNeverReadsAReleasedPage) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 200;
  for (int page : {16, 7})
    for (std::int64_t w : {std::int64_t{1}, std::int64_t{page - 1}, std::int64_t{page}, std::int64_t{100}}) {
      const AttentionVariant v{.window = w, .sinks = true, .logits_soft_cap = 20.0};
      DecodeOptions long_stage;
      long_stage.tuning.fd_short_max_len = 128;  // MHA's 100-token windows too (the CUDA-core twins' otherwise)
      expect_verified(DType::fp16, {kGroup8, {300}, page, v, {}, ++seed}, DecodePath::short_seq);
      expect_verified(DType::bf16, {kMha, {300, 77}, page, v, long_stage, ++seed}, DecodePath::short_seq);
    }
}

// The gpu_sanitize case (memcheck reports a read of entry -1): every family, released entries on
// pages of 7, q_len 4 on the row family, splits on the twins, both stages of the short path.
TEST(WindowReleaseGpu, Small) {
  DB_REQUIRE_GPU();
  for (std::int64_t w : {7, 100})
    expect_verified(DType::fp16, {kGroup8, {200, 60}, 7, {.window = w, .sinks = true}, {}, 14u + static_cast<std::uint64_t>(w)},
                    DecodePath::short_seq);
  expect_verified(DType::fp16, {kGroup8, {200, 60}, 7, {.q_len = 4, .window = 7, .sinks = true}, {.splits = 3}, 11},
                  DecodePath::tensor_core);
  expect_verified(DType::fp16, {kMha, {200, 60}, 7, {.window = 6}, {.splits = 3}, 12}, DecodePath::cuda_core);
  expect_verified(DType::bf16, {kGroup2, {200}, 16, {.window = 1, .sinks = true}, {}, 13}, DecodePath::cuda_core);
}

// The sweep's points: decode-bench's own backend releases (pool.pages_released the rule's count, the
// family the routing picks), window_release false keeps every page, both verify on the GPU float64
// reference and on the CPU one.
TEST(WindowReleaseSweepGpu, PointsReleaseBehindTheWindowAndVerify) {
  DB_REQUIRE_GPU();
  const json preset = sweeps::testing::one_experiment(
      {{"heads_kv", {32, 16, 4}}, {"q_len", {1, 4}}, {"window", {1, 15, 16, 299}}, {"window_release", {true, false}}},
      {{"kernel", "flash_decode"}, {"layout", "paged"}, {"page_size", 16}, {"page_order", "shuffled"}, {"heads_q", 32},
       {"batch", 2}, {"T", 300}, {"dtype", "fp16"}, {"sinks", true}, {"timing", "hot"}, {"counters", false}});
  const sweeps::Plan plan = sweeps::testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 48u);
  const bool wgmma = wgmma_row_kernel_runs_on(0);
  auto runner = sweeps::make_kernel_runner(KernelKind::flash_decode);
  for (const sweeps::Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    const int q_len = point.parameters["q_len"], hkv = point.parameters["heads_kv"];
    const std::int64_t w = point.parameters["window"];
    const bool release = point.parameters["window_release"];
    for (const bool on_host : {false, true}) {
      if (on_host && w != 16) continue;  // the CPU reference on one window: it is slow
      sweeps::RunContext ctx;
      ctx.verify_on_host = on_host;
      ctx.timing.repetitions = 1;
      ctx.timing.warmup = 1;
      const json r = runner->run(point, ctx);
      ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
      EXPECT_TRUE(r["verification"]["passed"].get<bool>()) << r["verification"].dump();
      EXPECT_EQ(r["verification"]["method"], on_host ? "cpu" : "gpu");
      const std::int64_t per_seq = window_first_kept(300, w, q_len) / 16;
      ASSERT_TRUE(r.contains("pool")) << r.dump();
      EXPECT_EQ(r["pool"]["pages"], 2 * 19);
      EXPECT_EQ(r["pool"]["pages_released"], release ? 2 * per_seq : 0);
      EXPECT_EQ(r["pool"]["pages_held"], 2 * 19 - (release ? 2 * per_seq : 0));
      EXPECT_EQ(r["pool"]["window_release"], release);
      // One query token: windows of at most 64 tokens on the short path at every group; else MHA
      // and group 2 on the CUDA-core twins, group 8 on the warpgroup-MMA kernel's twin where it
      // runs (else the row twins), q_len 4 on the row twins.
      EXPECT_EQ(r["plan"]["family"], q_len == 1 && w <= 64                 ? "short_decode"
                                     : q_len == 1 && hkv >= 16             ? "splitk_cuda_core"
                                     : q_len == 1 && wgmma                 ? "rows_wgmma"
                                                                           : "rows_mma");
    }
  }
}

// The backends that keep the full pool (FlashInfer's CUDA-core decode and tensor-core prefill,
// where this build has them) say why, release nothing and verify.
TEST(WindowReleaseSweepGpu, FlashInferKeepsTheFullPoolAndSaysWhy) {
  DB_REQUIRE_GPU();
  const json preset = sweeps::testing::one_experiment(
      {{"backend", {"flashinfer", "flashinfer_tc"}}, {"window", {16, 100}}},
      {{"kernel", "flash_decode"}, {"layout", "paged"}, {"page_size", 16}, {"heads_q", 32}, {"heads_kv", 8},
       {"batch", 2}, {"T", 300}, {"dtype", "fp16"}, {"timing", "hot"}, {"counters", false}});
  const sweeps::Plan plan = sweeps::testing::plan_of(preset);
  ASSERT_EQ(plan.points.size(), 4u);
  auto runner = sweeps::make_kernel_runner(KernelKind::flash_decode);
  int measured = 0;
  for (const sweeps::Point& point : plan.points) {
    SCOPED_TRACE(point.id);
    EXPECT_FALSE(point.parameters.contains("window_release"));
    sweeps::RunContext ctx;
    ctx.timing.repetitions = 1;
    ctx.timing.warmup = 1;
    const json r = runner->run(point, ctx);
    if (r.value("status", "") == "skipped") continue;  // no FlashInfer in this build: nothing built
    ++measured;
    ASSERT_EQ(r.value("status", ""), "ok") << r.dump();
    EXPECT_EQ(r["pool"]["window_release"], false);
    EXPECT_EQ(r["pool"]["pages_released"], 0);
    EXPECT_EQ(r["pool"]["pages_held"], 2 * 19);
    EXPECT_NE(r["pool"]["reason"].get<std::string>().find("keeps the full pool"), std::string::npos);
  }
  if (measured == 0) GTEST_SKIP() << "no FlashInfer backend measured a point in this build";
}

}  // namespace
}  // namespace decode_bench
