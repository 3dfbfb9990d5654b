// Device-backend pools on a GPU: write through the device pool, copy the arenas and the device
// block tables / batch CSR back, decode them with the CPU reference through the same accessor
// types, and compare with the reference on the original contiguous data. Skipped without a GPU.
#include <cstring>

#include <cuda_runtime.h>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/verify.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/cpu_reference.hpp"
#include "pools/capacity.hpp"
#include "tests/gpu_test_support.hpp"
#include "tests/pool_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

using testing::append_random_rows;
using testing::expect_same_reference;
using testing::TokenRows;

const DecodeShape kShape{8, 2, 64};
const KVLayout kLayout{2, 64, DType::fp32};

template <class T>
std::vector<T> to_host(const T* device_ptr, std::size_t count) {
  std::vector<T> out(count);
  if (count) DB_CUDA_CHECK(cudaMemcpy(out.data(), device_ptr, count * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

ReferenceOutput expected(const TokenRows& rows, std::span<const float> q) {
  return testing::reference_of(rows, q, kLayout, kShape);
}

TEST(PoolGpu, PagedRoundTripThroughDeviceTables) {
  DB_REQUIRE_GPU();
  // Churned: scattered physical pages.
  const PagedPoolConfig c{.layout = kLayout, .page_size = 16, .num_pages = 256, .max_seq_len = 1024, .max_seqs = 16,
                          .page_order = PageOrder::churned};
  PagedPool pool(c, make_device_backend());
  std::mt19937_64 rng(21);
  const auto q = testing::random_values<float>(kShape.heads_q * kShape.head_dim, rng);
  std::vector<TokenRows> rows = {testing::random_tokens(kLayout, 300, rng), testing::random_tokens(kLayout, 17, rng),
                                 testing::random_tokens(kLayout, 512, rng)};
  std::vector<SequenceHandle> hs;
  for (const auto& r : rows) hs.push_back(testing::admit_rows(pool, r));
  append_random_rows(pool, hs[1], rows[1], 40, rng);
  hs.push_back(pool.fork(hs[0]));  // shares 18 full pages and the partial tail
  rows.push_back(rows[0]);
  append_random_rows(pool, hs[3], rows[3], 25, rng);  // copy-on-write of the tail, then new pages
  append_random_rows(pool, hs[0], rows[0], 4, rng);

  // Token-by-token read back from the device.
  for (std::size_t i = 0; i < hs.size(); ++i) ASSERT_TRUE(testing::reads_back(pool, hs[i], rows[i]));

  const auto batch = pool.batch<float>(hs);
  DB_CUDA_CHECK(cudaStreamSynchronize(pool.stream()));
  const auto indptr = to_host(batch.kv.indptr, hs.size() + 1);
  const auto pages = to_host(batch.kv.page_indices, static_cast<std::size_t>(indptr.back()));
  const auto lens = to_host(batch.seq_lens_device, hs.size());
  const std::size_t arena_elems = c.num_pages * c.page_bytes() / sizeof(float);
  const auto k = to_host(batch.kv.k, arena_elems), v = to_host(batch.kv.v, arena_elems);
  PagedKV<float> host_kv = batch.kv;
  host_kv.k = k.data();
  host_kv.v = v.data();
  host_kv.page_indices = pages.data();
  host_kv.indptr = indptr.data();
  for (std::size_t i = 0; i < hs.size(); ++i) {
    SCOPED_TRACE("sequence " + std::to_string(i));
    ASSERT_EQ(lens[i], rows[i].size());
    const auto table = pool.block_table(hs[i]);
    ASSERT_TRUE(std::equal(table.begin(), table.end(), pages.begin() + indptr[i]));
    expect_same_reference(reference_decode(host_kv, static_cast<int>(i), lens[i], q, kShape), expected(rows[i], q));
  }
  // The one-sequence accessor's device row and {0, pages} indptr.
  const auto one = pool.accessor<float>(hs[3]);
  const auto one_indptr = to_host(one.indptr, 2);
  const auto one_pages = to_host(one.page_indices, static_cast<std::size_t>(one_indptr[1]));
  EXPECT_EQ(one_indptr[0], 0);
  const auto table3 = pool.block_table(hs[3]);
  EXPECT_TRUE(std::equal(table3.begin(), table3.end(), one_pages.begin(), one_pages.end()));
}

// The sweep's failing point in small: one long sequence over page-1 pages handed out in shuffled
// order, so every token row sits at a random place in a 2^18-page arena. The pool's device
// table, its arena contents and a flash-decode through its batch view must all agree with the
// source rows.
TEST(PoolGpu, LongSequenceOnShuffledSingleTokenPagesDecodes) {
  DB_REQUIRE_GPU();
  constexpr std::int64_t kLen = 1 << 18;
  const DecodeShape shape{1, 1, 128};
  const KVLayout layout{1, 128, DType::fp16};
  for (PageOrder order : {PageOrder::sequential, PageOrder::shuffled, PageOrder::churned}) {
    SCOPED_TRACE(page_order_name(order));
    const PagedPoolConfig c{.layout = layout, .page_size = 1, .num_pages = kLen, .max_seq_len = kLen, .max_seqs = 1,
                            .page_order = order};
    PagedPool pool(c, make_device_backend());
    std::mt19937_64 rng(23);
    const auto k = testing::random_values<__half>(kLen * 128, rng), v = testing::random_values<__half>(kLen * 128, rng);
    const auto q = testing::random_values<float>(128, rng);
    const SequenceHandle h = pool.admit(std::span<const __half>(k), std::span<const __half>(v), kLen);
    const auto batch = pool.batch<__half>(std::vector<SequenceHandle>{h});
    DB_CUDA_CHECK(cudaStreamSynchronize(pool.stream()));

    const auto indptr = to_host(batch.kv.indptr, 2);
    ASSERT_EQ(indptr[1], kLen);
    const auto pages = to_host(batch.kv.page_indices, kLen);
    const auto table = pool.block_table(h);
    ASSERT_TRUE(std::equal(table.begin(), table.end(), pages.begin())) << "device table differs from the host mirror";
    const auto arena_k = to_host(batch.kv.k, kLen * 128), arena_v = to_host(batch.kv.v, kLen * 128);
    std::int64_t wrong_rows = 0;
    for (std::int64_t t = 0; t < kLen; ++t) {
      const auto same = [&](const std::vector<__half>& arena, const std::vector<__half>& src) {
        return std::memcmp(&arena[pages[t] * 128], &src[t * 128], 256) == 0;
      };
      wrong_rows += !same(arena_k, k) || !same(arena_v, v);
    }
    ASSERT_EQ(wrong_rows, 0) << "token rows not where the block table says";

    DeviceBuffer<float> d_q(q), d_o(128), d_lse(1);
    d_o.poison();
    d_lse.poison();
    // poison() is a cudaMemset on the legacy stream, which the non-blocking pool stream does not
    // wait for: without this the poison could land after the decode.
    DB_CUDA_CHECK(cudaDeviceSynchronize());
    DecodeProblem problem{shape, DType::fp16, 1, kLen, batch.seq_lens_device, d_q.get(), d_o.get(), d_lse.get()};
    DecodePlan plan;
    ASSERT_EQ(plan_decode<PagedKV<__half>>(DecodeKernel::flash_decode, problem, {}, &plan), cudaSuccess);
    DeviceBuffer<std::uint8_t> workspace(plan.workspace_bytes);
    ASSERT_EQ(init_decode_workspace(plan, workspace.get(), pool.stream()), cudaSuccess);
    ASSERT_EQ(run_decode(batch.kv, problem, plan, workspace.get(), pool.stream()), cudaSuccess);
    DB_CUDA_CHECK(cudaStreamSynchronize(pool.stream()));
    const auto ref = reference_decode(ContiguousKV<__half>::make(k.data(), v.data(), 1, kLen, 128), 0, kLen, q, shape);
    const auto result = verify_decode(d_o.download(), d_lse.download(), ref, DType::fp16);
    EXPECT_TRUE(result.passed) << result.summary();
  }
}

TEST(PoolGpu, ContiguousRoundTrip) {
  DB_REQUIRE_GPU();
  ContiguousPool pool({kLayout, 700, 4}, make_device_backend());
  std::mt19937_64 rng(22);
  const auto q = testing::random_values<float>(kShape.heads_q * kShape.head_dim, rng);
  std::vector<TokenRows> rows = {testing::random_tokens(kLayout, 640, rng), testing::random_tokens(kLayout, 3, rng)};
  std::vector<SequenceHandle> hs;
  for (const auto& r : rows) hs.push_back(testing::admit_rows(pool, r));
  hs.push_back(pool.fork(hs[0]));
  rows.push_back(rows[0]);
  append_random_rows(pool, hs[2], rows[2], 50, rng);
  append_random_rows(pool, hs[1], rows[1], 7, rng);
  const auto batch = pool.batch<float>(hs);
  DB_CUDA_CHECK(cudaStreamSynchronize(pool.stream()));
  const std::size_t elems = 3 * pool.config().slab_bytes() / sizeof(float);
  const auto k = to_host(batch.kv.k, elems), v = to_host(batch.kv.v, elems);
  const auto lens = to_host(batch.seq_lens_device, 3);
  auto host_kv = batch.kv;
  host_kv.k = k.data();
  host_kv.v = v.data();
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(lens[i], rows[i].size());
    expect_same_reference(reference_decode(host_kv, i, lens[i], q, kShape), expected(rows[i], q));
  }
}

TEST(PoolGpu, DeviceAllocationFailureIsATypedError) {
  DB_REQUIRE_GPU();
  std::size_t free_bytes = 0, total = 0;
  DB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  // Twice the device's memory cannot be allocated; the error names it and is not sticky.
  const auto config = PagedPoolConfig::for_budget(kLayout, 2 * total, 16, 4096);
  try {
    PagedPool pool(config, make_device_backend());
    ADD_FAILURE() << "expected OutOfDeviceMemory";
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolErrorKind::OutOfDeviceMemory) << e.what();
    EXPECT_NE(std::string(e.what()).find("device allocation of"), std::string::npos) << e.what();
  }
  PagedPool small(PagedPoolConfig::for_budget(kLayout, 1 << 20, 16, 256), make_device_backend());
  EXPECT_NO_THROW(small.admit(nullptr, nullptr, 100));
}

TEST(PoolGpu, DeviceCapacityEqualsTheHostSimulation) {
  DB_REQUIRE_GPU();
  CapacityQuery q;  // Figure 5: 4 GiB, FP32, 1 head, d = 128, length 512
  for (std::int64_t max_len : {512, 4096}) {
    q.max_seq_len = max_len;
    for (PoolKind kind : {PoolKind::contiguous, PoolKind::paged}) {
      const auto host = measure_capacity(kind, q, BackendKind::accounting);
      const auto device = measure_capacity(kind, q, BackendKind::device);
      EXPECT_EQ(device.sequences, host.sequences) << pool_kind_name(kind) << " max_seq_len " << max_len;
      EXPECT_EQ(device.stats.bytes_reserved, host.stats.bytes_reserved);
    }
  }
}

}  // namespace
}  // namespace decode_bench
