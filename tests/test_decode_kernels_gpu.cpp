// GPU decode kernels against the float64 reference: every kernel, layout, dtype, head dim, GQA
// group, page size and block count the kernels issue asks for, on fresh random data with outputs
// poisoned (NaN) before each launch. Skipped (with the reason) where no GPU exists.
#include <gtest/gtest.h>

#include "tests/decode_case.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

using testing::DecodeCase;
using testing::run_decode_case;

testing::DecodeCaseResult run_any(DType dtype, const DecodeCase& c) { return testing::run_decode_case_as(dtype, c); }

std::string describe(DType dtype, const DecodeCase& c) {
  std::string lens;
  for (auto l : c.lengths) lens += std::to_string(l) + ",";
  return std::string(decode_kernel_name(c.kernel)) + " " + std::string(dtype_name(dtype)) + " Hq=" +
         std::to_string(c.shape.heads_q) + " Hkv=" + std::to_string(c.shape.heads_kv) + " D=" +
         std::to_string(c.shape.head_dim) + " T=" + lens + " page=" + std::to_string(c.page_size) +
         " splits=" + std::to_string(c.splits) + " heads_per_block=" + std::to_string(c.heads_per_block);
}

void expect_verified(DType dtype, const DecodeCase& c) {
  const auto r = run_any(dtype, c);
  ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
  EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
}

constexpr DType kDtypes[] = {DType::fp32, DType::fp16, DType::bf16};
constexpr DecodeKernel kKernels[] = {DecodeKernel::baseline, DecodeKernel::flash_decode};

TEST(DecodeKernelsGpu, SequenceLengths) {
  DB_REQUIRE_GPU();
  for (auto kernel : kKernels)
    for (auto dtype : kDtypes)
      for (int page : {0, 16})
        for (std::int32_t T : {1, 3, 17, 255, 1013, 4096})
          expect_verified(dtype, {kernel, {4, 2, 128}, {T}, page, 0, static_cast<std::uint64_t>(T + page)});
}

TEST(DecodeKernelsGpu, PageSizesShuffled) {
  DB_REQUIRE_GPU();
  for (auto kernel : kKernels)
    for (int page : {1, 3, 7, 16, 256, 512})
      for (auto dtype : {DType::fp32, DType::fp16})
        expect_verified(dtype, {kernel, {2, 1, 128}, {1013}, page, 0, static_cast<std::uint64_t>(page)});
}

TEST(DecodeKernelsGpu, BlockCounts) {
  DB_REQUIRE_GPU();
  for (int splits : {1, 7, 128, 1024, 5000})  // 5000 > T: most blocks see no token
    for (int page : {0, 7}) {
      expect_verified(DType::fp32, {DecodeKernel::flash_decode, {1, 1, 128}, {1013}, page, splits, 11});
      expect_verified(DType::bf16, {DecodeKernel::flash_decode, {1, 1, 128}, {4096}, page, splits, 12});
    }
}

TEST(DecodeKernelsGpu, HeadDimsAndGqaGroups) {
  DB_REQUIRE_GPU();
  for (auto kernel : kKernels)
    for (auto dtype : kDtypes)
      for (int d : {64, 128, 256})
        for (int group : {1, 2, 4, 8})
          for (int page : {0, 7})
            expect_verified(dtype, {kernel, {8, 8 / group, d}, {255}, page, 0, static_cast<std::uint64_t>(d + group)});
}

TEST(DecodeKernelsGpu, BatchWithEmptyAndShortSequences) {
  DB_REQUIRE_GPU();
  for (auto kernel : kKernels)
    for (int page : {0, 3, 16})
      expect_verified(DType::fp16, {kernel, {4, 4, 128}, {0, 1, 17, 1013, 300, 4096}, page, 0, 21});
}

