// Page-locked staging for a serving step's uploads: the rotation of the pool's staging slots
// (pools/staging_rotation.hpp), the trace runner's buffers by step parity (sweeps/step_parity.hpp),
// a plan's staging block (kernels/host_staging.hpp), and on the GPU that a staged upload takes its
// source at the call and lands what it took, and that the staged workspace initialisation writes
// the bytes the plain one does (kernels/staged_workspace_init.hpp).
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/pinned_buffer.hpp"
#include "harness/stream_gate.hpp"
#include "kernels/host_staging.hpp"
#include "kernels/staged_workspace_init.hpp"
#include "pools/memory_backend.hpp"
#include "pools/staging_rotation.hpp"
#include "sweeps/step_parity.hpp"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

// Slots go in turn; a slot is refilled only after its last copy was retired, and with N slots the
// copy retired before a fill is the one N fills back.
TEST(StagingRotation, SlotsGoInTurnAndOneInFlightIsNeverRefilled) {
  StagingRotation r(3);
  std::vector<std::int64_t> filled_at(3, -1);
  for (std::int64_t use = 0; use < 20; ++use) {
    const int slot = r.next();
    EXPECT_EQ(slot, use % 3);
    if (use >= 3) {
      EXPECT_TRUE(r.in_flight(slot)) << "never retired since use " << filled_at[slot];
      EXPECT_EQ(filled_at[slot], use - 3) << "the copy waited for is three uses back";
      EXPECT_THROW(r.fill(slot), std::logic_error) << "refilled while its copy may still read it";
    } else {
      EXPECT_FALSE(r.in_flight(slot));
    }
    r.retired(slot);
    r.fill(slot);
    filled_at[slot] = use;
  }
  EXPECT_EQ(r.uses(), 20);
  EXPECT_EQ(r.waits(), 17) << "every fill after the first round waited for one fence";
}

TEST(StagingRotation, OutOfTurnFillsAreRefused) {
  StagingRotation r(2);
  EXPECT_THROW(r.fill(1), std::logic_error);
  r.fill(0);
  EXPECT_THROW(r.fill(0), std::logic_error);
  r.fill(1);
  EXPECT_EQ(r.next(), 0);
}

// A slot inserted where the slot in turn is still in flight takes that place in the order: it is
// filled now, and the slots after it keep their order, so the in-flight one comes next (its fence
// the oldest); the ring grows by the copies queued, and no fill ever reuses a slot in flight.
TEST(StagingRotation, InsertingInsteadOfWaitingKeepsTheOrder) {
  StagingRotation r(2);
  std::vector<int> owner;  // owner[slot]: the use that filled it last, in slot order
  for (int use = 0; use < 2; ++use) {
    r.fill(r.next());
    owner.push_back(use);
  }
  // Uses 2..6 while uses 0 and 1 stay queued: each finds the oldest in flight and inserts before it.
  for (int use = 2; use < 7; ++use) {
    const int at = r.next();
    ASSERT_TRUE(r.in_flight(at));
    EXPECT_EQ(owner[static_cast<std::size_t>(at)], 0) << "the slot in turn holds the oldest queued copy";
    EXPECT_THROW(r.fill(at), std::logic_error);
    const int slot = r.insert();
    EXPECT_EQ(slot, at);
    owner.insert(owner.begin() + slot, use);
    r.fill(slot);
  }
  EXPECT_EQ(r.slots(), 7);
  EXPECT_EQ(r.inserts(), 5);
  // Every copy done: the slots come round in fill order, each retired before its refill.
  for (int use = 7; use < 21; ++use) {
    const int slot = r.next();
    EXPECT_EQ(owner[static_cast<std::size_t>(slot)], use - 7) << "seven uses back";
    r.retired(slot);
    r.fill(slot);
    owner[static_cast<std::size_t>(slot)] = use;
  }
  EXPECT_EQ(r.slots(), 7);
}

// The runner's orders: serial (each step completed before the next begins) and host_overlap (step
// s begins after step s - 2 completed, step s - 1 still in flight). Two steps in flight would
// refill the buffers of the step before the previous one: refused.
TEST(StepParityGuard, SerialAndOneStepInFlightPassTwoInFlightIsRefused) {
  sweeps::StepParityGuard serial;
  for (std::int64_t s = 0; s < 10; ++s) {
    serial.begin(s);
    serial.completed(s);
  }
  sweeps::StepParityGuard overlap;
  overlap.begin(0);
  for (std::int64_t s = 1; s < 10; ++s) {
    overlap.begin(s);        // step s's host work while step s - 1's decode runs
    overlap.completed(s - 1);  // then the runner waits for step s - 1's stop event
  }
  overlap.completed(9);
  sweeps::StepParityGuard deep;
  deep.begin(0);
  deep.begin(1);
  EXPECT_FALSE(deep.may_begin(2));
  EXPECT_THROW(deep.begin(2), std::logic_error) << "step 0 may still read parity 0's buffers";
  deep.completed(1);  // the other parity's completion does not free parity 0
  EXPECT_THROW(deep.begin(2), std::logic_error);
  deep.completed(0);
  EXPECT_TRUE(deep.may_begin(2));
  deep.begin(2);
}

