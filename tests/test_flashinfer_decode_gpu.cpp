// FlashInfer's decode kernels through our launchers (backends/flashinfer/) against decode-bench's
// float64 reference on the same stored FP16 values, with the FP16 tolerance rule (harness/verify.hpp):
// single-sequence decode over a contiguous slot (FlashInfer's HND layout with a head stride longer
// than the sequence), with and without the workspace that lets it split, and paged batch decode
// (page 16, pages in a shuffled physical order) through its plan and run, also over contiguous
// slots addressed as pages. Outputs are poisoned
// (NaN) before each launch; FlashInfer's base-2 LSE is turned into the natural log on the host
// first, as the pipeline does (harness/lse_base.hpp). GPU tests
// skip with the reason where no GPU exists.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "backends/flashinfer/flashinfer_batch_decode.hpp"
#include "backends/flashinfer/flashinfer_single_decode.hpp"
#include "harness/lse_base.hpp"
#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

using testing::random_values;

std::vector<float> to_float(const std::vector<__half>& h) {
  std::vector<float> f(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) f[i] = __half2float(h[i]);
  return f;
}

// FlashInfer's lse is log2 of the sum of exp2(s * log2 e); decode-bench's is the natural log.
std::vector<float> natural_lse(std::vector<float> lse2) {
  lse_to_natural(lse2, LseBase::two);
  return lse2;
}

std::string describe(const DecodeShape& s, const std::vector<std::int32_t>& lengths, const char* what) {
  std::ostringstream m;
  m << what << " Hq=" << s.heads_q << " Hkv=" << s.heads_kv << " T=";
  for (auto t : lengths) m << t << ",";
  return m.str();
}

// One sequence of kv_len tokens in a slot of max_len (head stride max_len * D).
void check_single_decode(const DecodeShape& s, std::int64_t kv_len, bool with_workspace, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::int64_t max_len = kv_len + 13;
  const std::size_t slab = static_cast<std::size_t>(s.heads_kv) * max_len * s.head_dim;
  const auto k = random_values<__half>(slab, rng), v = random_values<__half>(slab, rng);
  const auto q = random_values<__half>(static_cast<std::size_t>(s.heads_q) * s.head_dim, rng, -2.f, 2.f);
  DeviceBuffer<__half> d_k(k), d_v(v), d_q(q), d_o(q.size());
  DeviceBuffer<float> d_lse(s.heads_q);

  SingleDecodeArgs a;
  a.q = d_q.get();
  a.k = d_k.get();
  a.v = d_v.get();
  a.o = d_o.get();
  a.lse = d_lse.get();
  a.heads_q = s.heads_q;
  a.heads_kv = s.heads_kv;
  a.head_dim = s.head_dim;
  a.kv_len = kv_len;
  a.kv_head_stride = max_len * s.head_dim;
  a.kv_token_stride = s.head_dim;
  a.sm_scale = static_cast<float>(s.softmax_scale());
  DeviceBuffer<unsigned char> workspace(with_workspace ? single_decode_workspace_bytes(a) : 0);
  const auto what = describe(s, {static_cast<std::int32_t>(kv_len)}, with_workspace ? "single split" : "single");

  std::vector<__half> first;
  for (int launch = 0; launch < 2; ++launch) {
    d_o.poison();
    d_lse.poison();
    std::string error;
    ASSERT_EQ(single_decode_fp16(a, workspace.get(), workspace.bytes(), nullptr, &error), cudaSuccess)
        << what << ": " << error;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
    const auto o = d_o.download();
    if (launch == 0) {
      first = o;
      continue;
    }
    // The same launch twice gives the same bits (no uninitialised workspace read).
    ASSERT_EQ(std::memcmp(first.data(), o.data(), o.size() * sizeof(__half)), 0) << what;
    const auto kv = ContiguousKV<__half>::make(k.data(), v.data(), s.heads_kv, max_len, s.head_dim);
    const auto ref = reference_decode(kv, 0, kv_len, to_float(q), s);
    const auto r = verify_decode(to_float(o), natural_lse(d_lse.download()), ref, DType::fp16);
    EXPECT_TRUE(r.passed) << what << ": " << r.summary();
  }
}

TEST(FlashInferDecodeGpu, SingleDecodeMatchesTheReference) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 7100;
  for (int group : {1, 4, 8})
    for (std::int64_t len : {1, 100, 256, 257, 3000})
      for (bool with_workspace : {false, true}) check_single_decode({8 * group, 8, 128}, len, with_workspace, ++seed);
}

