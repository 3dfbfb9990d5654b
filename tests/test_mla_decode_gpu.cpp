// decode-bench's MLA decode kernels (kernels/mla/mla_decode.hpp: the 64-row kernel and the narrow
// one for rows <= 32) against the float64 reference (kernels/mla/mla_reference.hpp) over the same
// stored latent values (times the FP8 scale): every h_q of DeepSeek-V3's tensor-parallel shapes
// plus an odd one (24), q_len 1 and 2, lengths 1, 63, 64, 65 and 100003, pages of 1, 7 and 64
// tokens in order and shuffled, contiguous caches, a batch with an empty sequence, FP16, BF16 and
// FP8 E4M3 (one scale for the cache), one split and several (the LSE merge). The case, the
// reference and its error bound: tests/mla_decode_case.hpp.
#include <cmath>
#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "harness/device_buffer.hpp"
#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_reference.hpp"
#include "pools/latent_cache.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/mla_decode_case.hpp"

namespace decode_bench {
namespace {

// A case of tests/mla_decode_case.hpp, and the kernel its plan must pick where it is about one.
struct MlaCase : testing::MlaDecodeCase {
  std::optional<MlaKernel> kernel;
};

// The case through plan_mla_decode (the mma.sync kernels, whatever the device) against the float64
// reference and its bound (tests/mla_decode_case.hpp).
void run(const MlaCase& c) {
  const MlaDecodePlan plan = testing::run_mla_decode_case(
      c, [](const MlaShape& shape, DType dtype, int batch, std::int64_t max_len, int sm_count, int splits) {
        return plan_mla_decode(shape, dtype, batch, max_len, sm_count, splits);
      });
  if (c.kernel) {
    EXPECT_EQ(plan.kernel, *c.kernel) << mla_kernel_name(plan.kernel);
  }
}

TEST(MlaDecodeGpu, EveryHeadCountAndQueryLength) {
  DB_REQUIRE_GPU();
  for (const int h : {16, 24, 32, 64, 128})
    for (const int q_len : {1, 2}) {
      MlaCase c;
      c.heads_q = h;
      c.q_len = q_len;
      c.lengths = {1, 63, 64, 65, 300};
      c.shuffle = true;
      run(c);
    }
}

TEST(MlaDecodeGpu, PageSizesOrdersAndStorage) {
  DB_REQUIRE_GPU();
  for (const int page : {1, 7, 64})
    for (const bool shuffle : {false, true}) {
      MlaCase c;
      c.heads_q = 32;
      c.lengths = {1, 63, 64, 65, 129};
      c.page_size = page;
      c.shuffle = shuffle;
      run(c);
    }
  MlaCase contiguous;
  contiguous.heads_q = 16;
  contiguous.q_len = 2;
  contiguous.lengths = {65, 1, 200};
  contiguous.storage = LatentStorage::contiguous;
  run(contiguous);
}

TEST(MlaDecodeGpu, EmptySequenceAndBothStorageTypes) {
  DB_REQUIRE_GPU();
  for (const DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (const int splits : {1, 3}) {
      MlaCase c;
      c.heads_q = 24;
      c.q_len = 2;
      c.dtype = dtype;
      c.lengths = {100, 0, 1, 257};
      c.splits = splits;
      c.q_amplitude = 4.f;  // sharper softmax
      run(c);
    }
}

TEST(MlaDecodeGpu, SplitsMergeByLogSumExp) {
  DB_REQUIRE_GPU();
  for (const int splits : {1, 2, 5, 64}) {
    MlaCase c;
    c.heads_q = 128;
    c.lengths = {2048, 777};
    c.splits = splits;
    run(c);
  }
}

TEST(MlaDecodeGpu, LongSequence) {
  DB_REQUIRE_GPU();
  MlaCase c;
  c.heads_q = 16;
  c.lengths = {100003};
  c.shuffle = true;
  c.kernel = MlaKernel::mma_narrow;
  run(c);
  c.heads_q = 64;  // the 64-row kernel
  c.lengths = {20011};
  c.kernel = MlaKernel::mma;
  run(c);
}

// The narrow kernel (rows <= 32: 16 rows per block at h_q 16 q_len 1, else 32, padding rows
// included at h_q 24) over lengths around its 64-token tile and the 8-token warp shares (1, 7, 8,
// 9, 63, 64, 65, 129), an empty sequence, pages of 1, 7 and 64 shuffled, the three storage types.
TEST(MlaDecodeGpu, NarrowKernelRowsLengthsPagesAndTypes) {
  DB_REQUIRE_GPU();
  const int shapes[][2] = {{16, 1}, {16, 2}, {24, 1}, {32, 1}};
  for (const auto& hq : shapes)
    for (const int page : {1, 7, 64})
      for (const DType dtype : {DType::bf16, DType::fp16, DType::fp8_e4m3}) {
        MlaCase c;
        c.heads_q = hq[0];
        c.q_len = hq[1];
        c.lengths = {1, 63, 0, 64, 65, 7, 8, 9, 129};
        c.page_size = page;
        c.shuffle = true;
        c.dtype = dtype;
        c.kernel = MlaKernel::mma_narrow;
        run(c);
      }
}

// The narrow kernel's split partials merged by their log-sum-exp (ranges of 1, 2, ... tiles; an
// empty sequence; a split past a short sequence's end), and a sharp softmax.
TEST(MlaDecodeGpu, NarrowSplitsMergeByLogSumExp) {
  DB_REQUIRE_GPU();
  for (const int q_len : {1, 2})
    for (const int splits : {1, 2, 5, 64}) {
      MlaCase c;
      c.heads_q = 16;
      c.q_len = q_len;
      c.lengths = {2048, 777, 0, 65};
      c.splits = splits;
      c.q_amplitude = 4.f;
      c.kernel = MlaKernel::mma_narrow;
      run(c);
    }
}

// Small narrow cases of each storage type, with and without splits (the sanitizers' share).
TEST(MlaDecodeGpu, NarrowStorageTypesAndSplits) {
  DB_REQUIRE_GPU();
  for (const DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3})
    for (const int q_len : {1, 2})
      for (const int splits : {1, 3}) {
        MlaCase c;
        c.heads_q = 16;
        c.q_len = q_len;
        c.dtype = dtype;
        c.lengths = {100, 0, 1, 257};
        c.page_size = 7;
        c.shuffle = true;
        c.splits = splits;
        c.kernel = MlaKernel::mma_narrow;
        run(c);
      }
}

// A long sequence on the narrow kernel at 32 rows (q_len 2: the last tile's causal cut) and FP8.
TEST(MlaDecodeGpu, NarrowLongSequence) {
  DB_REQUIRE_GPU();
  for (const DType dtype : {DType::bf16, DType::fp8_e4m3}) {
    MlaCase c;
    c.heads_q = 16;
    c.q_len = 2;
    c.lengths = {40001, 3};
    c.shuffle = true;
    c.dtype = dtype;
    c.kernel = MlaKernel::mma_narrow;
    run(c);
  }
}

// Host-side: what the kernel refuses and how the planner splits.
TEST(MlaDecodePlan, UnsupportedShapesAreRefusedAndSplitsAreBounded) {
  MlaShape s;
  EXPECT_EQ(mla_decode_unsupported_reason(s, DType::bf16), "");
  s.kv_lora_rank = 256;
  EXPECT_NE(mla_decode_unsupported_reason(s, DType::bf16).find("kv_lora_rank 512"), std::string::npos);
  EXPECT_EQ(mla_decode_unsupported_reason(MlaShape{}, DType::fp8_e4m3), "");
  EXPECT_NE(mla_decode_unsupported_reason(MlaShape{}, DType::fp8_e5m2).find("not fp8_e5m2"), std::string::npos);
  // The plan: rows in blocks of 64, splits bounded by the tiles, workspace only with splits.
  MlaShape h128;
  const MlaDecodePlan one = plan_mla_decode(h128, DType::bf16, 128, 4096, 132);
  EXPECT_EQ(one.row_blocks, 2);
  EXPECT_EQ(one.num_splits, 2);  // 256 blocks already cover 2 waves of 132 SMs: ceil(264 / 256) = 2
  const MlaDecodePlan small = plan_mla_decode(h128, DType::bf16, 1, 100, 132);
  EXPECT_EQ(small.num_splits, 1);  // 4 tiles: at least 4 tiles per split
  EXPECT_EQ(small.workspace_bytes, 0u);
  const MlaDecodePlan forced = plan_mla_decode(h128, DType::bf16, 1, 100, 132, 3);
  // FP8 stages bytes and widens them into one FP16 work tile: less shared memory than two FP16 stages.
  EXPECT_LT(plan_mla_decode(h128, DType::fp8_e4m3, 1, 100, 132).shared_bytes, forced.shared_bytes);
  EXPECT_EQ(forced.num_splits, 2);  // 4 tiles in splits of ceil(4 / 3) = 2 tiles: 2 splits, none empty
  EXPECT_EQ(forced.workspace_bytes, 2u * 128 * 513 * 4);
  EXPECT_EQ(one.kernel, MlaKernel::mma);
  EXPECT_EQ(one.to_json()["kernel"], "mla_decode_mma");
  EXPECT_EQ(one.to_json()["rows_per_block"], 64);
  EXPECT_EQ(one.to_json()["tile_tokens"], 32);
  EXPECT_EQ(one.to_json()["stages"], 2);
}

MlaShape mla_rows(int heads_q, int q_len) {
  MlaShape s;
  s.heads_q = heads_q;
  s.q_len = q_len;
  return s;
}

// Rows <= 32 take the narrow kernel (16 rows per block up to 16, else 32), more take the 64-row one.
TEST(MlaDecodePlan, FewRowsTakeTheNarrowKernel) {
  const int narrow[][3] = {{16, 1, 16}, {8, 2, 16}, {16, 2, 32}, {24, 1, 32}, {32, 1, 32}, {1, 1, 16}, {17, 1, 32}};
  for (const auto& n : narrow) {
    SCOPED_TRACE("h_q " + std::to_string(n[0]) + " q_len " + std::to_string(n[1]));
    const MlaDecodePlan p = plan_mla_decode(mla_rows(n[0], n[1]), DType::bf16, 4, 1000, 132);
    EXPECT_EQ(p.kernel, MlaKernel::mma_narrow);
    EXPECT_EQ(p.rows_per_block, n[2]);
    EXPECT_EQ(p.row_blocks, 1);
    EXPECT_EQ(p.tile_tokens, 64);
    EXPECT_EQ(p.threads, 256);
  }
  for (const auto& wide : {mla_rows(32, 2), mla_rows(33, 1), mla_rows(24, 2), mla_rows(128, 1)}) {
    const MlaDecodePlan p = plan_mla_decode(wide, DType::bf16, 4, 1000, 132);
    EXPECT_EQ(p.kernel, MlaKernel::mma) << wide.rows();
    EXPECT_EQ(p.rows_per_block, 64);
    EXPECT_EQ(p.tile_tokens, 32);
  }
}

// The narrow plan's JSON, its shared memory (Q, P, the row reductions, the stages: 16-bit two of
// 64 x 1168 bytes; FP8 one FP16 work tile and three byte stages of 64 x 576) and its splits.
TEST(MlaDecodePlan, NarrowPlanFieldsAndSplits) {
  const MlaDecodePlan h16 = plan_mla_decode(mla_rows(16, 1), DType::bf16, 128, 4096, 132);
  const nlohmann::json j = h16.to_json();
  EXPECT_EQ(j["kernel"], "mla_decode_mma_narrow");
  EXPECT_EQ(j["rows"], 16);
  EXPECT_EQ(j["rows_per_block"], 16);
  EXPECT_EQ(j["row_blocks"], 1);
  EXPECT_EQ(j["tile_tokens"], 64);
  EXPECT_EQ(j["stages"], 2);
  EXPECT_EQ(j["threads"], 256);
  EXPECT_EQ(j["shared_bytes"], 16 * 1168 + 16 * 144 + 8 * 16 * 4 + 2 * 64 * 1168);
  const MlaDecodePlan h16_fp8 = plan_mla_decode(mla_rows(16, 1), DType::fp8_e4m3, 128, 4096, 132);
  EXPECT_EQ(h16_fp8.stages, 3);
  EXPECT_EQ(h16_fp8.shared_bytes, 16u * 1168 + 16 * 144 + 8 * 16 * 4 + 64 * 1168 + 3 * 64 * 576);
  const MlaDecodePlan h32 = plan_mla_decode(mla_rows(16, 2), DType::fp16, 128, 4096, 132);
  EXPECT_EQ(h32.shared_bytes, 32u * 1168 + 32 * 144 + 8 * 32 * 4 + 2 * 64 * 1168);
  // Every narrow block fits sm_90's 227 KiB and takes over half an SM's 228 KiB (one per SM).
  for (const DType dtype : {DType::bf16, DType::fp8_e4m3})
    for (const int q_len : {1, 2}) {
      const MlaDecodePlan p = plan_mla_decode(mla_rows(16, q_len), dtype, 1, 64, 132);
      EXPECT_LE(p.shared_bytes, 227u * 1024);
      EXPECT_GT(p.shared_bytes, 114u * 1024);
    }
  // Splits (132 SMs): 128 x 4K is one wave of one split each (64 tiles; 2 splits cost 2 waves of
  // 32 tiles plus the partials and the merge); 128 x 16K too (64 splits would be 63 waves of 4
  // tiles plus the partials); 32 x 4K fills the wave with 4 splits of 16 tiles; 1 x 32K takes 128
  // splits of 4 tiles (512 tiles; 4 tiles per split needs 128).
  EXPECT_EQ(h16.num_splits, 1);
  EXPECT_EQ(h16.split_tiles, 64);
  EXPECT_EQ(h16.workspace_bytes, 0u);
  EXPECT_EQ(plan_mla_decode(mla_rows(16, 1), DType::bf16, 128, 16384, 132).num_splits, 1);
  const MlaDecodePlan b32 = plan_mla_decode(mla_rows(16, 1), DType::bf16, 32, 4096, 132);
  EXPECT_EQ(b32.num_splits, 4);
  EXPECT_EQ(b32.split_tiles, 16);
  EXPECT_EQ(b32.workspace_bytes, 4u * 32 * 16 * 513 * 4);
  const MlaDecodePlan b1 = plan_mla_decode(mla_rows(16, 2), DType::bf16, 1, 32768, 132);
  EXPECT_EQ(b1.num_splits, 128);
  EXPECT_EQ(b1.split_tiles, 4);
  // A split count given is taken, clamped to the tiles: 100 tokens are 2 tiles.
  const MlaDecodePlan forced = plan_mla_decode(mla_rows(16, 1), DType::bf16, 1, 100, 132, 3);
  EXPECT_EQ(forced.num_splits, 2);
  EXPECT_EQ(forced.split_tiles, 1);
  EXPECT_EQ(forced.workspace_bytes, 2u * 16 * 513 * 4);
}

// The split merge alone (run_mla_merge_splits) against a float64 fold of the same split-major
// partials: split counts from 2 to 129 (several batches of each fold group, and a last batch
// partly past the end), empty splits (lse -inf, o 0) among full ones, and a row with no token at
// all (o = 0, lse = -inf); above 8 splits over a whole row a block and over quarters of it
// (MlaDecodePlan::merge_column_blocks 1 and 4), and a block count of neither refused. o is written
// in the kernels' 16-bit type (BF16 here), rounded once: within 1e-5 + u |o| (u = 2^-8).
TEST(MlaMergeSplitsGpu, FoldsSplitMajorPartialsAsFloat64Does) {
  DB_REQUIRE_GPU();
  using Io = __nv_bfloat16;
  const double u = std::ldexp(1.0, -8);
  std::mt19937 rng(20261127);
  std::uniform_real_distribution<float> value(-1.f, 1.f), logit(-6.f, 6.f);
  const float inf = std::numeric_limits<float>::infinity();
  for (const auto& [splits, column_blocks] :
       std::vector<std::pair<int, int>>{{2, 1}, {5, 1}, {33, 1}, {33, 4}, {64, 1}, {64, 4}, {129, 1}, {129, 4}}) {
    MlaDecodePlan plan;
    plan.batch = 2;
    plan.rows = 3;
    plan.num_splits = splits;
    plan.merge_column_blocks = column_blocks;
    const std::int64_t rows_total = static_cast<std::int64_t>(plan.batch) * plan.rows;
    std::vector<float> part(static_cast<std::size_t>(splits * rows_total * (kMlaKernelRank + 1)));
    float* const o_part = part.data();
    float* const lse_part = part.data() + splits * rows_total * kMlaKernelRank;
    for (int s = 0; s < splits; ++s)
      for (std::int64_t r = 0; r < rows_total; ++r) {
        // Row 4 has no token; rows 1 and 2 have every third split empty.
        const bool empty = r == 4 || (r % 3 != 0 && s % 3 == 1);
        lse_part[s * rows_total + r] = empty ? -inf : logit(rng);
        for (int c = 0; c < kMlaKernelRank; ++c)
          o_part[(s * rows_total + r) * kMlaKernelRank + c] = empty ? 0.f : value(rng);
      }
    DeviceBuffer<float> d_part(part);
    DeviceBuffer<Io> d_o(static_cast<std::size_t>(rows_total * kMlaKernelRank));
    DeviceBuffer<float> d_lse(static_cast<std::size_t>(rows_total));
    d_o.poison();  // NaN in BF16
    d_lse.upload(std::vector<float>(static_cast<std::size_t>(rows_total), std::nanf("")));
    ASSERT_EQ(run_mla_merge_splits(plan, d_part.get(), d_o.get(), d_lse.get(), nullptr), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::vector<Io> o_io = d_o.download();
    const std::vector<float> lse = d_lse.download();
    std::vector<double> o(o_io.size());
    std::transform(o_io.begin(), o_io.end(), o.begin(), [](Io v) { return to_double(v); });
    for (std::int64_t r = 0; r < rows_total; ++r) {
      double m = -inf;
      for (int s = 0; s < splits; ++s) m = std::max(m, static_cast<double>(lse_part[s * rows_total + r]));
      if (m == -inf) {
        EXPECT_EQ(lse[r], -inf) << splits << " splits, " << column_blocks << " blocks a row, row " << r;
        for (int c = 0; c < kMlaKernelRank; ++c) ASSERT_EQ(o[r * kMlaKernelRank + c], 0.0) << splits << " " << r;
        continue;
      }
      double w_sum = 0.0;
      std::vector<double> acc(kMlaKernelRank, 0.0);
      for (int s = 0; s < splits; ++s) {
        const double w = std::exp(static_cast<double>(lse_part[s * rows_total + r]) - m);
        w_sum += w;
        for (int c = 0; c < kMlaKernelRank; ++c) acc[c] += w * o_part[(s * rows_total + r) * kMlaKernelRank + c];
      }
      EXPECT_NEAR(lse[r], m + std::log(w_sum), 1e-5 * (1.0 + std::abs(m)))
          << splits << " splits, " << column_blocks << " blocks a row, row " << r;
      for (int c = 0; c < kMlaKernelRank; ++c)
        ASSERT_NEAR(o[r * kMlaKernelRank + c], acc[c] / w_sum, 1e-5 + u * std::fabs(acc[c] / w_sum))
            << splits << " splits, " << column_blocks << " blocks a row, row " << r << ", col " << c;
    }
  }
  // A many-splits plan whose blocks a row are neither 1 nor 4 is refused before any launch.
  MlaDecodePlan odd;
  odd.batch = 1;
  odd.rows = 1;
  odd.num_splits = 33;
  odd.merge_column_blocks = 2;
  DeviceBuffer<float> d_part(static_cast<std::size_t>(33 * (kMlaKernelRank + 1)));
  DeviceBuffer<Io> d_o(static_cast<std::size_t>(kMlaKernelRank));
  DeviceBuffer<float> d_lse(1);
  EXPECT_EQ(run_mla_merge_splits(odd, d_part.get(), d_o.get(), d_lse.get(), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

}  // namespace
}  // namespace decode_bench
