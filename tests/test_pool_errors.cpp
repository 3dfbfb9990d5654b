// Bad input to the pools: each gives a typed PoolError whose message names the problem, changes
// nothing, and leaks nothing (pages free + used == total afterwards).
#include <memory>
#include <stdexcept>
#include <string>

#include "tests/pool_test_support.hpp"

namespace decode_bench {
namespace {

using testing::admit_rows;
using testing::random_tokens;

template <class F>
void expect_pool_error(F&& f, PoolErrorKind kind, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected " << pool_error_kind_name(kind);
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what() << " should mention " << needle;
  }
}

PagedPoolConfig small_paged() {
  return {.layout = {2, 4, DType::fp32}, .page_size = 4, .num_pages = 8, .max_seq_len = 16, .max_seqs = 4};
}

class PagedErrors : public ::testing::Test {
 protected:
  PagedPool pool{small_paged(), make_host_backend()};
  std::mt19937_64 rng{5};

  void expect_unchanged(const testing::PagedSnapshot& before, const std::vector<SequenceHandle>& live) {
    EXPECT_EQ(testing::snapshot(pool, live), before);
    EXPECT_EQ(pool.pages().free_count() + pool.pages().used_count(), pool.pages().total());
  }
};

TEST_F(PagedErrors, AdmitBeyondMaxSeqLen) {
  const auto h = admit_rows(pool, random_tokens(pool.layout(), 5, rng));
  const auto before = testing::snapshot(pool, {h});
  expect_pool_error([&] { pool.admit(nullptr, nullptr, 17); }, PoolErrorKind::SequenceTooLong, "max_seq_len 16");
  expect_unchanged(before, {h});
}

TEST_F(PagedErrors, AppendPastTheLimit) {
  const auto rows = random_tokens(pool.layout(), 16, rng);
  const auto h = admit_rows(pool, rows);
  const auto before = testing::snapshot(pool, {h});
  const std::vector<float> row(8, 1.f);
  expect_pool_error([&] { pool.append_token(h, std::span<const float>(row), std::span<const float>(row)); },
                    PoolErrorKind::SequenceTooLong, "16 + 1 exceeds max_seq_len 16");
  expect_pool_error([&] { pool.extend(h, 1); }, PoolErrorKind::SequenceTooLong, "exceeds max_seq_len");
  expect_unchanged(before, {h});
  EXPECT_TRUE(testing::reads_back(pool, h, rows));
}

TEST_F(PagedErrors, ExhaustedFreeList) {
  const auto a = admit_rows(pool, random_tokens(pool.layout(), 16, rng));  // 4 pages
  const auto b = admit_rows(pool, random_tokens(pool.layout(), 14, rng));  // 4 pages, tail has room
  ASSERT_EQ(pool.pages().free_count(), 0);
  auto before = testing::snapshot(pool, {a, b});
  expect_pool_error([&] { pool.admit(nullptr, nullptr, 1); }, PoolErrorKind::OutOfPages, "needs 1 pages, 0 are free");
  expect_unchanged(before, {a, b});
  // Appending inside b's unshared tail page needs no page; a fork shares; but the fork's first
  // append must copy the tail, and there is no page to copy into.
  pool.append_token(b, nullptr, nullptr);
  const auto c = pool.fork(b);
  before = testing::snapshot(pool, {a, b, c});
  expect_pool_error([&] { pool.append_token(c, nullptr, nullptr); }, PoolErrorKind::OutOfPages, "copy-on-write");
  expect_pool_error([&] { pool.append_token(b, nullptr, nullptr); }, PoolErrorKind::OutOfPages, "copy-on-write");
  expect_unchanged(before, {a, b, c});
  // Releasing the fork makes the tail private again: b appends in place.
  pool.release(c);
  pool.append_token(b, nullptr, nullptr);
  EXPECT_EQ(pool.length(b), 16);
}

TEST_F(PagedErrors, ReleasedOrUnknownHandle) {
  const auto h = admit_rows(pool, random_tokens(pool.layout(), 6, rng));
  const auto g = admit_rows(pool, random_tokens(pool.layout(), 3, rng));
  pool.release(h);
  const auto before = testing::snapshot(pool, {g});
  const float row[8] = {};
  expect_pool_error([&] { pool.release(h); }, PoolErrorKind::UnknownHandle, "was released");
  expect_pool_error([&] { pool.append_token(h, row, row); }, PoolErrorKind::UnknownHandle, "append_token on handle (slot 0");
  expect_pool_error([&] { pool.fork(h); }, PoolErrorKind::UnknownHandle, "fork");
  expect_pool_error([&] { pool.length(h); }, PoolErrorKind::UnknownHandle, "length");
  expect_pool_error([&] { pool.release({99, 0}); }, PoolErrorKind::UnknownHandle, "no such slot");
  expect_pool_error([&] { pool.release({-1, 0}); }, PoolErrorKind::UnknownHandle, "no such slot");
  expect_pool_error([&] { pool.release({g.slot, g.generation + 1}); }, PoolErrorKind::UnknownHandle, "released (or never");
  expect_unchanged(before, {g});
  // The slot is reused with a new generation; the stale handle still does not reach it.
  const auto reused = pool.admit(nullptr, nullptr, 2);
  EXPECT_EQ(reused.slot, h.slot);
  EXPECT_NE(reused.generation, h.generation);
  expect_pool_error([&] { pool.length(h); }, PoolErrorKind::UnknownHandle, "released");
}

TEST_F(PagedErrors, OutOfSlots) {
  std::vector<SequenceHandle> hs;
  for (int i = 0; i < 4; ++i) hs.push_back(pool.admit(nullptr, nullptr, 1));
  const auto before = testing::snapshot(pool, hs);
  expect_pool_error([&] { pool.admit(nullptr, nullptr, 1); }, PoolErrorKind::OutOfSlots, "4 sequence slots");
  expect_pool_error([&] { pool.fork(hs[0]); }, PoolErrorKind::OutOfSlots, "fork");
  expect_unchanged(before, hs);
}

TEST_F(PagedErrors, BadArgumentsAndDType) {
  const auto h = pool.admit(nullptr, nullptr, 3);
  const auto before = testing::snapshot(pool, {h});
  const float row[8] = {};
  expect_pool_error([&] { pool.admit(nullptr, nullptr, -1); }, PoolErrorKind::InvalidArgument, "len must be >= 0");
  expect_pool_error([&] { pool.admit(row, nullptr, 1); }, PoolErrorKind::InvalidArgument, "both K and V");
  expect_pool_error([&] { pool.extend(h, -2); }, PoolErrorKind::InvalidArgument, "n must be >= 0");
  const std::vector<float> short_data(7);
  expect_pool_error([&] { pool.admit(std::span<const float>(short_data), std::span<const float>(short_data), 1); },
                    PoolErrorKind::InvalidArgument, "H_kv * len * D = 8");
  const std::vector<__half> half_row(8);
  expect_pool_error([&] { pool.append_token(h, std::span<const __half>(half_row), std::span<const __half>(half_row)); },
                    PoolErrorKind::DTypeMismatch, "pool stores fp32, caller used fp16");
  expect_pool_error([&] { pool.accessor<__nv_bfloat16>(h); }, PoolErrorKind::DTypeMismatch, "bf16");
  expect_pool_error([&] { pool.batch<float>({}); }, PoolErrorKind::InvalidArgument, "no sequences");
  expect_pool_error([&] { pool.read_token(h, 3, nullptr, nullptr); }, PoolErrorKind::InvalidArgument, "outside [0, 3)");
  expect_unchanged(before, {h});
}

TEST(PoolConfigErrors, BadConfigurationsAreRefusedByName) {
  auto c = small_paged();
  c.page_size = 0;
  expect_pool_error([&] { PagedPool p(c, make_host_backend()); }, PoolErrorKind::InvalidArgument, "page_size must be >= 1 (got 0)");
  c = small_paged();
  c.num_pages = 0;
  expect_pool_error([&] { PagedPool p(c, make_host_backend()); }, PoolErrorKind::InvalidArgument, "num_pages");
  c = small_paged();
  c.layout.head_dim = 0;
  expect_pool_error([&] { PagedPool p(c, make_host_backend()); }, PoolErrorKind::InvalidArgument, "head_dim");
  expect_pool_error([&] { ContiguousPool p({{1, 4, DType::fp32}, 0, 4}, make_host_backend()); },
                    PoolErrorKind::InvalidArgument, "ContiguousPool: max_seq_len must be in [1, 2^31) (got 0)");
  c = small_paged();
  c.max_seq_len = std::int64_t{1} << 31;  // lengths reach kernels as int32
  expect_pool_error([&] { PagedPool p(c, make_host_backend()); }, PoolErrorKind::InvalidArgument,
                    "PagedPool: max_seq_len must be in [1, 2^31) (got 2147483648)");
  c = small_paged();
  c.max_seqs = 0;
  expect_pool_error([&] { PagedPool p(c, make_host_backend()); }, PoolErrorKind::InvalidArgument, "max_seqs must be >= 1 (got 0)");
  c = small_paged();
  c.churn_ops = -1;
  expect_pool_error([&] { PagedPool p(c, make_host_backend()); }, PoolErrorKind::InvalidArgument, "churn_ops must be >= 0 (got -1)");
  c = small_paged();
  c.layout.heads_kv = 0;
  expect_pool_error([&] { PagedPool p(c, make_host_backend()); }, PoolErrorKind::InvalidArgument, "heads_kv");
  // A budget below one slab leaves no slot at all.
  const auto tiny = ContiguousPoolConfig::for_budget({1, 128, DType::fp32}, 1000, 512);
  expect_pool_error([&] { ContiguousPool p(tiny, make_host_backend()); }, PoolErrorKind::InvalidArgument, "max_seqs");
}

TEST(ContiguousErrors, TooLongFullAndReleased) {
  ContiguousPool pool({{1, 2, DType::fp16}, 4, 2}, make_host_backend());
  const auto a = pool.admit(nullptr, nullptr, 4);
  const auto b = pool.admit(nullptr, nullptr, 1);
  const auto before = pool.stats();
  expect_pool_error([&] { pool.admit(nullptr, nullptr, 5); }, PoolErrorKind::SequenceTooLong, "exceeds max_seq_len 4");
  expect_pool_error([&] { pool.admit(nullptr, nullptr, 1); }, PoolErrorKind::OutOfSlots, "2 contiguous slots");
  expect_pool_error([&] { pool.append_token(a, nullptr, nullptr); }, PoolErrorKind::SequenceTooLong, "full");
  expect_pool_error([&] { pool.fork(a); }, PoolErrorKind::OutOfSlots, "fork");
  expect_pool_error([&] { pool.accessor<float>(a); }, PoolErrorKind::DTypeMismatch, "pool stores fp16");
  pool.release(b);
  expect_pool_error([&] { pool.append_token(b, nullptr, nullptr); }, PoolErrorKind::UnknownHandle, "released");
  const auto after = pool.stats();
  EXPECT_EQ(after.sequences, before.sequences - 1);
  EXPECT_EQ(after.units_used + after.units_free, after.units_total);
  EXPECT_EQ(after.logical_tokens, 4);
}

TEST(AccountingBackend, CountsButRefusesDataAccess) {
  auto c = small_paged();
  PagedPool pool(c, make_accounting_backend());
  const auto h = pool.admit(nullptr, nullptr, 5);
  EXPECT_EQ(pool.pages().used_count(), 2);
  expect_pool_error([&] { pool.accessor<float>(h); }, PoolErrorKind::NoMemory, "accounting backend");
  float row[8];
  expect_pool_error([&] { pool.read_token(h, 0, row, row); }, PoolErrorKind::NoMemory, "accounting backend");
}

// A host backend whose uploads fail once armed, after `uploads_before_failure` more succeed (a
// device upload that errors, say).
class FailingUploadBackend final : public MemoryBackend {
 public:
  bool fail_uploads = false;
  int uploads_before_failure = 0;
  BackendKind kind() const override { return inner_->kind(); }
  void* allocate(std::size_t bytes) override { return inner_->allocate(bytes); }
  void deallocate(void* p) noexcept override { inner_->deallocate(p); }
  void upload(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
              std::size_t height) override {
    if (fail_uploads && uploads_before_failure-- <= 0) throw std::runtime_error("upload failed (injected)");
    inner_->upload(dst, dst_pitch, src, src_pitch, width, height);
  }
  void copy(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
            std::size_t height) override {
    inner_->copy(dst, dst_pitch, src, src_pitch, width, height);
  }
  void download(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                std::size_t height) override {
    inner_->download(dst, dst_pitch, src, src_pitch, width, height);
  }
  void gather_block_tables(const std::int32_t* tables, std::int64_t row_stride, const std::int32_t* slot_lengths,
                           const std::int32_t* slots, const std::int32_t* indptr, int n, std::int32_t* out_pages,
                           std::int32_t* out_lens) override {
    inner_->gather_block_tables(tables, row_stride, slot_lengths, slots, indptr, n, out_pages, out_lens);
  }
  void synchronize() override { inner_->synchronize(); }

