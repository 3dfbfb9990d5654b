// The device-side paths of a sweep point against their host definitions:
//   - K/V generated in place on the device (contiguous pools, paged pools in any page order) equal
//     the host generator's values token by token, so contiguous and paged twins hold the same data;
//   - the float64 GPU reference equals the CPU reference (o, o_abs, lse) on small and odd shapes
//     (D = 1, 5, 257; GQA groups 1..4; lengths 0, 1, odd, several chunks), through both accessors;
//   - both for FP8 too (E4M3, E5M2): the generator's bytes on the device equal the host's, and the
//     references agree with non-unit per-KV-head scales (fp8_random_head_scales) applied;
//   - the comparison on the device gives the same summary as verify_decode + accumulate.
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "harness/device_buffer.hpp"
#include "harness/gpu_verify.hpp"
#include "kernels/cpu_reference.hpp"
#include "kernels/fp8_quantize.hpp"
#include "kernels/gpu_reference.hpp"
#include "pools/contiguous_pool.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "sweeps/decode_fill.hpp"
#include "sweeps/kv_scales.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

using sweeps::fill_kv_device;
using sweeps::fill_kv_host;
using sweeps::fill_q_device;
using sweeps::fill_q_host;

struct Case {
  DecodeShape shape;
  std::vector<std::int32_t> lengths;
  int page_size;  // 0: contiguous
  PageOrder order = PageOrder::sequential;
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "H_q " << c.shape.heads_q << " H_kv " << c.shape.heads_kv << " D " << c.shape.head_dim << " page "
    << c.page_size << " lengths";
  for (auto l : c.lengths) s << " " << l;
  return s.str();
}

std::vector<Case> cases() {
  return {
      {{1, 1, 1}, {1, 0, 7}, 0},
      {{3, 1, 5}, {300, 1, 0}, 0},
      {{8, 2, 64}, {1000, 17}, 0},
      {{4, 4, 128}, {5000}, 0},
      {{2, 1, 257}, {129, 3}, 0},
      {{3, 1, 5}, {300, 1, 0}, 1, PageOrder::shuffled},
      {{8, 2, 64}, {1000, 17}, 3, PageOrder::shuffled},
      {{4, 4, 128}, {5000}, 16, PageOrder::sequential},
      {{2, 1, 257}, {129, 3}, 7, PageOrder::shuffled},
  };
}

// FP8 adds the shapes the sweeps run: GQA group 4, D = 64 / 128 / 256, length 1 and lengths that
// are no multiple of the page, over shuffled pages.
std::vector<Case> fp8_cases() {
  return {
      {{8, 2, 64}, {1, 1000, 17}, 0},
      {{8, 2, 64}, {1, 1000, 17}, 16, PageOrder::shuffled},
      {{16, 4, 128}, {4099, 1}, 0},
      {{16, 4, 128}, {4099, 1}, 16, PageOrder::shuffled},
      {{4, 1, 256}, {300, 1, 33}, 0},
      {{4, 1, 256}, {300, 1, 33}, 7, PageOrder::shuffled},
  };
}

template <class T>
std::unique_ptr<KVPool> make_pool(const Case& c, DType dtype) {
  const KVLayout layout{c.shape.heads_kv, c.shape.head_dim, dtype};
  std::int64_t max_len = 1, pages = 0;
  for (auto l : c.lengths) {
    max_len = std::max<std::int64_t>(max_len, l);
    if (c.page_size) pages += (l + c.page_size - 1) / c.page_size;
  }
  const int seqs = static_cast<int>(c.lengths.size());
  if (c.page_size)
    return std::make_unique<PagedPool>(
        PagedPoolConfig{.layout = layout, .page_size = c.page_size, .num_pages = static_cast<std::int32_t>(std::max<std::int64_t>(pages, 1)),
                        .max_seq_len = max_len, .max_seqs = seqs, .page_order = c.order, .order_seed = 5},
        make_device_backend());
  return std::make_unique<ContiguousPool>(ContiguousPoolConfig{.layout = layout, .max_seq_len = max_len, .max_seqs = seqs},
                                          make_device_backend());
}

// Runs `body(view)` with the pool's batch view of `handles`.
template <class T, class Body>
void with_view(KVPool& pool, const std::vector<SequenceHandle>& handles, bool paged, Body&& body) {
  if (paged)
    body(static_cast<PagedPool&>(pool).batch<T>(handles));
  else
    body(static_cast<ContiguousPool&>(pool).batch<T>(handles));
}