// expect_split: whether FlashInfer's plan must split sequences (and so run its merge kernel).
void check_paged_decode(const DecodeShape& s, const std::vector<std::int32_t>& lengths, std::optional<bool> expect_split,
                        std::uint64_t seed) {
  constexpr int kPage = 16;
  std::mt19937_64 rng(seed);
  const int batch = static_cast<int>(lengths.size());
  const std::int64_t max_len = *std::max_element(lengths.begin(), lengths.end());
  const std::size_t slab = static_cast<std::size_t>(batch) * s.heads_kv * max_len * s.head_dim;
  const auto k = random_values<__half>(slab, rng), v = random_values<__half>(slab, rng);
  const auto contiguous = ContiguousKV<__half>::make(k.data(), v.data(), s.heads_kv, max_len, s.head_dim);
  const auto paged = testing::scatter_batch_to_pages(contiguous, lengths, s, kPage, rng);
  std::vector<std::int32_t> last_page_len;
  for (auto t : lengths) last_page_len.push_back((t - 1) % kPage + 1);
  const auto q = random_values<__half>(static_cast<std::size_t>(batch) * s.heads_q * s.head_dim, rng, -2.f, 2.f);

  DeviceBuffer<__half> d_k(paged.k), d_v(paged.v), d_q(q), d_o(q.size());
  DeviceBuffer<std::int32_t> d_indices(paged.page_indices), d_indptr(paged.indptr), d_last(last_page_len);
  DeviceBuffer<float> d_lse(static_cast<std::size_t>(batch) * s.heads_q);
  PagedDecodeArgs a;
  a.q = d_q.get();
  a.k_pages = d_k.get();
  a.v_pages = d_v.get();
  a.page_indices = d_indices.get();
  a.indptr = d_indptr.get();
  a.last_page_len = d_last.get();
  a.o = d_o.get();
  a.lse = d_lse.get();
  a.batch = batch;
  a.heads_q = s.heads_q;
  a.heads_kv = s.heads_kv;
  a.head_dim = s.head_dim;
  a.page_size = kPage;
  a.sm_scale = static_cast<float>(s.softmax_scale());
  const auto what = describe(s, lengths, "paged");

  std::string error;
  std::size_t float_bytes = 0, int_bytes = 0;
  ASSERT_EQ(paged_decode_workspace_bytes_fp16(a, paged.indptr.data(), &float_bytes, &int_bytes, &error), cudaSuccess)
      << what << ": " << error;
  DeviceBuffer<unsigned char> float_ws(float_bytes), int_ws(int_bytes);
  std::vector<unsigned char> int_host(int_bytes);
  float_ws.poison();  // partials must be written before the merge reads them
  PagedDecodePlan plan;
  ASSERT_EQ(paged_decode_plan_fp16(a, paged.indptr.data(), float_ws.get(), float_bytes, int_ws.get(), int_host.data(),
                                   int_bytes, nullptr, &plan, &error),
            cudaSuccess)
      << what << ": " << error;
  EXPECT_GE(plan.padded_batch_size, batch) << what;  // a work item per sequence at least
  if (expect_split) {
    EXPECT_EQ(plan.split_kv, *expect_split) << what;
  }

  d_o.poison();
  d_lse.poison();
  ASSERT_EQ(paged_decode_run_fp16(a, plan, float_ws.get(), int_ws.get(), nullptr, &error), cudaSuccess)
      << what << ": " << error;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
  const auto o = to_float(d_o.download());
  auto lse = d_lse.download();
  lse_to_natural(lse, LseBase::two);  // as the pipeline does after a flashinfer point's checked launch
  const auto host_paged = paged.view(s);
  VerificationResult total;
  total.passed = true;
  const std::size_t per_seq = static_cast<std::size_t>(s.heads_q) * s.head_dim;
  for (int b = 0; b < batch; ++b) {
    std::vector<float> q_b(per_seq);
    for (std::size_t i = 0; i < per_seq; ++i) q_b[i] = __half2float(q[b * per_seq + i]);
    const auto ref = reference_decode(host_paged, b, lengths[b], q_b, s);
    accumulate(total, verify_decode(std::span(o).subspan(b * per_seq, per_seq),
                                    std::span(lse).subspan(static_cast<std::size_t>(b) * s.heads_q, s.heads_q), ref,
                                    DType::fp16));
  }
  EXPECT_TRUE(total.passed) << what << " split_kv=" << plan.split_kv << ": " << total.summary();
}

