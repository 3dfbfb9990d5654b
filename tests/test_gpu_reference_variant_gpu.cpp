// The float64 GPU reference's attention variants (kernels/gpu_reference.hpp) against the float64
// CPU variant reference (kernels/cpu_reference_variant.hpp) on random data: q_len 1, 2, 3, 8, 16;
// windows 1, a page minus one, T - 1 and T; sinks on and off; soft-cap 0 and 30 (and 1, which
// bends every logit); GQA groups 1, 4, 7 and MQA; contiguous slabs and shuffled pages; FP16 and
// FP8 (E4M3, E5M2, per-KV-head scales). Both compute in double from the same stored values, so
// they agree to ~1e-12 relative. Also: a window covering the sequence is full attention bit for
// bit, and malformed variants are refused. Suite GpuReferenceGpu (the quick tier), beside the
// plain cases of tests/test_gpu_reference_gpu.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "harness/device_buffer.hpp"
#include "kernels/cpu_reference_variant.hpp"
#include "kernels/gpu_reference.hpp"
#include "tests/case_kv.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

constexpr int kPage = 16;

struct Case {
  DecodeShape shape;
  std::vector<std::int32_t> lengths;  // each >= q_len
  int page_size = 0;                  // 0: contiguous; else shuffled pages
  AttentionVariant variant;
  std::uint64_t seed = 1;
};

std::string describe(DType dtype, const Case& c) {
  std::string lens;
  for (auto l : c.lengths) lens += " " + std::to_string(l);
  return std::string(dtype_name(dtype)) + " Hq " + std::to_string(c.shape.heads_q) + " Hkv " +
         std::to_string(c.shape.heads_kv) + " D " + std::to_string(c.shape.head_dim) + " lengths" + lens + " page " +
         std::to_string(c.page_size) + " [" + c.variant.describe() + "]";
}

struct DeviceOutput {
  cudaError_t status = cudaSuccess;
  std::vector<double> o, o_abs, lse;  // (B, q_len, H_q, D), (B, q_len, H_q, D), (B, q_len, H_q)
};

// The GPU reference of `variant` over the case's K/V (its device copy: paged twin or slab).
template <class Elem>
DeviceOutput gpu_reference(const testing::CaseKv<Elem>& kv_data, const Case& c, const AttentionVariant& variant,
                           const std::vector<float>& q, const std::vector<float>& sinks) {
  const int batch = static_cast<int>(c.lengths.size());
  const std::int64_t max_len = *std::max_element(c.lengths.begin(), c.lengths.end());
  const std::size_t rows = static_cast<std::size_t>(batch) * variant.q_len * c.shape.heads_q;
  DeviceBuffer<float> d_q(q), d_sinks(sinks);
  DeviceBuffer<std::int32_t> d_lens(c.lengths);
  DeviceBuffer<double> o(rows * c.shape.head_dim), o_abs(rows * c.shape.head_dim), lse(rows);
  o.poison();
  o_abs.poison();
  lse.poison();
  DeviceBuffer<double> workspace(
      std::max<std::size_t>(1, gpu_reference_workspace_doubles(c.shape, batch, max_len, variant.q_len)));
  DeviceOutput out;
  kv_data.on_device([&](const auto& kv) {
    out.status = gpu_reference_decode_variant(kv, c.shape, variant, d_sinks.get(), batch, max_len, d_lens.get(),
                                              d_q.get(), workspace.get(), {o.get(), o_abs.get(), lse.get()}, nullptr);
    if (out.status == cudaSuccess) out.status = cudaDeviceSynchronize();
  });
  if (out.status != cudaSuccess) return out;
  out.o = o.download();
  out.o_abs = o_abs.download();
  out.lse = lse.download();
  return out;
}