// Steps without a batch leave their parity's buffers alone: a step begins after the last one that
// filled the same parity completed, however many steps lie between.
TEST(StepParityGuard, GapsAndOrderErrors) {
  sweeps::StepParityGuard g;
  g.begin(0);
  g.begin(3);
  EXPECT_THROW(g.begin(4), std::logic_error) << "parity 0 last filled by step 0, not known done";
  g.completed(0);
  g.begin(4);
  EXPECT_THROW(g.begin(4), std::logic_error) << "a step begins once";
  EXPECT_THROW(g.begin(2), std::logic_error) << "steps begin in order";
  EXPECT_THROW(g.completed(7), std::logic_error) << "completed before it began";
  g.completed(3);
  g.completed(4);
  g.begin(5);
  g.begin(6);
}

// A plan's block: 16-byte aligned pieces while they fit; a piece that does not fit is refused and
// counted, so the owner can grow the block for the next plan.
TEST(HostStaging, PiecesAreAlignedAndAShortBlockTellsWhatItWanted) {
  std::vector<std::byte> memory(256);
  HostStaging s(memory.data(), 100);
  std::byte* a = static_cast<std::byte*>(s.take(10));
  std::byte* b = static_cast<std::byte*>(s.take(40));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a, memory.data());
  EXPECT_EQ(b, memory.data() + 16);
  EXPECT_EQ(s.wanted(), 56u);
  EXPECT_EQ(s.take(50), nullptr) << "64 + 50 > 100";
  EXPECT_EQ(s.wanted(), 114u);
  s.reset();
  EXPECT_EQ(s.wanted(), 0u);
  EXPECT_EQ(s.take(100), memory.data());
  HostStaging none;
  EXPECT_EQ(none.take(1), nullptr);
  EXPECT_EQ(none.wanted(), 1u);
}

std::vector<std::int32_t> read_words(const std::int32_t* device, std::size_t n) {
  std::vector<std::int32_t> out(n);
  DB_CUDA_CHECK(cudaMemcpy(out.data(), device, n * sizeof(std::int32_t), cudaMemcpyDeviceToHost));
  return out;
}