 private:
  std::unique_ptr<MemoryBackend> inner_ = make_host_backend();
};

// A token write that fails leaves the pool as it was: a fresh page taken for it goes back to the
// free list (the table again matches the length), and the next append works and reads back.
TEST(PagedAppendFailure, AFailedTokenWriteReturnsItsFreshPage) {
  auto backend = std::make_unique<FailingUploadBackend>();
  FailingUploadBackend* failing = backend.get();
  PagedPool pool(small_paged(), std::move(backend));
  std::mt19937_64 rng(9);
  const KVLayout layout = small_paged().layout;
  const testing::TokenRows rows = testing::random_tokens(layout, 5, rng);
  const testing::TokenRows first_page{{rows.k.begin(), rows.k.begin() + 4}, {rows.v.begin(), rows.v.begin() + 4}};
  const SequenceHandle h = testing::admit_rows(pool, first_page);  // one full page
  const testing::PagedSnapshot before = testing::snapshot(pool, {h});
  const std::int32_t free_before = pool.pages().free_count();
  failing->fail_uploads = true;  // token 4 needs a fresh page: its table entry is written, its K row fails
  failing->uploads_before_failure = 2;  // the table entry and the indptr word
  EXPECT_THROW(pool.append_token(h, std::span<const float>(rows.k[4]), std::span<const float>(rows.v[4])),
               std::runtime_error);
  EXPECT_EQ(testing::snapshot(pool, {h}), before);
  EXPECT_EQ(pool.pages().free_count(), free_before);
  EXPECT_EQ(pool.length(h), 4);
  failing->fail_uploads = false;
  pool.append_token(h, std::span<const float>(rows.k[4]), std::span<const float>(rows.v[4]));
  EXPECT_EQ(pool.length(h), 5);
  EXPECT_EQ(pool.block_table(h).size(), 2u);
  EXPECT_TRUE(testing::reads_back(pool, h, rows));
}

}  // namespace
}  // namespace decode_bench
