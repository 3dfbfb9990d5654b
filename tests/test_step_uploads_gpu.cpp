// A serving step's merged uploads on the GPU (kernels/step_uploads.hpp): the device backend's
// uploads, word lists, device copies and block-table gathers and a plan's staged upload, collected
// into one block and carried out by one copy and one launch (cooperative, and one launch per phase),
// set exactly the bytes the same calls set one after another; a paged pool's batch view built
// while collecting holds the CSR the plain one does, step after step; and a block queued behind a
// held stream is not rewritten by the step of the other parity. Skipped without a GPU.
#include <cstdint>
#include <cstring>
#include <vector>

#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include "harness/cuda_check.hpp"
#include "harness/pinned_buffer.hpp"
#include "harness/stream_gate.hpp"
#include "kernels/host_staging.hpp"
#include "kernels/step_uploads.hpp"
#include "pools/memory_backend.hpp"
#include "pools/paged_pool.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

std::vector<std::uint8_t> bytes_of(const void* device, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  if (n) DB_CUDA_CHECK(cudaMemcpy(out.data(), device, n, cudaMemcpyDeviceToHost));
  return out;
}

// Every kind of operation a step records, some reading what an earlier one wrote: words into the
// block tables and lengths, the slots and indptr, a gather of them, a pitched upload, a device copy
// of what it wrote, a plan's zeros and work list, a second word list over the first, a gather
// reading it into a second CSR.
struct Buffers {
  static constexpr int kSlots = 40, kStride = 24, kBatch = 33;
  PoolBuffer tables, lengths, meta, pages, lens, pages2, lens2, pitched, copied, plan;
  explicit Buffers(MemoryBackend& b)
      : tables(b, kSlots * kStride * 4),
        lengths(b, kSlots * 4),
        meta(b, (2 * kBatch + 1) * 4),
        pages(b, kSlots * kStride * 4),
        lens(b, kBatch * 4),
        pages2(b, kSlots * kStride * 4),
        lens2(b, kBatch * 4),
        pitched(b, 4 * 256),
        copied(b, 4 * 256),
        plan(b, 20000) {
    for (PoolBuffer* p : all()) DB_CUDA_CHECK(cudaMemset(p->data(), 0xFF, p->bytes()));
    DB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  std::vector<PoolBuffer*> all() {
    return {&tables, &lengths, &meta, &pages, &lens, &pages2, &lens2, &pitched, &copied, &plan};
  }
};

void record_step(MemoryBackend& b, Buffers& d, HostStaging* staging) {
  using B = Buffers;
  std::vector<WordWrite> words;
  for (int s = 0; s < B::kSlots; ++s) {
    const int pages = 1 + (s * 7) % B::kStride;
    for (int j = 0; j < pages; ++j) words.push_back({d.tables.as<std::int32_t>() + s * B::kStride + j, 1000 * s + j});
    words.push_back({d.lengths.as<std::int32_t>() + s, 16 * pages - s % 16});
  }
  b.write_words(words);
  std::vector<std::int32_t> meta(B::kBatch), indptr(1, 0);
  for (int i = 0; i < B::kBatch; ++i) {
    meta[i] = (i * 13 + 5) % B::kSlots;
    indptr.push_back(indptr.back() + 1 + (meta[i] * 7) % B::kStride);
  }
  meta.insert(meta.end(), indptr.begin(), indptr.end());
  b.upload(d.meta.data(), meta.size() * 4, meta.data(), meta.size() * 4, meta.size() * 4, 1);
  const std::int32_t* slots = d.meta.as<std::int32_t>();
  b.gather_block_tables(d.tables.as<std::int32_t>(), B::kStride, d.lengths.as<std::int32_t>(), slots,
                        slots + B::kBatch, B::kBatch, d.pages.as<std::int32_t>(), d.lens.as<std::int32_t>());
  std::vector<std::uint8_t> rows(3 * 100);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::uint8_t>(i * 31 + 7);
  b.upload(d.pitched.data() + 2, 256, rows.data(), 100, 90, 3);  // 3 rows of 90 bytes, unaligned
  b.copy(d.copied.data() + 4, 256, d.pitched.data(), 256, 200, 2);
  std::vector<std::int32_t> items(4000);
  for (std::size_t i = 0; i < items.size(); ++i) items[i] = static_cast<std::int32_t>(i * 2654435761u);
  DB_CUDA_CHECK(upload_zeros_then(d.plan.data(), 512, items.data(), items.size() * 4, b.stream(), staging));
  std::vector<WordWrite> again;
  for (int s = 0; s < B::kSlots; s += 3) {
    again.push_back({d.tables.as<std::int32_t>() + s * B::kStride, -s});
    again.push_back({d.lengths.as<std::int32_t>() + s, 3 + s});
  }
  b.write_words(again);
  b.gather_block_tables(d.tables.as<std::int32_t>(), B::kStride, d.lengths.as<std::int32_t>(), slots,
                        slots + B::kBatch, B::kBatch, d.pages2.as<std::int32_t>(), d.lens2.as<std::int32_t>());
}

TEST(StepUploadsGpu, MergedUploadsWriteTheBytesTheSeparateOnesWrote) {
  DB_REQUIRE_GPU();
  for (const StepUploadLaunch mode : {StepUploadLaunch::cooperative_if_supported, StepUploadLaunch::per_phase}) {
    SCOPED_TRACE(mode == StepUploadLaunch::per_phase ? "per phase" : "cooperative");
    auto plain = make_device_backend(), merged = make_device_backend();
    Buffers want(*plain), got(*merged);
    PinnedBuffer<std::byte> pinned(1 << 16);
    HostStaging staging(pinned.get(), pinned.bytes());
    record_step(*plain, want, &staging);
    plain->synchronize();

    StepUploads uploads(merged->stream(), mode);
    StepUploadBlock& block = uploads.begin(0);
    {
      CollectedUploads collect(*merged, block);
      HostStaging into_block(&block);
      record_step(*merged, got, &into_block);
      EXPECT_THROW(merged->synchronize(), std::logic_error) << "nothing collected is on the stream yet";
    }
    // words, slots and indptr, the plan's upload | gather | pitched rows | the copy of them, the
    // second word list | the second gather
    const int phases = block.phases();
    EXPECT_EQ(phases, 5);
    uploads.flush();
    merged->synchronize();
    const StepUploads::Counts& c = uploads.counts();
    EXPECT_EQ(c.flushes, 1);
    EXPECT_EQ(c.copies, 1);
    int cooperative = 0;
    DB_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, 0));
    EXPECT_EQ(c.launches, mode == StepUploadLaunch::per_phase || !cooperative ? phases : 1);
    EXPECT_EQ(c.phases, phases);
    std::vector<PoolBuffer*> w = want.all(), g = got.all();
    for (std::size_t i = 0; i < w.size(); ++i) {
      SCOPED_TRACE(i);
      const std::vector<std::uint8_t> a = bytes_of(w[i]->data(), w[i]->bytes());
      const std::vector<std::uint8_t> b = bytes_of(g[i]->data(), g[i]->bytes());
      EXPECT_EQ(a, b);
      EXPECT_NE(a, std::vector<std::uint8_t>(a.size(), 0xFF)) << "the sequence wrote into every buffer";
    }
  }
}

