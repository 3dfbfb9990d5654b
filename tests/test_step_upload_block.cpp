// A serving step's merged upload block (kernels/step_upload_block.hpp), on the host: segments land
// where they should (16-byte aligned, split into pieces, the operation table after the payload),
// the phases a step's order needs and no more, a block too small grows keeping what it holds or
// refuses saying what it wanted, and the image carried out phase by phase (each phase's pieces in
// reverse, as a parallel launch may) sets the bytes the same operations set one after another.
// The plan's staging bound to a block records its uploads there; backends that cannot collect
// refuse a block.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/host_staging.hpp"
#include "kernels/step_upload_block.hpp"
#include "pools/memory_backend.hpp"

namespace decode_bench {
namespace {

// Host memory standing in for page-locked memory, growing through the block's callback.
struct GrowingMemory {
  std::vector<std::byte> bytes;
  int grows = 0;
  explicit GrowingMemory(std::size_t n) : bytes(n) {}
  StepUploadBlock block() {
    return StepUploadBlock(bytes, [this](std::size_t want, std::span<const std::byte> held) {
      std::vector<std::byte> grown(want);
      std::copy(held.begin(), held.end(), grown.begin());
      bytes = std::move(grown);
      ++grows;
      return std::span<std::byte>(bytes);
    });
  }
};

const StepUploadOp* ops_of(const StepUploadBlock& b, const StepUploadImage& image) {
  return reinterpret_cast<const StepUploadOp*>(b.data() + image.ops_offset);
}

// The kernel's work on the host: phase by phase, each phase's pieces in reverse order (a parallel
// launch may run them in any). Device addresses are host addresses here.
void carry_out(const StepUploadBlock& b, const StepUploadImage& image) {
  const StepUploadOp* ops = ops_of(b, image);
  for (int p = 0; p < image.phases; ++p) {
    const std::uint32_t begin = p == 0 ? 0 : image.phase_end[p - 1];
    for (std::uint32_t i = image.phase_end[p]; i-- > begin;) {
      const StepUploadOp& op = ops[i];
      switch (static_cast<StepUploadKind>(op.kind)) {
        case StepUploadKind::copy_staged:
          std::memcpy(reinterpret_cast<void*>(op.dst), b.data() + op.src, op.count);
          break;
        case StepUploadKind::copy_device:
          std::memmove(reinterpret_cast<void*>(op.dst), reinterpret_cast<const void*>(op.src), op.count);
          break;
        case StepUploadKind::words: {
          const auto* w = reinterpret_cast<const StepWord*>(b.data() + op.src);
          for (std::uint32_t k = 0; k < op.count; ++k) *w[k].dst = w[k].value;
          break;
        }
        case StepUploadKind::gather: {
          StepGather g;
          std::memcpy(&g, b.data() + op.src, sizeof g);
          for (std::uint32_t k = 0; k < op.count; ++k) {
            const auto i_seq = static_cast<std::int64_t>(op.dst) + k;
            const std::int32_t slot = g.slots[i_seq];
            for (std::int32_t j = 0; j < g.indptr[i_seq + 1] - g.indptr[i_seq]; ++j)
              g.out_pages[g.indptr[i_seq] + j] = g.tables[slot * g.row_stride + j];
            g.out_lens[i_seq] = g.slot_lengths[slot];
          }
          break;
        }
        default: FAIL() << "unknown operation kind " << op.kind;
      }
    }
  }
}

TEST(StepUploadBlock, SegmentsAreAlignedSplitIntoPiecesAndTheTableFollowsThePayload) {
  std::vector<std::byte> memory(1 << 16);
  StepUploadBlock b(memory);
  std::vector<std::int32_t> dev(4096, -1);  // "device" memory
  auto* a = static_cast<std::byte*>(b.write(dev.data() + 1, 10));
  auto* c = static_cast<std::byte*>(b.write_private(dev.data() + 100, 9000));
  EXPECT_EQ(a, memory.data());
  EXPECT_EQ(c, memory.data() + 16) << "the next segment at the next 16-byte boundary";
  EXPECT_EQ(b.write(dev.data(), 0), nullptr) << "nothing recorded for 0 bytes";
  const StepUploadImage image = b.finish();  // a copy: reset() below empties the block's
  EXPECT_EQ(image.ops_offset, 16u + 9008u) << "16 + 9000, aligned up";
  // 1 piece for 10 bytes, 3 for 9000 (4096 + 4096 + 808), one phase (no order needed between them).
  ASSERT_EQ(image.phases, 1);
  EXPECT_EQ(image.phase_end[0], 4u);
  EXPECT_EQ(image.widest_phase, 4u);
  EXPECT_EQ(image.bytes, image.ops_offset + 4 * sizeof(StepUploadOp));
  EXPECT_EQ(b.wanted(), image.bytes);
  const StepUploadOp* ops = ops_of(b, image);
  const auto dev_at = [&](std::size_t word, std::size_t byte) {
    return reinterpret_cast<std::uint64_t>(dev.data() + word) + byte;
  };
  EXPECT_EQ(ops[0].kind, static_cast<std::uint32_t>(StepUploadKind::copy_staged));
  EXPECT_EQ(ops[0].count, 10u);
  EXPECT_EQ(ops[0].src, 0u);
  EXPECT_EQ(ops[0].dst, dev_at(1, 0));
  const std::uint32_t sizes[] = {4096, 4096, 808};
  for (int k = 0; k < 3; ++k) {
    EXPECT_EQ(ops[1 + k].count, sizes[k]) << k;
    EXPECT_EQ(ops[1 + k].src, 16u + 4096u * k) << k;
    EXPECT_EQ(ops[1 + k].dst, dev_at(100, 4096u * k)) << k;
    EXPECT_EQ(ops[1 + k].src % kStepUploadAlign, 0u);
  }
  EXPECT_THROW(b.write(dev.data(), 4), std::logic_error) << "nothing after finish()";
  b.reset();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.write(dev.data(), 4), memory.data()) << "reset empties the block";
  EXPECT_EQ(b.wanted(), image.bytes) << "what a block needed is kept across resets";
}

// The trace's step: the pool's words, its slots and indptr, its gather, then the staged rows and
// the plan's work list (private). Two phases: everything but the gather, then the gather.
TEST(StepUploadBlock, ATraceStepIsTwoPhasesAndLandsTheSequentialBytes) {
  constexpr int kSlots = 6, kStride = 5, kBatch = 4;
  struct Device {
    std::vector<std::int32_t> tables = std::vector<std::int32_t>(kSlots * kStride, -1);
    std::vector<std::int32_t> lengths = std::vector<std::int32_t>(kSlots, -1);
    std::vector<std::int32_t> meta = std::vector<std::int32_t>(2 * kBatch + 1, -1);  // slots, then indptr
    std::vector<std::int32_t> pages = std::vector<std::int32_t>(kSlots * kStride, -1);
    std::vector<std::int32_t> lens = std::vector<std::int32_t>(kBatch, -1);
    std::vector<std::int32_t> staged = std::vector<std::int32_t>(300, -1);
    std::vector<std::int32_t> plan = std::vector<std::int32_t>(40, -1);
  };
  const std::vector<std::int32_t> slots = {4, 0, 2, 5};
  const std::vector<std::int32_t> indptr = {0, 3, 4, 9, 11};
  const auto words_of = [&](Device& d) {
    std::vector<StepWord> w;
    for (int s = 0; s < kSlots; ++s) {
      for (int j = 0; j < kStride; ++j) w.push_back({&d.tables[s * kStride + j], 100 * s + j});
      w.push_back({&d.lengths[s], 7 * s + 1});
    }
    return w;
  };
  std::vector<std::int32_t> staged(300), plan(40);
  std::iota(staged.begin(), staged.end(), 1000);
  std::iota(plan.begin(), plan.end(), -500);
  std::vector<std::int32_t> meta(slots);
  meta.insert(meta.end(), indptr.begin(), indptr.end());

  // One after another: what the separate uploads and launches did.
  Device want;
  for (const StepWord& w : words_of(want)) *w.dst = w.value;
  std::copy(meta.begin(), meta.end(), want.meta.begin());
  for (int i = 0; i < kBatch; ++i) {
    for (int j = 0; j < indptr[i + 1] - indptr[i]; ++j) want.pages[indptr[i] + j] = want.tables[slots[i] * kStride + j];
    want.lens[i] = want.lengths[slots[i]];
  }
  std::copy(staged.begin(), staged.end(), want.staged.begin());
  std::copy(plan.begin(), plan.end(), want.plan.begin());

  Device got;
  GrowingMemory memory(256);  // small: the block grows on the way
  StepUploadBlock b = memory.block();
  b.words(words_of(got));
  std::memcpy(b.write(got.meta.data(), meta.size() * 4), meta.data(), meta.size() * 4);
  b.gather({got.tables.data(), kStride, got.lengths.data(), got.meta.data(), got.meta.data() + kBatch, got.pages.data(),
            got.lens.data()},
           kBatch);
  std::memcpy(b.write_private(got.staged.data(), staged.size() * 4), staged.data(), staged.size() * 4);
  std::memcpy(b.write_private(got.plan.data(), plan.size() * 4), plan.data(), plan.size() * 4);
  const StepUploadImage& image = b.finish();
  EXPECT_EQ(image.phases, 2);
  EXPECT_EQ(image.phase_end[1] - image.phase_end[0], 1u) << "4 sequences: one gather piece";
  EXPECT_GT(memory.grows, 0);
  carry_out(b, image);
  EXPECT_EQ(got.tables, want.tables);
  EXPECT_EQ(got.lengths, want.lengths);
  EXPECT_EQ(got.meta, want.meta);
  EXPECT_EQ(got.pages, want.pages);
  EXPECT_EQ(got.lens, want.lens);
  EXPECT_EQ(got.staged, want.staged);
  EXPECT_EQ(got.plan, want.plan);
}

// Ordered operations open a phase only where the order matters.
TEST(StepUploadBlock, PhasesOpenWhereTheOrderMattersOnly) {
  std::vector<std::byte> memory(1 << 16);
  std::vector<std::int32_t> dev(1024, 0);
  const StepGather g{dev.data(), 4, dev.data() + 100, dev.data() + 200, dev.data() + 300, dev.data() + 400,
                     dev.data() + 500};
  {
    StepUploadBlock b(memory);
    b.write(dev.data(), 16);
    b.write(dev.data() + 4, 16);  // disjoint: same phase
    const std::vector<StepWord> w = {{dev.data() + 8, 1}, {dev.data() + 9, 2}};
    b.words(w);  // disjoint from both: same phase
    EXPECT_EQ(b.phases(), 1);
    b.write(dev.data() + 9, 4);  // sets a word the list sets: after it
    EXPECT_EQ(b.phases(), 2);
    b.words(w);  // a second list is never beside another
    EXPECT_EQ(b.phases(), 3);
    b.gather(g, 3);  // reads what the writes set
    EXPECT_EQ(b.phases(), 4);
    b.gather(g, 3);  // may write what the first gather writes
    EXPECT_EQ(b.phases(), 5);
    b.write_private(dev.data() + 600, 64);  // private: into the first phase
    EXPECT_EQ(b.phases(), 5);
    b.write(dev.data() + 700, 4);  // a write after a gather
    EXPECT_EQ(b.phases(), 6);
    b.device_copy(dev.data() + 800, dev.data() + 700, 4);  // reads what the phase's write set
    EXPECT_EQ(b.phases(), 7);
    b.device_copy(dev.data() + 810, dev.data() + 700, 4);  // another read of it: same phase
    EXPECT_EQ(b.phases(), 7);
    b.write(dev.data() + 700, 4);  // overwrites what the copies read
    EXPECT_EQ(b.phases(), 8);
    b.write(dev.data() + 704, 4);
    EXPECT_EQ(b.phases(), 8);
    try {
      b.gather(g, 1);
      FAIL() << "a ninth phase";
    } catch (const std::length_error& e) {
      EXPECT_NE(std::string(e.what()).find("more than 8 phases"), std::string::npos) << e.what();
    }
  }
  {
    StepUploadBlock b(memory);
    b.gather(g, 20);  // a gather first: private writes still join its phase
    b.write_private(dev.data() + 600, 16);
    EXPECT_EQ(b.phases(), 1);
    const StepUploadImage& image = b.finish();
    EXPECT_EQ(image.phase_end[0], 4u) << "20 sequences: 3 gather pieces, then the private segment";
  }
}

// Each phase sees everything an earlier phase wrote: a chain of dependent operations, carried
// out with each phase's pieces in reverse, still ends where the sequential order ends.
TEST(StepUploadBlock, DependentOperationsLandInTheirOrder) {
  std::vector<std::int32_t> dev(64, 0), want(64, 0);
  GrowingMemory memory(64);
  StepUploadBlock b = memory.block();
  const std::int32_t first[4] = {1, 2, 3, 4}, second[2] = {9, 8};
  std::memcpy(b.write(dev.data(), 16), first, 16);
  std::memcpy(b.write(dev.data() + 1, 8), second, 8);  // over the first: later
  b.device_copy(dev.data() + 10, dev.data(), 16);       // reads both
  const std::vector<StepWord> w = {{dev.data() + 11, 77}};
  b.words(w);  // over the copy's destination: later
  carry_out(b, b.finish());
  want[0] = 1, want[1] = 9, want[2] = 8, want[3] = 4;
  want[10] = 1, want[11] = 77, want[12] = 8, want[13] = 4;
  EXPECT_EQ(dev, want);
}

TEST(StepUploadBlock, ABlockThatCannotGrowRefusesSayingWhatItWanted) {
  std::vector<std::byte> memory(64);
  std::vector<std::int32_t> dev(64);
  StepUploadBlock b(memory);
  EXPECT_NE(b.write(dev.data(), 40), nullptr);
  try {
    b.write(dev.data() + 20, 40);
    FAIL() << "48 + 40 bytes in 64";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("88 bytes wanted, the block holds 64"), std::string::npos) << e.what();
  }
  EXPECT_EQ(b.wanted(), 88u);
  // The table does not fit either: finish() refuses too.
  StepUploadBlock full(memory);
  full.write(dev.data(), 64);
  EXPECT_THROW(full.finish(), std::length_error);
  // Growing keeps what the block held: the bytes written before the growth are still there.
  GrowingMemory grows(32);
  StepUploadBlock g = grows.block();
  std::memset(g.write(dev.data(), 20), 0x5A, 20);
  std::memset(g.write(dev.data() + 8, 100), 0x33, 100);
  EXPECT_EQ(grows.grows, 1);
  EXPECT_GE(g.capacity(), 132u);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(g.data()[i], std::byte{0x5A}) << i;
  for (int i = 32; i < 132; ++i) EXPECT_EQ(g.data()[i], std::byte{0x33}) << i;
}

