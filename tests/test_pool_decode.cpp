// Decodes through pool accessors (host backend, so the CPU reference reads the pool directly)
// equal the reference on the original contiguous data: contiguous and paged pools, scattered
// pages (shuffled, churned free lists), forked sequences that diverge, and batch views.
#include <cmath>

#include "kernels/cpu_reference.hpp"
#include "tests/pool_test_support.hpp"
#include "tests/random_kv.hpp"

namespace decode_bench {
namespace {

using testing::append_random_rows;
using testing::expect_same_reference;
using testing::TokenRows;

const DecodeShape kShape{4, 2, 8};  // GQA group 2
const KVLayout kLayout{2, 8, DType::fp32};

ReferenceOutput expected(const TokenRows& rows, std::span<const float> q) {
  return testing::reference_of(rows, q, kLayout, kShape);
}

class PagedDecode : public ::testing::TestWithParam<PageOrder> {};

TEST_P(PagedDecode, SequencesForksAndBatchesMatchTheReference) {
  const PagedPoolConfig c{.layout = kLayout, .page_size = 16, .num_pages = 64, .max_seq_len = 300, .max_seqs = 8,
                          .page_order = GetParam()};
  PagedPool pool(c, make_host_backend());
  std::mt19937_64 rng(11);
  const auto q = testing::random_values<float>(kShape.heads_q * kShape.head_dim, rng);

  // Lengths off page boundaries, a zero-length one, and one exactly two pages.
  std::vector<TokenRows> rows = {testing::random_tokens(kLayout, 37, rng), testing::random_tokens(kLayout, 0, rng),
                                 testing::random_tokens(kLayout, 32, rng), testing::random_tokens(kLayout, 101, rng)};
  std::vector<SequenceHandle> hs;
  for (const auto& r : rows) hs.push_back(testing::admit_rows(pool, r));
  append_random_rows(pool, hs[0], rows[0], 20, rng);  // crosses a page boundary
  append_random_rows(pool, hs[1], rows[1], 5, rng);
  // A fork of sequence 3 (tail page partly full), then both sides diverge.
  hs.push_back(pool.fork(hs[3]));
  rows.push_back(rows[3]);
  append_random_rows(pool, hs[4], rows[4], 30, rng);
  append_random_rows(pool, hs[3], rows[3], 3, rng);
  EXPECT_NE(pool.block_table(hs[3]).back(), pool.block_table(hs[4])[6]) << "the written tail was copied";
  EXPECT_EQ(pool.block_table(hs[3])[0], pool.block_table(hs[4])[0]) << "full prefix pages stay shared";
  if (GetParam() != PageOrder::sequential) {
    EXPECT_GT(pool.physical_discontinuity(), 0.3);
  }

  for (std::size_t i = 0; i < hs.size(); ++i) {
    SCOPED_TRACE("sequence " + std::to_string(i));
    expect_same_reference(reference_decode(pool.accessor<float>(hs[i]), 0, pool.length(hs[i]), q, kShape),
                          expected(rows[i], q));
  }
  // The same sequences as one batch, in a shuffled order.
  const std::vector<SequenceHandle> order = {hs[4], hs[1], hs[0], hs[3], hs[2]};
  const std::vector<int> source = {4, 1, 0, 3, 2};
  const auto batch = pool.batch<float>(order);
  ASSERT_EQ(batch.num_seqs, 5);
  EXPECT_EQ(batch.max_len, rows[4].size());
  for (int i = 0; i < batch.num_seqs; ++i) {
    SCOPED_TRACE("batch entry " + std::to_string(i));
    ASSERT_EQ(batch.lengths_host[i], rows[source[i]].size());
    ASSERT_EQ(batch.seq_lens_device[i], rows[source[i]].size());
    expect_same_reference(reference_decode(batch.kv, i, batch.lengths_host[i], q, kShape),
                          expected(rows[source[i]], q));
  }
  // After more appends the cached batch is rebuilt with the new lengths and pages.
  append_random_rows(pool, hs[0], rows[0], 16, rng);
  const auto again = pool.batch<float>(order);
  EXPECT_EQ(again.lengths_host[2], rows[0].size());
  expect_same_reference(reference_decode(again.kv, 2, again.lengths_host[2], q, kShape), expected(rows[0], q));
}

INSTANTIATE_TEST_SUITE_P(PageOrders, PagedDecode,
                         ::testing::Values(PageOrder::sequential, PageOrder::shuffled, PageOrder::churned),
                         [](const auto& info) { return std::string(page_order_name(info.param)); });

TEST(ContiguousDecode, SequencesForksAndBatchesMatchTheReference) {
  ContiguousPool pool({kLayout, 200, 4}, make_host_backend());
  std::mt19937_64 rng(12);
  const auto q = testing::random_values<float>(kShape.heads_q * kShape.head_dim, rng);
  std::vector<TokenRows> rows = {testing::random_tokens(kLayout, 77, rng), testing::random_tokens(kLayout, 5, rng)};
  std::vector<SequenceHandle> hs;
  for (const auto& r : rows) hs.push_back(testing::admit_rows(pool, r));
  hs.push_back(pool.fork(hs[0]));  // a copy: contiguous slabs share nothing
  rows.push_back(rows[0]);
  append_random_rows(pool, hs[2], rows[2], 9, rng);
  append_random_rows(pool, hs[0], rows[0], 2, rng);
  for (std::size_t i = 0; i < hs.size(); ++i)
    expect_same_reference(reference_decode(pool.accessor<float>(hs[i]), 0, pool.length(hs[i]), q, kShape),
                          expected(rows[i], q));
  const auto batch = pool.batch<float>(hs);  // slots 0, 1, 2 in order
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(batch.seq_lens_device[i], rows[i].size());
    expect_same_reference(reference_decode(batch.kv, i, batch.lengths_host[i], q, kShape), expected(rows[i], q));
  }
  // Out of slot order is refused by name: ContiguousKV has no slot map.
  const std::vector<SequenceHandle> reversed = {hs[1], hs[0]};
  try {
    pool.batch<float>(reversed);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("consecutive slots"), std::string::npos) << e.what();
  }
}

TEST(PagedDecode, Fp16PoolMatchesTheReference) {
  const KVLayout layout{2, 8, DType::fp16};
  const PagedPoolConfig c{.layout = layout, .page_size = 8, .num_pages = 16, .max_seq_len = 64, .max_seqs = 2,
                          .page_order = PageOrder::shuffled};
  PagedPool pool(c, make_host_backend());
  std::mt19937_64 rng(13);
  const auto seq = testing::random_contiguous<__half>(kShape, 45, rng);  // (1, H_kv, 45, D)
  const auto h = pool.admit(std::span<const __half>(seq.k), std::span<const __half>(seq.v), 45);
  const auto q = testing::random_values<float>(kShape.heads_q * kShape.head_dim, rng);
  expect_same_reference(reference_decode(pool.accessor<__half>(h), 0, 45, q, kShape),
              reference_decode(seq.view(kShape, 45), 0, 45, q, kShape));
}

}  // namespace
}  // namespace decode_bench