TEST(DecodeKernelsGpu, UnsupportedConfigurationsAreRefused) {
  DB_REQUIRE_GPU();
  // Group 3: FP16/BF16 run it on the tensor-core path (tests/test_row_attention_gpu.cpp), FP32 has no kernel.
  const auto r = run_any(DType::fp32, {DecodeKernel::flash_decode, {3, 1, 128}, {17}, 0, 0, 1});
  EXPECT_EQ(r.status, cudaErrorInvalidValue);
  const auto r2 = run_any(DType::fp16, {DecodeKernel::flash_decode, {1, 1, 72}, {17}, 0, 0, 1});  // D 72
  EXPECT_EQ(r2.status, cudaErrorInvalidValue);
}

// The fused merge's per-head counters must be back at zero after every launch (a stale count
// would skip or misplace the merge, leaving poisoned outputs); the separate merge kernel must
// agree with the same reference.
TEST(DecodeKernelsGpu, RepeatedLaunchesOnOneWorkspaceAndSeparateMerge) {
  DB_REQUIRE_GPU();
  for (bool fused : {true, false})
    for (int page : {0, 16})
      for (int splits : {0, 7}) {
        DecodeCase c{DecodeKernel::flash_decode, {8, 2, 128}, {1013, 4096, 0}, page, splits, 41};
        c.fused_merge = fused;
        c.launches = 3;
        SCOPED_TRACE(fused ? "fused merge" : "separate merge kernel");
        expect_verified(DType::fp16, c);
      }
}

// Several KV heads per block (the block's warps in one group per head): every head count the warps
// allow, contiguous and over shuffled pages, splits automatic and 7, three launches on one
// workspace (the fused merge counts per head block), ragged batch with an empty sequence.
TEST(DecodeKernelsGpu, HeadsPerBlock) {
  DB_REQUIRE_GPU();
  const auto check = [](DType dtype, DecodeCase c, int heads) {
    c.heads_per_block = heads;
    c.launches = 3;
    const auto r = run_any(dtype, c);
    ASSERT_EQ(r.status, cudaSuccess) << describe(dtype, c) << ": " << cudaGetErrorString(r.status);
    EXPECT_EQ(r.plan.heads_per_block, heads) << describe(dtype, c);
    EXPECT_TRUE(r.verification.passed) << describe(dtype, c) << ": " << r.verification.summary();
  };
  for (int heads : {1, 2, 4, 8})  // group 2: 8 warps
    for (int page : {0, 1, 7})
      for (int splits : {0, 7})
        check(DType::fp16, {DecodeKernel::flash_decode, {16, 8, 128}, {1013, 4096, 0, 17}, page, splits, 51}, heads);
  for (int heads : {1, 2, 4})  // group 4: 4 warps; FP32 rows of 64 and BF16 rows of 256
    for (int page : {0, 3}) {
      check(DType::fp32, {DecodeKernel::flash_decode, {16, 4, 64}, {255, 1013}, page, 0, 52}, heads);
      check(DType::bf16, {DecodeKernel::flash_decode, {16, 4, 256}, {255, 1013}, page, 0, 53}, heads);
    }
}

// A head count must divide both the block's warps and H_kv.
TEST(DecodeKernelsGpu, HeadsPerBlockThatDoNotTileAreRefused) {
  DB_REQUIRE_GPU();
  for (auto [shape, heads] : {std::pair{DecodeShape{8, 8, 128}, 3}, std::pair{DecodeShape{16, 16, 128}, 16},
                              std::pair{DecodeShape{12, 12, 128}, 8}}) {
    DecodeCase c{DecodeKernel::flash_decode, shape, {255}, 0, 0, 54};
    c.heads_per_block = heads;
    EXPECT_EQ(run_any(DType::fp16, c).status, cudaErrorInvalidValue) << describe(DType::fp16, c);
  }
}