// The device backend's staged uploads and words while the stream is held (the copies cannot run
// yet): each takes its source at the call, so the caller's buffer, rewritten right after, does not
// change what lands; then more uploads than staging slots, each slot's copy done before reuse.
TEST(StagedUploadGpu, UploadsAndWordsTakeTheirSourceAtTheCall) {
  DB_REQUIRE_GPU();
  auto backend = make_device_backend();
  PoolBuffer dst(*backend, 64 * sizeof(std::int32_t));
  std::int32_t* d = dst.as<std::int32_t>();
  DB_CUDA_CHECK(cudaMemsetAsync(d, 0xFF, dst.bytes(), backend->stream()));
  StreamGate gate;
  DB_CUDA_CHECK(gate.hold(backend->stream()));
  std::vector<std::int32_t> src(4);
  for (int i = 0; i < 2; ++i) {  // two uploads and a word list: three of the four slots
    for (int j = 0; j < 4; ++j) src[j] = 100 * i + j;
    backend->upload(d + 4 * i, 16, src.data(), 16, 16, 1);
    std::fill(src.begin(), src.end(), -7);  // the caller reuses its buffer at once
  }
  std::vector<WordWrite> words = {{d + 20, 5}, {d + 22, 6}};
  backend->write_words(words);
  words[0].value = -9;
  gate.release();
  backend->synchronize();
  const std::vector<std::int32_t> got = read_words(d, 24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_EQ(got[4 * i + j], 100 * i + j);
  EXPECT_EQ(got[20], 5);
  EXPECT_EQ(got[21], -1);
  EXPECT_EQ(got[22], 6);

  for (int i = 0; i < 48; ++i) {  // twelve rounds of the slots, one word each
    const std::int32_t v = 1000 + i;
    backend->upload(d + 16 + i % 48, 4, &v, 4, 4, 1);
  }
  backend->synchronize();
  const std::vector<std::int32_t> after = read_words(d + 16, 48);
  for (int i = 0; i < 48; ++i) EXPECT_EQ(after[i], 1000 + i) << i;
}

// upload_zeros_then: zeros then the bytes, through a staging block (one copy) or, where it is
// short, a memset and a copy from the source: the same device bytes either way.
TEST(StagedUploadGpu, ZerosThenBytesLandTheSameStagedOrNot) {
  DB_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  DB_CUDA_CHECK(cudaStreamCreate(&stream));
  const std::vector<std::int32_t> items = {3, 1, 4, 1, 5, 9, 2, 6};
  PinnedBuffer<std::byte> pinned(4096);
  for (const std::size_t capacity : {std::size_t{4096}, std::size_t{16}}) {
    SCOPED_TRACE(capacity);
    DeviceBuffer<std::int32_t> dst(20);
    DB_CUDA_CHECK(cudaMemset(dst.get(), 0xFF, dst.bytes()));
    HostStaging staging(pinned.get(), capacity);
    DB_CUDA_CHECK(upload_zeros_then(dst.get(), 12 * sizeof(std::int32_t), items.data(),
                                    items.size() * sizeof(std::int32_t), stream, &staging));
    EXPECT_EQ(staging.wanted(), 20 * sizeof(std::int32_t));
    DB_CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<std::int32_t> got = read_words(dst.get(), 20);
    for (int i = 0; i < 12; ++i) EXPECT_EQ(got[i], 0) << i;
    for (int i = 0; i < 8; ++i) EXPECT_EQ(got[12 + i], items[i]) << i;
  }
  DB_CUDA_CHECK(cudaStreamDestroy(stream));
}

std::vector<std::uint8_t> read_bytes(const void* device, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  DB_CUDA_CHECK(cudaMemcpy(out.data(), device, n, cudaMemcpyDeviceToHost));
  return out;
}

// Hand-made plans (the initialisation reads only their layout fields and lists): a work-list row
// attention plan, a CUDA-core decode plan with work items, and a shared-prefix plan holding both
// after its metadata. Each initialised plainly and staged into a workspace poisoned with 0xFF: the
// same bytes everywhere (counters zero, lists in place, the rest untouched), staged in a block
// large enough and in one too small (then it falls back to the plain copies).
TEST(StagedUploadGpu, StagedWorkspaceInitWritesThePlainBytes) {
  DB_REQUIRE_GPU();
  cudaStream_t stream = nullptr;
  DB_CUDA_CHECK(cudaStreamCreate(&stream));
  RowAttentionPlan rows;
  rows.workspace_init_bytes = 512;
  for (std::int32_t i = 0; i < 37; ++i) rows.work_entries.push_back({i, i % 3, 3, 7 * i, 16 * i, 16 * i + 9, {0, 0}});
  rows.workspace_bytes = rows.workspace_init_bytes + row_work_entries_bytes(rows) + 1024;
  DecodePlan decode;
  decode.kernel = DecodeKernel::flash_decode;
  decode.path = DecodePath::cuda_core;
  decode.workspace_init_bytes = 256;
  for (std::int32_t i = 0; i < 21; ++i) decode.work_items.push_back({i, i % 2, 2, 5 * i});
  decode.workspace_bytes = decode.workspace_init_bytes + decode.work_items.size() * sizeof(DecodeWorkItem) + 512;
  SharedPrefixPlan sp;
  sp.has_prefix = true;
  sp.prefix = rows;
  sp.suffix = decode;
  sp.metadata.resize(300);
  for (std::size_t i = 0; i < sp.metadata.size(); ++i) sp.metadata[i] = static_cast<std::byte>(i * 7 + 1);
  sp.prefix_ws_offset = 1024;
  sp.suffix_ws_offset = sp.prefix_ws_offset + rows.workspace_bytes;
  sp.workspace_bytes = sp.suffix_ws_offset + decode.workspace_bytes;

  PinnedBuffer<std::byte> pinned(std::size_t{1} << 16);
  const auto check = [&](std::size_t bytes, auto plain, auto staged) {
    DeviceBuffer<std::uint8_t> a(bytes), b(bytes);
    DB_CUDA_CHECK(cudaMemset(a.get(), 0xFF, bytes));
    DB_CUDA_CHECK(cudaMemset(b.get(), 0xFF, bytes));
    DB_CUDA_CHECK(plain(a.get()));
    for (const std::size_t capacity : {pinned.bytes(), std::size_t{64}}) {
      SCOPED_TRACE(capacity);
      DB_CUDA_CHECK(cudaMemset(b.get(), 0xFF, bytes));
      HostStaging staging(pinned.get(), capacity);
      DB_CUDA_CHECK(staged(b.get(), &staging));
      DB_CUDA_CHECK(cudaStreamSynchronize(stream));
      const std::vector<std::uint8_t> want = read_bytes(a.get(), bytes), got = read_bytes(b.get(), bytes);
      EXPECT_EQ(want, got);
      EXPECT_NE(std::count(want.begin(), want.end(), std::uint8_t{0xFF}), static_cast<std::ptrdiff_t>(bytes))
          << "the plain initialisation wrote something";
    }
  };
  check(
      rows.workspace_bytes, [&](void* ws) { return init_row_attention_workspace(rows, ws, stream); },
      [&](void* ws, HostStaging* s) { return init_row_attention_workspace_staged(rows, ws, stream, s); });
  check(
      decode.workspace_bytes, [&](void* ws) { return init_decode_workspace(decode, ws, stream); },
      [&](void* ws, HostStaging* s) { return init_decode_workspace_staged(decode, ws, stream, s); });
  check(
      sp.workspace_bytes, [&](void* ws) { return init_shared_prefix_workspace(sp, ws, stream); },
      [&](void* ws, HostStaging* s) { return init_shared_prefix_workspace_staged(sp, ws, stream, s); });
  DB_CUDA_CHECK(cudaStreamDestroy(stream));
}

}  // namespace
}  // namespace decode_bench