// A paged pool's batch view built while the backend collects, flushed as one block, step after
// step (appends, a release and an admit between): the same CSR, lengths and slots as a pool that
// uploads and gathers one call at a time.
TEST(StepUploadsGpu, APagedPoolsBatchBuiltWhileCollectingIsThePlainOne) {
  DB_REQUIRE_GPU();
  const PagedPoolConfig c{.layout = {2, 64, DType::fp16}, .page_size = 4, .num_pages = 96, .max_seq_len = 96,
                          .max_seqs = 12, .page_order = PageOrder::shuffled};
  PagedPool plain(c, make_device_backend()), merged(c, make_device_backend());
  plain.defer_metadata_writes(true);
  merged.defer_metadata_writes(true);
  StepUploads uploads(merged.backend().stream());
  std::vector<SequenceHandle> hp, hm;
  for (const std::int64_t len : {5, 9, 13, 2, 7}) {
    hp.push_back(plain.admit(nullptr, nullptr, len));
    hm.push_back(merged.admit(nullptr, nullptr, len));
  }
  for (int step = 0; step < 6; ++step) {
    SCOPED_TRACE(step);
    for (std::size_t i = 0; i < hp.size(); ++i) {
      plain.extend(hp[i], 1 + (step + static_cast<int>(i)) % 3);
      merged.extend(hm[i], 1 + (step + static_cast<int>(i)) % 3);
    }
    if (step == 2) {
      plain.release(hp[1]);
      merged.release(hm[1]);
      hp.erase(hp.begin() + 1);
      hm.erase(hm.begin() + 1);
      hp.push_back(plain.admit(nullptr, nullptr, 11));
      hm.push_back(merged.admit(nullptr, nullptr, 11));
    }
    const BatchView<PagedKV<__half>> a = plain.batch<__half>(hp);
    StepUploadBlock& block = uploads.begin(step % 2);
    BatchView<PagedKV<__half>> b;
    {
      CollectedUploads collect(merged.backend(), block);
      b = merged.batch<__half>(hm);
    }
    uploads.flush();
    plain.backend().synchronize();
    merged.backend().synchronize();
    ASSERT_EQ(a.num_seqs, b.num_seqs);
    EXPECT_EQ(a.lengths_host, b.lengths_host);
    const auto n = static_cast<std::size_t>(a.num_seqs);
    const std::vector<std::uint8_t> indptr = bytes_of(a.kv.indptr, (n + 1) * 4);
    EXPECT_EQ(indptr, bytes_of(b.kv.indptr, (n + 1) * 4));
    std::int32_t total = 0;
    std::memcpy(&total, indptr.data() + n * 4, 4);
    EXPECT_EQ(bytes_of(a.kv.page_indices, static_cast<std::size_t>(total) * 4),
              bytes_of(b.kv.page_indices, static_cast<std::size_t>(total) * 4));
    EXPECT_EQ(bytes_of(a.seq_lens_device, n * 4), bytes_of(b.seq_lens_device, n * 4));
  }
  EXPECT_EQ(uploads.counts().copies, uploads.counts().flushes);
  EXPECT_EQ(uploads.counts().flushes, 6);
}