// Host side of the same rule (no GPU needed): run_decode refuses a plan whose head count does not
// tile, before any CUDA call, so a hand-edited plan cannot launch a grid that skips heads.
TEST(DecodeRun, RefusesAPlanWhoseHeadsPerBlockDoNotTile) {
  const DecodeProblem problem{{8, 8, 128}, DType::fp16, 1, 255};
  const auto kv = ContiguousKV<__half>::make(nullptr, nullptr, 8, 255, 128);
  for (int heads : {0, 3, 16}) {
    DecodePlan plan;
    plan.heads_per_block = heads;
    EXPECT_EQ(run_decode(kv, problem, plan, nullptr, nullptr), cudaErrorInvalidValue) << "heads_per_block " << heads;
  }
}

// Host side of the workspace contract (no GPU needed): nothing to zero is a no-op, and a missing
// or too-short workspace is refused before any CUDA call.
TEST(DecodeWorkspace, InitRefusesAMissingOrShortWorkspace) {
  DecodePlan plan;
  EXPECT_EQ(init_decode_workspace(plan, nullptr, nullptr), cudaSuccess);  // single split: nothing to zero
  plan.workspace_init_bytes = 256;
  plan.workspace_bytes = 4096;
  EXPECT_EQ(init_decode_workspace(plan, nullptr, nullptr), cudaErrorInvalidValue);
  int not_device_memory = 0;
  plan.workspace_bytes = 128;  // shorter than the part to zero
  EXPECT_EQ(init_decode_workspace(plan, &not_device_memory, nullptr), cudaErrorInvalidValue);
}

// Host side of plan_decode's refusal (no GPU needed): each unsupported problem gets a sentence that
// names the value.
TEST(DecodeUnsupportedReason, NamesTheOffendingValue) {
  const auto reason = [](DecodeProblem p) {
    const auto r = decode_unsupported_reason(p);
    return r ? *r : "<supported>";
  };
  const DecodeProblem ok{{8, 2, 128}, DType::fp16, 4, 4096};
  EXPECT_EQ(reason(ok), "<supported>");
  DecodeProblem p = ok;
  p.shape.head_dim = 72;  // not a multiple of 16 (96 runs on the d = 128 kernel: tests/test_head_dims_gpu.cpp)
  EXPECT_EQ(reason(p), head_dim_unsupported_reason(72));
  p = ok;
  p.shape.heads_q = 48;  // group 24
  EXPECT_EQ(reason(p),
            "GQA group 24 has no compiled kernel (supported: 1, 2, 4, 8; with FP16/BF16/FP8 storage also 3-16, and MQA "
            "with up to 128 query heads)");
  p = ok;
  p.num_seqs = 0;
  EXPECT_EQ(reason(p), "num_seqs must be >= 1");
  p = ok;
  p.max_len = std::int64_t{1} << 31;
  EXPECT_EQ(reason(p), "sequence lengths must be in [0, 2^31)");
}

// The seed paper's longest sequence: 2^21 tokens, one head, d = 128.
TEST(DecodeKernelsGpu, TwoMillionTokens) {
  DB_REQUIRE_GPU();
  expect_verified(DType::fp32, {DecodeKernel::flash_decode, {1, 1, 128}, {2097152}, 0, 0, 31});
  expect_verified(DType::fp16, {DecodeKernel::flash_decode, {1, 1, 128}, {2097152}, 16, 0, 32});
  expect_verified(DType::fp16, {DecodeKernel::baseline, {1, 1, 128}, {2097152}, 0, 0, 33});
}

// Single-token pages in shuffled order over a long sequence: hundreds of splits, every row at a
// random place in the arena (the shape of the sweep's paged page-1 points).
TEST(DecodeKernelsGpu, LongSequenceOnShuffledSingleTokenPages) {
  DB_REQUIRE_GPU();
  expect_verified(DType::fp16, {DecodeKernel::flash_decode, {1, 1, 128}, {262144}, 1, 0, 34});
  expect_verified(DType::fp32, {DecodeKernel::flash_decode, {4, 1, 128}, {65537}, 1, 0, 35});
}

}  // namespace
}  // namespace decode_bench