template <class Elem>
void check_case(DType dtype, const Case& c) {
  SCOPED_TRACE(describe(dtype, c));
  std::mt19937_64 rng(c.seed);
  const DecodeShape& s = c.shape;
  const testing::CaseKv<Elem> kv_data(s, c.lengths, c.page_size, c.seed, false, rng);
  const std::size_t rows_per_seq = static_cast<std::size_t>(c.variant.q_len) * s.heads_q;
  const std::size_t per_seq = rows_per_seq * s.head_dim;
  // q in [-2, 2]: logits up to about 4 in magnitude, so a cap of 30 bends them measurably.
  const std::vector<float> q = testing::random_values<float>(c.lengths.size() * per_seq, rng, -2.f, 2.f);
  const std::vector<float> sinks = sink_logits(s.heads_q, c.seed);
  const DeviceOutput dev = gpu_reference(kv_data, c, c.variant, q, sinks);
  ASSERT_EQ(dev.status, cudaSuccess) << cudaGetErrorString(dev.status);
  int bad = 0;
  for (std::size_t b = 0; b < c.lengths.size(); ++b) {
    const ReferenceOutput ref =
        reference_decode_variant(kv_data.host, static_cast<int>(b), c.lengths[b],
                                 std::span<const float>(q.data() + b * per_seq, per_seq), s, c.variant, sinks);
    for (std::size_t i = 0; i < per_seq && bad < 5; ++i) {
      const double tol = 1e-12 * std::max(1.0, ref.o_abs[i]);
      const bool ok = std::abs(dev.o[b * per_seq + i] - ref.o[i]) <= tol &&
                      std::abs(dev.o_abs[b * per_seq + i] - ref.o_abs[i]) <= tol;
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << "sequence " << b << " element " << i << ": o " << dev.o[b * per_seq + i] << " vs "
                      << ref.o[i] << ", o_abs " << dev.o_abs[b * per_seq + i] << " vs " << ref.o_abs[i];
    }
    for (std::size_t r = 0; r < rows_per_seq && bad < 5; ++r) {
      const double got = dev.lse[b * rows_per_seq + r];
      const bool ok = std::abs(got - ref.lse[r]) <= 1e-12 * std::max(1.0, std::abs(ref.lse[r]));
      if (!ok) ++bad;
      EXPECT_TRUE(ok) << "sequence " << b << " row " << r << ": lse " << got << " vs " << ref.lse[r];
    }
  }
}

template <class Elem>
void check_both_layouts(DType dtype, Case c) {
  for (int page : {0, kPage}) {
    c.page_size = page;
    check_case<Elem>(dtype, c);
  }
}

// GQA groups 1, 4, 7 and MQA at head dim 64; sequences of T = 300, 37 and 16 tokens (16: exactly
// q_len 16, every query token's range differs); windows relative to T.
const DecodeShape kShapes[] = {{4, 4, 64}, {8, 2, 64}, {14, 2, 64}, {8, 1, 64}};
constexpr std::int32_t kT = 300;
const std::int64_t kWindows[] = {0, 1, kPage - 1, kT - 1, kT};

TEST(GpuReferenceGpu, VariantsMatchTheCpuVariantReferenceFp16) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 1;
  for (const DecodeShape& shape : kShapes)
    for (int q_len : {1, 2, 3, 8, 16})
      for (std::int64_t window : kWindows)
        for (bool sinks : {false, true})
          for (double cap : {0.0, 30.0})
            check_both_layouts<__half>(DType::fp16, {shape, {kT, 37, 16}, 0,
                                                     {.q_len = q_len, .window = window, .sinks = sinks,
                                                      .logits_soft_cap = cap},
                                                     seed++});
  // A cap of 1 bends every logit (tanh near saturation), with sinks and a window.
  check_both_layouts<__half>(DType::fp16, {{8, 2, 64}, {kT, 37, 16}, 0,
                                           {.q_len = 3, .window = 40, .sinks = true, .logits_soft_cap = 1}, 7});
}