// Two steps queued behind a held stream, one block each (parities 0 and 1): the second step's
// block is other memory, so the first step's copy, run after it, still lands the first step's
// bytes. Then a block larger than any before grows and lands whole.
TEST(StepUploadsGpu, TheOtherParitysBlockNeverRewritesOneStillQueued) {
  DB_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  DB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  {
    StepUploads uploads(stream);
    DeviceBuffer<std::int32_t> dst0(1000), dst1(1000), big(100000);
    const auto two_steps = [&](int base) {
      for (int parity = 0; parity < 2; ++parity) {
        StepUploadBlock& block = uploads.begin(parity);
        auto* host = static_cast<std::int32_t*>(block.write_private((parity ? dst1 : dst0).get(), 4000));
        for (int i = 0; i < 1000; ++i) host[i] = base * (parity + 1) + i;
        uploads.flush();
      }
    };
    two_steps(-7);  // the blocks and the device copy allocated before the stream is held
    DB_CUDA_CHECK(cudaStreamSynchronize(stream));
    StreamGate gate;
    DB_CUDA_CHECK(gate.hold(stream));
    two_steps(10000);
    gate.release();
    DB_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<std::int32_t> a = dst0.download(), b = dst1.download();
    for (int i = 0; i < 1000; ++i) {
      ASSERT_EQ(a[i], 10000 + i) << i;
      ASSERT_EQ(b[i], 20000 + i) << i;
    }
    StepUploadBlock& block = uploads.begin(0);
    for (int piece = 0; piece < 4; ++piece) {  // 400 KB in four segments: the block grows on the way
      auto* host = static_cast<std::int32_t*>(block.write_private(big.get() + 25000 * piece, 100000));
      for (int i = 0; i < 25000; ++i) host[i] = 25000 * piece + i;
    }
    uploads.flush();
    DB_CUDA_CHECK(cudaStreamSynchronize(stream));
    EXPECT_GE(uploads.counts().grows, 1);
    const std::vector<std::int32_t> all = big.download();
    for (int i = 0; i < 100000; ++i) ASSERT_EQ(all[i], i) << i;
  }
  DB_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace decode_bench