template <class T>
void check_case(const Case& c, DType dtype) {
  SCOPED_TRACE(describe(c) + " dtype " + std::string(dtype_name(dtype)));
  constexpr std::uint64_t kSeed = 42;
  const int batch = static_cast<int>(c.lengths.size());
  // FP8: the sweep's per-head scales (K amax 0.5 .. 8, V amax 0.25 .. 2), host and device copies.
  const sweeps::KvScales scales = sweeps::KvScales::for_point(dtype, c.shape.heads_kv, kSeed);
  const auto with_scales = [&](auto kv, bool device) { return scales.attach(kv, device); };
  auto pool = make_pool<T>(c, dtype);
  std::vector<SequenceHandle> handles;
  for (auto l : c.lengths) handles.push_back(pool->admit(nullptr, nullptr, l));
  const std::size_t row = static_cast<std::size_t>(c.shape.heads_kv) * c.shape.head_dim;
  const std::size_t heads = static_cast<std::size_t>(batch) * c.shape.heads_q;
  DeviceBuffer<float> q(heads * c.shape.head_dim);
  DeviceBuffer<double> o(heads * c.shape.head_dim), o_abs(heads * c.shape.head_dim), lse(heads);

  with_view<T>(*pool, handles, c.page_size > 0, [&](const auto& view) {
    ASSERT_EQ(fill_kv_device(view.kv, view.seq_lens_device, batch, view.max_len, c.shape.heads_kv, c.shape.head_dim,
                             kSeed, pool->stream()),
              cudaSuccess);
    ASSERT_EQ(fill_q_device(q.get(), kSeed, batch, c.shape.heads_q, c.shape.head_dim, pool->stream()), cudaSuccess);
    pool->backend().synchronize();
    DeviceBuffer<double> workspace(
        std::max<std::size_t>(1, gpu_reference_workspace_doubles(c.shape, batch, view.max_len)));
    ASSERT_EQ(gpu_reference_decode(with_scales(view.kv, true), c.shape, batch, view.max_len, view.seq_lens_device,
                                   q.get(), workspace.get(), {o.get(), o_abs.get(), lse.get()}, nullptr),
              cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  });

  std::vector<float> q_host(heads * c.shape.head_dim);
  fill_q_host(q_host, kSeed, batch, c.shape.heads_q, c.shape.head_dim);
  EXPECT_EQ(q.download(), q_host) << "q: device and host generators differ";
  const auto o_dev = o.download(), abs_dev = o_abs.download(), lse_dev = lse.download();
  const std::size_t hd = static_cast<std::size_t>(c.shape.heads_q) * c.shape.head_dim;
  for (int b = 0; b < batch; ++b) {
    SCOPED_TRACE("sequence " + std::to_string(b));
    std::vector<T> k(row * c.lengths[b]), v(row * c.lengths[b]);
    fill_kv_host<T>(k, false, kSeed, b, c.shape.heads_kv, c.lengths[b], c.shape.head_dim);
    fill_kv_host<T>(v, true, kSeed, b, c.shape.heads_kv, c.lengths[b], c.shape.head_dim);
    // The pool's bytes, token by token (k, v: (H_kv, len, D); read_token gives (H_kv, D)).
    std::vector<T> k_row(row), v_row(row);
    int mismatches = 0;
    for (std::int64_t t = 0; t < c.lengths[b]; ++t) {
      pool->read_token(handles[b], t, k_row.data(), v_row.data());
      for (int h = 0; h < c.shape.heads_kv; ++h)
        for (int i = 0; i < c.shape.head_dim; ++i) {
          const std::size_t at = (static_cast<std::size_t>(h) * c.lengths[b] + t) * c.shape.head_dim + i;
          const std::size_t r = static_cast<std::size_t>(h) * c.shape.head_dim + i;
          mismatches += std::memcmp(&k[at], &k_row[r], sizeof(T)) != 0 || std::memcmp(&v[at], &v_row[r], sizeof(T)) != 0;
          const double x = to_double(k[at]);
          if (dtype_is_fp8(dtype))  // stored values: within the format's maximum, never 0
            EXPECT_TRUE(std::abs(x) <= fp8_limits(dtype).max && x != 0.0) << x;
          else
            EXPECT_TRUE(x >= -1.0 && x < 1.0 && x != 0.0) << x;
        }
    }
    EXPECT_EQ(mismatches, 0) << "device-filled K/V differ from the host generator";

    const auto contiguous =
        ContiguousKV<T>::make(k.data(), v.data(), c.shape.heads_kv, std::max(c.lengths[b], 1), c.shape.head_dim);
    const auto host = with_scales(contiguous, false);
    const auto ref = reference_decode(host, 0, c.lengths[b], std::span<const float>(q_host.data() + b * hd, hd), c.shape);
    for (std::size_t i = 0; i < hd; ++i) {
      EXPECT_NEAR(o_dev[b * hd + i], ref.o[i], 1e-12 * std::max(1.0, ref.o_abs[i])) << "o[" << i << "]";
      EXPECT_NEAR(abs_dev[b * hd + i], ref.o_abs[i], 1e-12 * std::max(1.0, ref.o_abs[i])) << "o_abs[" << i << "]";
    }
    for (int h = 0; h < c.shape.heads_q; ++h) {
      if (std::isinf(ref.lse[h]))
        EXPECT_EQ(lse_dev[b * c.shape.heads_q + h], ref.lse[h]);
      else
        EXPECT_NEAR(lse_dev[b * c.shape.heads_q + h], ref.lse[h], 1e-12 * std::max(1.0, std::abs(ref.lse[h])));
    }
  }
}

TEST(GpuReferenceGpu, DeviceFillAndReferenceMatchTheHostOnes) {
  DB_REQUIRE_GPU();
  for (const Case& c : cases()) {
    check_case<float>(c, DType::fp32);
    check_case<__half>(c, DType::fp16);
    check_case<__nv_bfloat16>(c, DType::bf16);
  }
}

TEST(GpuReferenceGpu, Fp8DeviceFillAndScaledReferenceMatchTheHostOnes) {
  DB_REQUIRE_GPU();
  std::vector<Case> all = cases();
  for (const Case& c : fp8_cases()) all.push_back(c);
  for (const Case& c : all) {
    check_case<__nv_fp8_e4m3>(c, DType::fp8_e4m3);
    check_case<__nv_fp8_e5m2>(c, DType::fp8_e5m2);
  }
}

// Reference outputs (device) and kernel outputs (host copies, perturbed), checked both ways.
TEST(GpuReferenceGpu, DeviceComparisonEqualsTheHostRule) {
  DB_REQUIRE_GPU();
  const int n_heads = 6, d = 33;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> o_ref(n_heads * d), o_abs(n_heads * d), lse_ref(n_heads);
  for (int i = 0; i < n_heads * d; ++i) {
    o_ref[i] = u(rng);
    o_abs[i] = std::abs(o_ref[i]) + 0.5;
  }
  for (int h = 0; h < n_heads; ++h) lse_ref[h] = 10 * u(rng);
  lse_ref[4] = -INFINITY;  // an empty sequence's head
  std::vector<float> o(o_ref.begin(), o_ref.end()), lse(lse_ref.begin(), lse_ref.end());

  const auto check = [&](const char* what, DType dtype) {
    SCOPED_TRACE(what);
    DeviceBuffer<double> d_o(o_ref), d_abs(o_abs), d_lse(lse_ref);
    DeviceBuffer<float> d_out(o), d_out_lse(lse);
    const VerificationResult dev = verify_decode_on_device(d_out.get(), d_out_lse.get(), {d_o.get(), d_abs.get(), d_lse.get()},
                                                           n_heads, d, dtype, nullptr);
    // The host rule over the same arrays, one "sequence" per head.
    VerificationResult host;
    host.passed = true;
    for (int h = 0; h < n_heads; ++h) {
      ReferenceOutput ref{{o_ref.begin() + h * d, o_ref.begin() + (h + 1) * d},
                          {lse_ref[h]},
                          {o_abs.begin() + h * d, o_abs.begin() + (h + 1) * d}};
      accumulate(host, verify_decode(std::span<const float>(o.data() + h * d, d), std::span<const float>(&lse[h], 1), ref,
                                     dtype));
    }
    EXPECT_EQ(dev.passed, host.passed);
    EXPECT_EQ(dev.non_finite, host.non_finite);
    if (host.non_finite == 0) EXPECT_DOUBLE_EQ(dev.max_abs_error, host.max_abs_error);
    else EXPECT_TRUE(std::isnan(dev.max_abs_error));
    EXPECT_DOUBLE_EQ(dev.max_rel_error, host.max_rel_error);
    EXPECT_DOUBLE_EQ(dev.max_lse_error, host.max_lse_error);
    EXPECT_DOUBLE_EQ(dev.tolerance, host.tolerance);
    return dev;
  };
  EXPECT_TRUE(check("exact up to float rounding", DType::fp16).passed);
  o[17] += 0.01f;
  EXPECT_FALSE(check("one o element off by 0.01", DType::fp16).passed);
  lse[2] += 1.0f;
  EXPECT_FALSE(check("and one lse off by 1", DType::fp32).passed);
  EXPECT_EQ(check("FP8: the FP32 bound of harness/verify", DType::fp8_e4m3).tolerance, 1e-5);
  o[40] = NAN;
  lse[4] = 0.0f;  // an empty head must stay -inf
  const auto r = check("a NaN and a finite lse for an empty head", DType::fp16);
  EXPECT_EQ(r.non_finite, 2);
  // A NaN reference fails the check instead of passing with error 0 (fmax / std::max drop NaN).
  o[40] = static_cast<float>(o_ref[40]);
  lse[4] = -INFINITY;
  o_ref[7] = NAN;
  lse_ref[1] = NAN;
  const auto nan_ref = check("a NaN reference element and a NaN reference lse", DType::fp16);
  EXPECT_FALSE(nan_ref.passed);
  EXPECT_EQ(nan_ref.non_finite, 2);
}

}  // namespace
}  // namespace decode_bench
