#include "kernels/step_upload_block.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace decode_bench {
namespace {

std::size_t aligned(std::size_t at) { return (at + kStepUploadAlign - 1) / kStepUploadAlign * kStepUploadAlign; }

bool intersect(std::uintptr_t a0, std::uintptr_t a1, std::uintptr_t b0, std::uintptr_t b1) {
  return a0 < b1 && b0 < a1;
}

}  // namespace

StepUploadBlock::StepUploadBlock(std::span<std::byte> memory, Grow grow) : memory_(memory), grow_(std::move(grow)) {}

void StepUploadBlock::reset() {
  used_ = 0;
  ops_ = 0;
  for (int p = 0; p < phase_count_; ++p) {
    Phase& phase = phases_[static_cast<std::size_t>(p)];
    phase.ops.clear();
    phase.writes.clear();
    phase.reads.clear();
    phase.word_lists.clear();
    phase.gathers = phase.ordered_writes = false;
  }
  phase_count_ = 0;
  finished_ = false;
  image_ = StepUploadImage{};
}

void StepUploadBlock::reset(std::span<std::byte> memory, Grow grow) {
  reset();
  memory_ = memory;
  grow_ = std::move(grow);
}

void StepUploadBlock::check_open(const char* what) const {
  if (finished_)
    throw std::logic_error(std::string("step upload block: ") + what + " after finish() (reset the block first)");
}

void StepUploadBlock::ensure(std::size_t bytes) {
  if (bytes <= memory_.size()) return;
  wanted_ = std::max(wanted_, bytes);
  if (!grow_)
    throw std::length_error("step upload block: " + std::to_string(bytes) + " bytes wanted, the block holds " +
                            std::to_string(memory_.size()) + " and cannot grow");
  const std::span<std::byte> grown = grow_(bytes, std::span<const std::byte>(memory_.data(), used_));
  if (grown.size() < bytes)
    throw std::length_error("step upload block: grown to " + std::to_string(grown.size()) + " bytes, " +
                            std::to_string(bytes) + " wanted");
  memory_ = grown;
}

std::size_t StepUploadBlock::reserve(std::size_t bytes) {
  const std::size_t at = aligned(used_);
  ensure(at + bytes);
  used_ = at + bytes;
  return at;
}

StepUploadBlock::Phase& StepUploadBlock::open_phase() {
  if (phase_count_ == kStepUploadMaxPhases)
    throw std::length_error("step upload block: more than " + std::to_string(kStepUploadMaxPhases) +
                            " phases (each gather after a write, each write after a gather or over an earlier "
                            "write opens one)");
  if (static_cast<std::size_t>(phase_count_) == phases_.size()) phases_.emplace_back();
  return phases_[static_cast<std::size_t>(phase_count_++)];
}

bool StepUploadBlock::overlaps(const Phase& p, Range r, bool with_reads) const {
  for (const Range& w : p.writes)
    if (intersect(w.begin, w.end, r.begin, r.end)) return true;
  for (const Range& w : p.reads)
    if (with_reads && intersect(w.begin, w.end, r.begin, r.end)) return true;
  for (const auto& [offset, count] : p.word_lists) {
    const auto* list = reinterpret_cast<const StepWord*>(memory_.data() + offset);
    for (std::size_t i = 0; i < count; ++i) {
      const auto at = reinterpret_cast<std::uintptr_t>(list[i].dst);
      if (intersect(at, at + sizeof(std::int32_t), r.begin, r.end)) return true;
    }
  }
  return false;
}

StepUploadBlock::Phase& StepUploadBlock::phase_for_write(Range dst, const Range* read) {
  if (phase_count_ == 0) return open_phase();
  Phase& last = phases_[static_cast<std::size_t>(phase_count_ - 1)];
  // A copy's source may be read alongside other reads, not alongside a write to it.
  const bool clash = last.gathers || overlaps(last, dst, true) || (read && overlaps(last, *read, false));
  return clash ? open_phase() : last;
}

void StepUploadBlock::add_copy(Phase& p, StepUploadKind kind, std::uint64_t src, std::uintptr_t dst,
                               std::size_t bytes) {
  for (std::size_t off = 0; off < bytes; off += kStepCopyPieceBytes) {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(kStepCopyPieceBytes, bytes - off));
    p.ops.push_back({static_cast<std::uint32_t>(kind), n, src + off, static_cast<std::uint64_t>(dst + off)});
    ++ops_;
  }
}

void* StepUploadBlock::write(void* dst, std::size_t bytes) {
  check_open("write");
  if (bytes == 0) return nullptr;
  const std::size_t at = reserve(bytes);
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  Phase& p = phase_for_write({d, d + bytes}, nullptr);
  p.writes.push_back({d, d + bytes});
  p.ordered_writes = true;
  add_copy(p, StepUploadKind::copy_staged, at, d, bytes);
  return memory_.data() + at;
}