// The plan's staging bound to a step block: zeros then the bytes, one private segment, and no
// stream operation (the stream given is never touched: no CUDA device here).
TEST(StepUploadBlock, APlanStagingBoundToABlockRecordsItsUploadThere) {
  std::vector<std::byte> memory(4096);
  StepUploadBlock b(memory);
  HostStaging staging(&b);
  EXPECT_EQ(staging.merged(), &b);
  std::vector<std::int32_t> dev(32, -1);
  const std::int32_t items[5] = {3, 1, 4, 1, 5};
  ASSERT_EQ(upload_zeros_then(dev.data(), 12, items, sizeof items, nullptr, &staging), cudaSuccess);
  const StepUploadImage& image = b.finish();
  ASSERT_EQ(image.phases, 1);
  EXPECT_EQ(image.phase_end[0], 1u);
  carry_out(b, image);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(dev[i], 0) << i;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(dev[3 + i], items[i]) << i;
  EXPECT_EQ(dev[8], -1);
}

TEST(StepUploadBlock, BackendsWithoutAStreamRefuseToCollect) {
  std::vector<std::byte> memory(64);
  StepUploadBlock b(memory);
  for (const BackendKind kind : {BackendKind::host, BackendKind::accounting}) {
    auto backend = make_backend(kind);
    try {
      backend->collect_into(&b);
      FAIL() << backend_name(kind);
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(backend_name(kind)) + " backend cannot collect"),
                std::string::npos)
          << e.what();
    }
    backend->collect_into(nullptr);  // ending a collection that never began is fine
  }
}

}  // namespace
}  // namespace decode_bench
