#pragma once
// One serving step's host -> device uploads merged into one page-locked block: the pool's
// metadata words, its small uploads (a batch's slots and indptr), its block-table gather, the
// trace's staged rows and the plan's work lists are recorded here instead of enqueued one by one,
// and the block's owner (kernels/step_uploads.hpp) moves the whole block with one
// cudaMemcpyAsync and carries every operation out with one kernel launch. Each separate copy or
// launch costs the stream a few microseconds after the decode in flight ends; merged, the GPU
// waits for two operations instead of a dozen (docs/pools.md, "Serving traces on the GPU").
//
// What the block records, in the order the caller asks (host side only: no CUDA here, so the
// layout is tested on the host):
//   write(dst, n)          n bytes for device address dst, filled by the caller through the
//                          returned host pointer; ordered after every operation recorded before.
//   write_private(dst, n)  the same, for memory no other operation of the block reads or writes
//                          (the plan's workspace, the trace's staged rows): not ordered, so it
//                          never costs a phase.
//   words(list)            each word's value into its destination (distinct destinations).
//   device_copy(dst, src)  device memory -> device memory (a page's copy-on-write).
//   gather(g, n)           a batch's block-table rows into its CSR (MemoryBackend::
//                          gather_block_tables), reading what the operations before it wrote.
// The kernel runs the operations in phases: within a phase in any order and in parallel, a
// phase after the previous one has finished (a grid-wide barrier, or a launch per phase where a
// cooperative launch is not available). An ordered operation opens a new phase only where it
// must: a write after a gather, a gather after a write, and a write whose destination overlaps a
// write (or a copy's source) already in the phase. A step of the trace is two phases: the words,
// the slots and indptr and the private segments, then the gather.
//
// Layout: the payload (segments, word lists, gather arguments; each 16-byte aligned) from the
// block's start, then, at finish(), the operation table by phase. Each operation is a piece one
// thread block of the kernel carries out: at most kStepCopyPieceBytes of a copy, kStepWordsPerPiece
// words, or kStepGatherSequencesPerPiece sequences of a gather.
//
// A block too small for what it is asked grows through the owner's callback (which copies what the
// block holds into the new memory); without one it refuses with std::length_error saying how many
// bytes it wanted. Host pointers handed out are valid until the next call that adds to the block.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace decode_bench {

inline constexpr int kStepUploadMaxPhases = 8;
inline constexpr std::size_t kStepUploadAlign = 16;
inline constexpr std::uint32_t kStepCopyPieceBytes = 4096;  // 256 threads x 16 bytes
inline constexpr std::uint32_t kStepWordsPerPiece = 1024;
inline constexpr std::uint32_t kStepGatherSequencesPerPiece = 8;  // one warp a sequence

enum class StepUploadKind : std::uint32_t { copy_staged = 1, copy_device = 2, words = 3, gather = 4 };

// One 4-byte word to set (the layout of MemoryBackend's WordWrite).
struct StepWord {
  std::int32_t* dst = nullptr;
  std::int32_t value = 0;
};

// A block-table gather's arguments, as MemoryBackend::gather_block_tables takes them:
//   out_pages[indptr[i] + j] = tables[slots[i] * row_stride + j],  out_lens[i] = slot_lengths[slots[i]]
struct StepGather {
  const std::int32_t* tables = nullptr;
  std::int64_t row_stride = 0;
  const std::int32_t* slot_lengths = nullptr;
  const std::int32_t* slots = nullptr;
  const std::int32_t* indptr = nullptr;
  std::int32_t* out_pages = nullptr;
  std::int32_t* out_lens = nullptr;
};

// One piece of work for one thread block.
//   copy_staged: count bytes from block offset src to device address dst
//   copy_device: count bytes from device address src to device address dst
//   words:       count StepWords from block offset src
//   gather:      count sequences from sequence dst on, the StepGather at block offset src
struct StepUploadOp {
  std::uint32_t kind = 0;
  std::uint32_t count = 0;
  std::uint64_t src = 0;
  std::uint64_t dst = 0;
};

// A finished block: what the one copy moves and what the launch needs.
struct StepUploadImage {
  std::size_t bytes = 0;       // payload, then the operation table
  std::size_t ops_offset = 0;  // where the table starts (16-byte aligned)
  int phases = 0;
  std::uint32_t phase_end[kStepUploadMaxPhases] = {};  // one past each phase's last operation
  std::uint32_t widest_phase = 0;                       // operations in the largest phase
};

class StepUploadBlock {
 public:
  // Grow(bytes, held): new memory of at least `bytes`, holding a copy of `held` at its start; the
  // owner may free the old memory once it has copied it.
  using Grow = std::function<std::span<std::byte>(std::size_t bytes, std::span<const std::byte> held)>;

  StepUploadBlock() = default;
  explicit StepUploadBlock(std::span<std::byte> memory, Grow grow = {});

  // Empties the block (its memory's last copy must be done: the owner's rule).
  void reset();
  // Empties it onto other memory (wanted() is kept).
  void reset(std::span<std::byte> memory, Grow grow);

  void* write(void* dst, std::size_t bytes);
  void* write_private(void* dst, std::size_t bytes);
  void words(std::span<const StepWord> words);
  void device_copy(void* dst, const void* src, std::size_t bytes);
  void gather(const StepGather& g, int sequences);

  // Appends the operation table; nothing may be added until reset().
  const StepUploadImage& finish();

  bool empty() const { return ops_ == 0; }
  bool finished() const { return finished_; }
  int phases() const { return phase_count_; }
  std::size_t ops() const { return ops_; }
  // The block's memory (the copy's source once finished) and its capacity.
  const std::byte* data() const { return memory_.data(); }
  std::size_t capacity() const { return memory_.size(); }
  // The most bytes any finished (or refused) block needed since construction: the size an owner
  // gives the next block so that it need not grow.
  std::size_t wanted() const { return wanted_; }

 private:
  struct Range {
    std::uintptr_t begin = 0, end = 0;
  };
  struct Phase {
    std::vector<StepUploadOp> ops;
    std::vector<Range> writes;  // ordered writes' destinations (segments, device copies)
    std::vector<Range> reads;   // device copies' sources
    std::vector<std::pair<std::size_t, std::size_t>> word_lists;  // (block offset, count)
    bool gathers = false;
    bool ordered_writes = false;
  };

  // `bytes` of payload, 16-byte aligned: its offset. Grows, or throws std::length_error.
  std::size_t reserve(std::size_t bytes);
  void ensure(std::size_t bytes);
  void check_open(const char* what) const;
  Phase& open_phase();
  // The phase an ordered write of [begin, end) (a copy's source `read`, if any) goes into.
  Phase& phase_for_write(Range dst, const Range* read);
  // Whether r meets a write of the phase (a word, a segment, a copy's destination), or with_reads,
  // a copy's source.
  bool overlaps(const Phase& p, Range r, bool with_reads) const;
  void add_copy(Phase& p, StepUploadKind kind, std::uint64_t src, std::uintptr_t dst, std::size_t bytes);

  std::span<std::byte> memory_;
  Grow grow_;
  std::size_t used_ = 0, wanted_ = 0, ops_ = 0;
  std::vector<Phase> phases_;  // the first phase_count_ in use (kept from block to block: their capacity)
  int phase_count_ = 0;
  bool finished_ = false;
  StepUploadImage image_;
};

}  // namespace decode_bench