void* StepUploadBlock::write_private(void* dst, std::size_t bytes) {
  check_open("write_private");
  if (bytes == 0) return nullptr;
  const std::size_t at = reserve(bytes);
  Phase& p = phase_count_ == 0 ? open_phase() : phases_[0];
  add_copy(p, StepUploadKind::copy_staged, at, reinterpret_cast<std::uintptr_t>(dst), bytes);
  return memory_.data() + at;
}

void StepUploadBlock::words(std::span<const StepWord> words) {
  check_open("words");
  if (words.empty()) return;
  const std::size_t at = reserve(words.size() * sizeof(StepWord));
  std::memcpy(memory_.data() + at, words.data(), words.size() * sizeof(StepWord));
  Phase* p = nullptr;
  if (phase_count_ > 0) {
    Phase& last = phases_[static_cast<std::size_t>(phase_count_ - 1)];
    // A second word list in one phase could set a word the first sets: a phase of its own.
    bool clash = last.gathers || !last.word_lists.empty();
    for (std::size_t i = 0; !clash && i < words.size(); ++i) {
      const auto w = reinterpret_cast<std::uintptr_t>(words[i].dst);
      clash = overlaps(last, {w, w + sizeof(std::int32_t)}, true);
    }
    if (!clash) p = &last;
  }
  if (!p) p = &open_phase();
  p->word_lists.emplace_back(at, words.size());
  p->ordered_writes = true;
  for (std::size_t i = 0; i < words.size(); i += kStepWordsPerPiece) {
    const auto n = static_cast<std::uint32_t>(std::min<std::size_t>(kStepWordsPerPiece, words.size() - i));
    p->ops.push_back({static_cast<std::uint32_t>(StepUploadKind::words), n, at + i * sizeof(StepWord), 0});
    ++ops_;
  }
}

void StepUploadBlock::device_copy(void* dst, const void* src, std::size_t bytes) {
  check_open("device_copy");
  if (bytes == 0) return;
  const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
  const Range read{s, s + bytes};
  Phase& p = phase_for_write({d, d + bytes}, &read);
  p.writes.push_back({d, d + bytes});
  p.reads.push_back(read);
  p.ordered_writes = true;
  add_copy(p, StepUploadKind::copy_device, s, d, bytes);
}

void StepUploadBlock::gather(const StepGather& g, int sequences) {
  check_open("gather");
  if (sequences <= 0) return;
  const std::size_t at = reserve(sizeof(StepGather));
  std::memcpy(memory_.data() + at, &g, sizeof g);
  Phase* p = nullptr;
  if (phase_count_ > 0) {
    Phase& last = phases_[static_cast<std::size_t>(phase_count_ - 1)];
    // It reads what the writes before it set; two gathers may write the same batch buffers.
    if (!last.ordered_writes && !last.gathers) p = &last;
  }
  if (!p) p = &open_phase();
  p->gathers = true;
  for (int first = 0; first < sequences; first += static_cast<int>(kStepGatherSequencesPerPiece)) {
    const auto n = static_cast<std::uint32_t>(std::min<int>(static_cast<int>(kStepGatherSequencesPerPiece),
                                                            sequences - first));
    p->ops.push_back({static_cast<std::uint32_t>(StepUploadKind::gather), n, at, static_cast<std::uint64_t>(first)});
    ++ops_;
  }
}

const StepUploadImage& StepUploadBlock::finish() {
  if (finished_) return image_;
  const std::size_t table = aligned(used_);
  const std::size_t total = table + ops_ * sizeof(StepUploadOp);
  ensure(total);
  auto* out = reinterpret_cast<StepUploadOp*>(memory_.data() + table);
  StepUploadImage image;
  image.ops_offset = table;
  image.bytes = ops_ == 0 ? 0 : total;
  image.phases = phase_count_;
  std::uint32_t n = 0;
  for (int p = 0; p < phase_count_; ++p) {
    const std::vector<StepUploadOp>& ops = phases_[static_cast<std::size_t>(p)].ops;
    if (!ops.empty()) std::memcpy(out + n, ops.data(), ops.size() * sizeof(StepUploadOp));
    n += static_cast<std::uint32_t>(ops.size());
    image.phase_end[p] = n;
    image.widest_phase = std::max(image.widest_phase, static_cast<std::uint32_t>(ops.size()));
  }
  used_ = total;
  wanted_ = std::max(wanted_, total);
  image_ = image;
  finished_ = true;
  return image_;
}

}  // namespace decode_bench