// decode-bench's contiguous slots (B, H_kv, max_len, D) addressed by page tables: pages of 16 tokens
// within each slot (page_stride 16 * D, head_stride max_len * D), so FlashInfer's plan can split
// long sequences as it does over a paged cache.
void check_contiguous_as_pages(const DecodeShape& s, const std::vector<std::int32_t>& lengths, std::int64_t max_len,
                               std::uint64_t seed) {
  constexpr int kPage = 16;
  std::mt19937_64 rng(seed);
  const int batch = static_cast<int>(lengths.size());
  const std::size_t slab = static_cast<std::size_t>(batch) * s.heads_kv * max_len * s.head_dim;
  const auto k = random_values<__half>(slab, rng), v = random_values<__half>(slab, rng);
  const auto q = random_values<__half>(static_cast<std::size_t>(batch) * s.heads_q * s.head_dim, rng, -2.f, 2.f);
  std::vector<std::int32_t> indptr{0}, indices, last_page_len;
  for (int b = 0; b < batch; ++b) {
    const std::int32_t pages = (lengths[b] + kPage - 1) / kPage;
    for (std::int32_t p = 0; p < pages; ++p)
      indices.push_back(static_cast<std::int32_t>(b * s.heads_kv * max_len / kPage + p));
    indptr.push_back(indptr.back() + pages);
    last_page_len.push_back((lengths[b] - 1) % kPage + 1);
  }
  DeviceBuffer<__half> d_k(k), d_v(v), d_q(q), d_o(q.size());
  DeviceBuffer<std::int32_t> d_indices(indices), d_indptr(indptr), d_last(last_page_len);
  DeviceBuffer<float> d_lse(static_cast<std::size_t>(batch) * s.heads_q);
  PagedDecodeArgs a;
  a.q = d_q.get();
  a.k_pages = d_k.get();
  a.v_pages = d_v.get();
  a.page_indices = d_indices.get();
  a.indptr = d_indptr.get();
  a.last_page_len = d_last.get();
  a.o = d_o.get();
  a.lse = d_lse.get();
  a.batch = batch;
  a.heads_q = s.heads_q;
  a.heads_kv = s.heads_kv;
  a.head_dim = s.head_dim;
  a.page_size = kPage;
  a.page_stride = std::int64_t{kPage} * s.head_dim;
  a.head_stride = max_len * s.head_dim;
  a.token_stride = s.head_dim;
  a.sm_scale = static_cast<float>(s.softmax_scale());
  const auto what = describe(s, lengths, "contiguous as pages");

  std::string error;
  std::size_t float_bytes = 0, int_bytes = 0;
  ASSERT_EQ(paged_decode_workspace_bytes_fp16(a, indptr.data(), &float_bytes, &int_bytes, &error), cudaSuccess)
      << what << ": " << error;
  DeviceBuffer<unsigned char> float_ws(float_bytes), int_ws(int_bytes);
  std::vector<unsigned char> int_host(int_bytes);
  float_ws.poison();
  PagedDecodePlan plan;
  ASSERT_EQ(paged_decode_plan_fp16(a, indptr.data(), float_ws.get(), float_bytes, int_ws.get(), int_host.data(),
                                   int_bytes, nullptr, &plan, &error),
            cudaSuccess)
      << what << ": " << error;
  d_o.poison();
  d_lse.poison();
  ASSERT_EQ(paged_decode_run_fp16(a, plan, float_ws.get(), int_ws.get(), nullptr, &error), cudaSuccess)
      << what << ": " << error;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
  const auto o = to_float(d_o.download());
  auto lse = d_lse.download();
  lse_to_natural(lse, LseBase::two);  // as the pipeline does after a flashinfer point's checked launch
  const auto kv = ContiguousKV<__half>::make(k.data(), v.data(), s.heads_kv, max_len, s.head_dim);
  const std::size_t per_seq = static_cast<std::size_t>(s.heads_q) * s.head_dim;
  VerificationResult total;
  total.passed = true;
  for (int b = 0; b < batch; ++b) {
    std::vector<float> q_b(per_seq);
    for (std::size_t i = 0; i < per_seq; ++i) q_b[i] = __half2float(q[b * per_seq + i]);
    const auto ref = reference_decode(kv, b, lengths[b], q_b, s);
    accumulate(total, verify_decode(std::span(o).subspan(b * per_seq, per_seq),
                                    std::span(lse).subspan(static_cast<std::size_t>(b) * s.heads_q, s.heads_q), ref,
                                    DType::fp16));
  }
  EXPECT_TRUE(total.passed) << what << " split_kv=" << plan.split_kv << ": " << total.summary();
}

TEST(FlashInferDecodeGpu, ContiguousSlotsAsPagesMatchTheReference) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 7300;
  // max_len 4000: a slot is 250 pages per head; the longest sequence fills its slot.
  for (int group : {1, 4}) check_contiguous_as_pages({8 * group, 8, 128}, {1, 16, 17, 999, 4000}, 4000, ++seed);
}

TEST(FlashInferDecodeGpu, PagedBatchDecodeMatchesTheReference) {
  DB_REQUIRE_GPU();
  std::uint64_t seed = 7200;
  // A short ragged batch (40 blocks, far from a wave: FlashInfer's plan splits the long sequences)
  // and a wide one (whether it splits is the device's occupancy).
  for (int group : {1, 4, 8}) check_paged_decode({8 * group, 8, 128}, {1, 16, 17, 300, 4000}, true, ++seed);
  std::vector<std::int32_t> wide(160);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<std::int32_t>(1 + (i * 37) % 700);
  check_paged_decode({32, 8, 128}, wide, std::nullopt, ++seed);
}

}  // namespace
}  // namespace decode_bench::flashinfer_launch