TEST(GpuReferenceGpu, VariantsMatchTheCpuVariantReferenceFp8) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 100;
  for (const DecodeShape& shape : {kShapes[1], kShapes[2], kShapes[3]})
    for (int q_len : {1, 3, 16})
      for (std::int64_t window : {std::int64_t{0}, std::int64_t{kPage - 1}, std::int64_t{kT - 1}})
        for (auto [sinks, cap] : {std::pair{false, 0.0}, std::pair{true, 30.0}}) {
          const Case c{shape, {kT, 37, 16}, 0,
                       {.q_len = q_len, .window = window, .sinks = sinks, .logits_soft_cap = cap}, seed++};
          check_both_layouts<__nv_fp8_e4m3>(DType::fp8_e4m3, c);
          check_both_layouts<__nv_fp8_e5m2>(DType::fp8_e5m2, c);
        }
}

// A window covering the whole sequence is full attention, bit for bit: every query token sees
// [0, p_i + 1) either way, so the blocks cover the same tokens in the same order (q_len 4).
TEST(GpuReferenceGpu, AWindowCoveringTheSequenceIsFullAttentionExactly) {
  DB_REQUIRE_GPU();
  const Case c{{8, 2, 64}, {kT, 37, 16}, kPage, {}, 3};
  std::mt19937_64 rng(c.seed);
  const testing::CaseKv<__half> kv_data(c.shape, c.lengths, c.page_size, c.seed, false, rng);
  const std::vector<float> sinks = sink_logits(c.shape.heads_q, c.seed);
  const std::vector<float> q = testing::random_values<float>(3 * 4 * 8 * 64, rng, -2.f, 2.f);
  const DeviceOutput full = gpu_reference(kv_data, c, {.q_len = 4}, q, sinks);
  ASSERT_EQ(full.status, cudaSuccess);
  for (std::int64_t window : {std::int64_t{kT}, std::int64_t{kT + 5}}) {
    const DeviceOutput w = gpu_reference(kv_data, c, {.q_len = 4, .window = window}, q, sinks);
    ASSERT_EQ(w.status, cudaSuccess);
    EXPECT_EQ(w.o, full.o) << "window " << window;
    EXPECT_EQ(w.o_abs, full.o_abs) << "window " << window;
    EXPECT_EQ(w.lse, full.lse) << "window " << window;
  }
  // Window T - 4: query token 0 of the longest sequence (position T - 4) loses position 0.
  const DeviceOutput shorter = gpu_reference(kv_data, c, {.q_len = 4, .window = kT - 4}, q, sinks);
  ASSERT_EQ(shorter.status, cudaSuccess);
  EXPECT_NE(shorter.lse[0], full.lse[0]);
}

TEST(GpuReferenceGpu, MalformedVariantsAreRefused) {
  DB_REQUIRE_GPU();
  const DecodeShape s{8, 2, 64};
  DeviceBuffer<float> q(8 * 64), sinks(8);
  DeviceBuffer<std::int32_t> lens(std::vector<std::int32_t>{20});
  DeviceBuffer<double> o(17 * 8 * 64), o_abs(17 * 8 * 64), lse(17 * 8), workspace(1 << 16);
  DeviceBuffer<__half> k(2 * 20 * 64), v(2 * 20 * 64);
  const auto kv = ContiguousKV<__half>::make(k.get(), v.get(), 2, 20, 64);
  const auto run = [&](const AttentionVariant& variant, const float* sink_ptr) {
    return gpu_reference_decode_variant(kv, s, variant, sink_ptr, 1, 20, lens.get(), q.get(), workspace.get(),
                                        {o.get(), o_abs.get(), lse.get()}, nullptr);
  };
  EXPECT_EQ(run({.q_len = 0}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(run({.q_len = kMaxQueryLen + 1}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(run({.window = -1}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(run({.logits_soft_cap = -1}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(run({.logits_soft_cap = NAN}, nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(run({.sinks = true}, nullptr), cudaErrorInvalidValue) << "sinks asked for without their logits";
  EXPECT_EQ(run({.sinks = true}, sinks.get()), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace decode_bench
