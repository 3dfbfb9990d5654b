// FlashInfer's decode kernels through our launchers (backends/flashinfer/) against decode-bench's
// float64 reference on the same stored values, for each K/V type compiled (FP16, BF16, FP8 E4M3
// and E5M2 with random per-KV-head scales, not all equal): single-sequence decode over a contiguous
// slot (FlashInfer's HND layout with a head stride longer than the sequence), with and without the
// workspace that lets it split, and paged batch decode (page 16, pages in a shuffled physical
// order) through its plan and run, also over contiguous slots addressed as pages. Outputs are
// poisoned (NaN) before each launch; FlashInfer's base-2 LSE is turned into the natural log on the
// host first, as the pipeline does (harness/lse_base.hpp). The rule is the pipeline's for the K/V
// type with q and o in io_type_of<KV> (harness/verify.hpp: verification_tolerance(kv, io)): FP8's
// own fp32 bound does not hold for an o rounded to FP16. GPU tests skip with the reason where no
// GPU exists.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "backends/flashinfer/flashinfer_batch_decode.hpp"
#include "backends/flashinfer/flashinfer_single_decode.hpp"
#include "harness/device_buffer.hpp"
#include "harness/lse_base.hpp"
#include "harness/verify.hpp"
#include "kernels/fp8_quantize.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench::flashinfer_launch {
namespace {

using testing::random_values;

template <class T>
std::vector<float> to_float(const std::vector<T>& h) {
  std::vector<float> f(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) f[i] = static_cast<float>(to_double(h[i]));
  return f;
}

// FlashInfer's lse is log2 of the sum of exp2(s * log2 e); decode-bench's is the natural log.
std::vector<float> natural_lse(std::vector<float> lse2) {
  lse_to_natural(lse2, LseBase::two);
  return lse2;
}

// The pipeline's verdict for a flashinfer point: compared under the K/V rule, judged at the rule
// with q and o in io_type_of<KV>.
template <class KV>
VerificationResult judged(VerificationResult r) {
  judge_at(r, verification_tolerance(dtype_of<KV>::value, dtype_of<io_type_of<KV>>::value));
  return r;
}

// Random stored K/V: for FP8 spread over the format's range (the per-head scale sets the values'
// magnitude, as in decode-bench's FP8 caches), else uniform in [-1, 1].
template <class KV>
std::vector<KV> random_kv(std::size_t n, std::mt19937_64& rng) {
  if constexpr (is_fp8_kv<KV>) {
    const float max = fp8_limits(dtype_of<KV>::value).max;
    return random_values<KV>(n, rng, -max, max);
  } else {
    return random_values<KV>(n, rng);
  }
}

// FP8: the sweep's random per-head scales (K amax 0.5 .. 8, V amax 0.25 .. 2 by head), on the host
// for the reference and on the device for the kernel; 16-bit types: none.
template <class KV>
struct TestScales {
  Fp8Scales host;
  DeviceBuffer<float> k, v;
  TestScales(int heads_kv, std::uint64_t seed) {
    if constexpr (is_fp8_kv<KV>) {
      host = fp8_random_head_scales(dtype_of<KV>::value, heads_kv, seed);
      // Per-head scales that differ, so a scale applied to the wrong head (or one for all) fails.
      EXPECT_NE(*std::min_element(host.k.begin(), host.k.end()), *std::max_element(host.k.begin(), host.k.end()));
      EXPECT_NE(*std::min_element(host.v.begin(), host.v.end()), *std::max_element(host.v.begin(), host.v.end()));
      k = DeviceBuffer<float>(host.k);
      v = DeviceBuffer<float>(host.v);
    }
  }
  template <class Accessor>
  Accessor attach_host(Accessor kv) const {
    if (!host.k.empty()) {
      kv.k_scale = host.k.data();
      kv.v_scale = host.v.data();
    }
    return kv;
  }
  const float* device_k() const { return host.k.empty() ? nullptr : k.get(); }
  const float* device_v() const { return host.v.empty() ? nullptr : v.get(); }
};

template <class KV>
std::string describe(const DecodeShape& s, const std::vector<std::int32_t>& lengths, const char* what) {
  std::ostringstream m;
  m << what << " " << dtype_name(dtype_of<KV>::value) << " Hq=" << s.heads_q << " Hkv=" << s.heads_kv << " T=";
  for (auto t : lengths) m << t << ",";
  return m.str();
}

// One sequence of kv_len tokens in a slot of max_len (head stride max_len * D).
template <class KV>
void check_single_decode(const DecodeShape& s, std::int64_t kv_len, bool with_workspace, std::uint64_t seed) {
  using IO = io_type_of<KV>;
  std::mt19937_64 rng(seed);
  const std::int64_t max_len = kv_len + 13;
  const std::size_t slab = static_cast<std::size_t>(s.heads_kv) * max_len * s.head_dim;
  const auto k = random_kv<KV>(slab, rng), v = random_kv<KV>(slab, rng);
  const auto q = random_values<IO>(static_cast<std::size_t>(s.heads_q) * s.head_dim, rng, -2.f, 2.f);
  const TestScales<KV> scales(s.heads_kv, seed);
  DeviceBuffer<KV> d_k(k), d_v(v);
  DeviceBuffer<IO> d_q(q), d_o(q.size());
  DeviceBuffer<float> d_lse(s.heads_q);

  SingleDecodeArgs<KV> a;
  a.q = d_q.get();
  a.k = d_k.get();
  a.v = d_v.get();
  a.o = d_o.get();
  a.lse = d_lse.get();
  a.k_scale = scales.device_k();
  a.v_scale = scales.device_v();
  a.heads_q = s.heads_q;
  a.heads_kv = s.heads_kv;
  a.head_dim = s.head_dim;
  a.kv_len = kv_len;
  a.kv_head_stride = max_len * s.head_dim;
  a.kv_token_stride = s.head_dim;
  a.sm_scale = static_cast<float>(s.softmax_scale());
  DeviceBuffer<unsigned char> workspace(with_workspace ? single_decode_workspace_bytes(a) : 0);
  const auto what =
      describe<KV>(s, {static_cast<std::int32_t>(kv_len)}, with_workspace ? "single split" : "single");

  std::vector<IO> first;
  for (int launch = 0; launch < 2; ++launch) {
    d_o.poison();
    d_lse.poison();
    std::string error;
    ASSERT_EQ(single_decode(a, workspace.get(), workspace.bytes(), nullptr, &error), cudaSuccess)
        << what << ": " << error;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
    const auto o = d_o.download();
    if (launch == 0) {
      first = o;
      continue;
    }
    // The same launch twice gives the same bits (no uninitialised workspace read).
    ASSERT_EQ(std::memcmp(first.data(), o.data(), o.size() * sizeof(IO)), 0) << what;
    const auto kv = scales.attach_host(ContiguousKV<KV>::make(k.data(), v.data(), s.heads_kv, max_len, s.head_dim));
    const auto ref = reference_decode(kv, 0, kv_len, to_float(q), s);
    const auto r = judged<KV>(verify_decode(to_float(o), natural_lse(d_lse.download()), ref, dtype_of<KV>::value));
    EXPECT_TRUE(r.passed) << what << ": " << r.summary();
  }
}

template <class KV>
void single_decode_cases(std::uint64_t seed) {
  for (int group : {1, 4, 8})
    for (std::int64_t len : {1, 100, 256, 257, 3000})
      for (bool with_workspace : {false, true})
        check_single_decode<KV>({8 * group, 8, 128}, len, with_workspace, ++seed);
}

TEST(FlashInferDecodeGpu, SingleDecodeMatchesTheReference) {
  DB_REQUIRE_GPU();
  single_decode_cases<__half>(7100);
  single_decode_cases<__nv_bfloat16>(7150);
  single_decode_cases<__nv_fp8_e4m3>(7170);
  single_decode_cases<__nv_fp8_e5m2>(7190);
}

// A batch's K/V, q and page tables, in the layout its launch reads, with the accessor the reference
// reads the same values through; what the paged and the contiguous-as-pages tests share.
template <class KV, class Accessor>
struct BatchCase {
  using IO = io_type_of<KV>;
  DecodeShape s;
  std::vector<std::int32_t> lengths;
  std::vector<KV> k, v;  // as the launch reads them
  std::vector<IO> q;
  std::vector<std::int32_t> indices, indptr, last_page_len;
  Accessor host_kv;  // over k, v (and the host scales) for the reference
};

// Plans and runs FlashInfer's batch decode over the case (a's pointers and strides aside from the
// case's own are set by the caller), checks every sequence against the reference with the rule of
// o's type. expect_split: whether FlashInfer's plan must split sequences (and so run its merge).
template <class KV, class Accessor>
void run_and_check_batch(const BatchCase<KV, Accessor>& c, PagedDecodeArgs<KV> a, const TestScales<KV>& scales,
                         std::optional<bool> expect_split, const std::string& what) {
  using IO = io_type_of<KV>;
  const int batch = static_cast<int>(c.lengths.size());
  DeviceBuffer<KV> d_k(c.k), d_v(c.v);
  DeviceBuffer<IO> d_q(c.q), d_o(c.q.size());
  DeviceBuffer<std::int32_t> d_indices(c.indices), d_indptr(c.indptr), d_last(c.last_page_len);
  DeviceBuffer<float> d_lse(static_cast<std::size_t>(batch) * c.s.heads_q);
  a.q = d_q.get();
  a.k_pages = d_k.get();
  a.v_pages = d_v.get();
  a.page_indices = d_indices.get();
  a.indptr = d_indptr.get();
  a.last_page_len = d_last.get();
  a.o = d_o.get();
  a.lse = d_lse.get();
  a.k_scale = scales.device_k();
  a.v_scale = scales.device_v();
  a.batch = batch;
  a.heads_q = c.s.heads_q;
  a.heads_kv = c.s.heads_kv;
  a.head_dim = c.s.head_dim;
  a.sm_scale = static_cast<float>(c.s.softmax_scale());

  std::string error;
  std::size_t float_bytes = 0, int_bytes = 0;
  ASSERT_EQ(paged_decode_workspace_bytes(a, c.indptr.data(), &float_bytes, &int_bytes, &error), cudaSuccess)
      << what << ": " << error;
  DeviceBuffer<unsigned char> float_ws(float_bytes), int_ws(int_bytes);
  std::vector<unsigned char> int_host(int_bytes);
  float_ws.poison();  // partials must be written before the merge reads them
  PagedDecodePlan plan;
  ASSERT_EQ(paged_decode_plan(a, c.indptr.data(), float_ws.get(), float_bytes, int_ws.get(), int_host.data(),
                              int_bytes, nullptr, &plan, &error),
            cudaSuccess)
      << what << ": " << error;
  EXPECT_GE(plan.padded_batch_size, batch) << what;  // a work item per sequence at least
  if (expect_split) {
    EXPECT_EQ(plan.split_kv, *expect_split) << what;
  }

  d_o.poison();
  d_lse.poison();
  ASSERT_EQ(paged_decode_run(a, plan, float_ws.get(), int_ws.get(), nullptr, &error), cudaSuccess)
      << what << ": " << error;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
  const auto o = to_float(d_o.download());
  const auto lse = natural_lse(d_lse.download());  // as the pipeline does after a flashinfer point's checked launch
  VerificationResult total;
  total.passed = true;
  const std::size_t per_seq = static_cast<std::size_t>(c.s.heads_q) * c.s.head_dim;
  for (int b = 0; b < batch; ++b) {
    std::vector<float> q_b(per_seq);
    for (std::size_t i = 0; i < per_seq; ++i) q_b[i] = static_cast<float>(to_double(c.q[b * per_seq + i]));
    const auto ref = reference_decode(c.host_kv, b, c.lengths[b], q_b, c.s);
    accumulate(total, verify_decode(std::span(o).subspan(b * per_seq, per_seq),
                                    std::span(lse).subspan(static_cast<std::size_t>(b) * c.s.heads_q, c.s.heads_q),
                                    ref, dtype_of<KV>::value));
  }
  total = judged<KV>(total);
  EXPECT_TRUE(total.passed) << what << " split_kv=" << plan.split_kv << ": " << total.summary();
}

constexpr int kPage = 16;

// The batch scattered over shuffled pages of 16 tokens (packed pages).
template <class KV>
void check_paged_decode(const DecodeShape& s, const std::vector<std::int32_t>& lengths, std::optional<bool> expect_split,
                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int batch = static_cast<int>(lengths.size());
  const std::int64_t max_len = *std::max_element(lengths.begin(), lengths.end());
  const std::size_t slab = static_cast<std::size_t>(batch) * s.heads_kv * max_len * s.head_dim;
  const auto k = random_kv<KV>(slab, rng), v = random_kv<KV>(slab, rng);
  const auto contiguous = ContiguousKV<KV>::make(k.data(), v.data(), s.heads_kv, max_len, s.head_dim);
  auto paged = testing::scatter_batch_to_pages(contiguous, lengths, s, kPage, rng);
  const TestScales<KV> scales(s.heads_kv, seed);
  BatchCase<KV, PagedKV<KV>> c;
  c.s = s;
  c.lengths = lengths;
  c.q = random_values<io_type_of<KV>>(static_cast<std::size_t>(batch) * s.heads_q * s.head_dim, rng, -2.f, 2.f);
  c.k = std::move(paged.k);
  c.v = std::move(paged.v);
  c.indices = paged.page_indices;
  c.indptr = paged.indptr;
  for (auto t : lengths) c.last_page_len.push_back((t - 1) % kPage + 1);
  c.host_kv = scales.attach_host(PagedKV<KV>{c.k.data(), c.v.data(), c.indices.data(), c.indptr.data(), kPage,
                                             s.heads_kv, s.head_dim});
  PagedDecodeArgs<KV> a;
  a.page_size = kPage;
  run_and_check_batch(c, a, scales, expect_split, describe<KV>(s, lengths, "paged"));
}

// decode-bench's contiguous slots (B, H_kv, max_len, D) addressed by page tables: pages of 16 tokens
// within each slot (page_stride 16 * D, head_stride max_len * D), so FlashInfer's plan can split
// long sequences as it does over a paged cache.
template <class KV>
void check_contiguous_as_pages(const DecodeShape& s, const std::vector<std::int32_t>& lengths, std::int64_t max_len,
                               std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int batch = static_cast<int>(lengths.size());
  const std::size_t slab = static_cast<std::size_t>(batch) * s.heads_kv * max_len * s.head_dim;
  const TestScales<KV> scales(s.heads_kv, seed);
  BatchCase<KV, ContiguousKV<KV>> c;
  c.s = s;
  c.lengths = lengths;
  c.k = random_kv<KV>(slab, rng);
  c.v = random_kv<KV>(slab, rng);
  c.q = random_values<io_type_of<KV>>(static_cast<std::size_t>(batch) * s.heads_q * s.head_dim, rng, -2.f, 2.f);
  c.indptr = {0};
  for (int b = 0; b < batch; ++b) {
    const std::int32_t pages = (lengths[b] + kPage - 1) / kPage;
    for (std::int32_t p = 0; p < pages; ++p)
      c.indices.push_back(static_cast<std::int32_t>(b * s.heads_kv * max_len / kPage + p));
    c.indptr.push_back(c.indptr.back() + pages);
    c.last_page_len.push_back((lengths[b] - 1) % kPage + 1);
  }
  c.host_kv = scales.attach_host(ContiguousKV<KV>::make(c.k.data(), c.v.data(), s.heads_kv, max_len, s.head_dim));
  PagedDecodeArgs<KV> a;
  a.page_size = kPage;
  a.page_stride = std::int64_t{kPage} * s.head_dim;
  a.head_stride = max_len * s.head_dim;
  a.token_stride = s.head_dim;
  run_and_check_batch(c, a, scales, std::nullopt, describe<KV>(s, lengths, "contiguous as pages"));
}

template <class KV>
void contiguous_as_pages_cases(std::uint64_t seed) {
  // max_len 4000: a slot is 250 pages per head; the longest sequence fills its slot.
  for (int group : {1, 4}) check_contiguous_as_pages<KV>({8 * group, 8, 128}, {1, 16, 17, 999, 4000}, 4000, ++seed);
}

TEST(FlashInferDecodeGpu, ContiguousSlotsAsPagesMatchTheReference) {
  DB_REQUIRE_GPU();
  contiguous_as_pages_cases<__half>(7300);
  contiguous_as_pages_cases<__nv_bfloat16>(7310);
  contiguous_as_pages_cases<__nv_fp8_e4m3>(7320);
  contiguous_as_pages_cases<__nv_fp8_e5m2>(7330);
}

template <class KV>
void paged_cases(std::uint64_t seed) {
  // A short ragged batch (40 blocks, far from a wave: FlashInfer's plan splits the long sequences)
  // and a wide one (whether it splits is the device's occupancy).
  for (int group : {1, 4, 8}) check_paged_decode<KV>({8 * group, 8, 128}, {1, 16, 17, 300, 4000}, true, ++seed);
  std::vector<std::int32_t> wide(160);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<std::int32_t>(1 + (i * 37) % 700);
  check_paged_decode<KV>({32, 8, 128}, wide, std::nullopt, ++seed);
}

TEST(FlashInferDecodeGpu, PagedBatchDecodeMatchesTheReference) {
  DB_REQUIRE_GPU();
  paged_cases<__half>(7200);
  paged_cases<__nv_bfloat16>(7210);
  paged_cases<__nv_fp8_e4m3>(7220);
  paged_cases<__nv_fp8_e5m2>(7230);
}

}  // namespace
}  // namespace decode_bench::flashinfer_launch
