#include "pools/contiguous_pool.hpp"

#include <limits>

namespace decode_bench {

ContiguousPoolConfig ContiguousPoolConfig::for_budget(const KVLayout& layout, std::uint64_t budget_bytes,
                                                      std::int64_t max_seq_len) {
  ContiguousPoolConfig c{layout, max_seq_len, 0};
  if (max_seq_len > 0 && layout.invalid_reason().empty()) {
    const std::uint64_t slots = budget_bytes / (2 * c.slab_bytes());
    c.max_seqs = static_cast<std::int32_t>(std::min<std::uint64_t>(slots, std::numeric_limits<std::int32_t>::max()));
  }
  return c;
}

std::string ContiguousPoolConfig::invalid_reason() const {
  if (auto r = layout.invalid_reason(); !r.empty()) return r;
  if (auto r = max_seq_len_invalid_reason(max_seq_len); !r.empty()) return r;
  if (max_seqs < 1) return "max_seqs must be >= 1 (got " + std::to_string(max_seqs) + "; is the budget below one slab?)";
  return {};
}

ContiguousPool::ContiguousPool(const ContiguousPoolConfig& config, std::unique_ptr<MemoryBackend> backend)
    : config_(validated_config(config, "ContiguousPool")),
      backend_(std::move(backend)),
      k_(*backend_, config_.max_seqs * config_.slab_bytes()),
      v_(*backend_, config_.max_seqs * config_.slab_bytes()),
      slot_lengths_(*backend_, config_.max_seqs * sizeof(std::int32_t)),
      lengths_(config_.max_seqs, 0),
      slots_(config_.max_seqs) {
  // Every slot's device length starts at 0 (slot_span decodes free slots as empty sequences).
  if (backend_->has_memory()) {
    const std::vector<std::int32_t> zeros(lengths_.size(), 0);
    const std::size_t bytes = slot_lengths_.bytes();
    backend_->upload(slot_lengths_.data(), bytes, zeros.data(), bytes, bytes, 1);
    backend_->synchronize();
  }
}

std::byte* ContiguousPool::slot_row(const PoolBuffer& arena, std::int32_t slot, std::int64_t t) const {
  return arena.data() + slot * config_.slab_bytes() + t * config_.layout.row_bytes();
}

void ContiguousPool::write_length(std::int32_t slot) {
  if (!backend_->has_memory()) return;
  words_.put(slot_lengths_.as<std::int32_t>() + slot, static_cast<std::int32_t>(lengths_[slot]));
}

SequenceHandle ContiguousPool::admit(const void* k, const void* v, std::int64_t len) {
  check_admit(k, v, len);
  if (slots_.full())
    throw PoolError(PoolErrorKind::OutOfSlots,
                    "admit: all " + std::to_string(config_.max_seqs) + " contiguous slots are taken");
  const std::int32_t slot = slots_.lowest_free();
  const std::size_t row = config_.layout.row_bytes();
  // Per head h: rows [0, len) of the source's (len, D) block into the slab's (max_seq_len, D) block.
  const std::size_t dst_pitch = config_.max_seq_len * row, src_pitch = len * row;
  if (k && backend_->has_memory()) {
    backend_->upload(slot_row(k_, slot, 0), dst_pitch, k, src_pitch, len * row, config_.layout.heads_kv);
    backend_->upload(slot_row(v_, slot, 0), dst_pitch, v, src_pitch, len * row, config_.layout.heads_kv);
  }
  lengths_[slot] = len;
  write_length(slot);
  return slots_.occupy(slot);
}

void ContiguousPool::append_token(SequenceHandle h, const void* k_row, const void* v_row) {
  check_data_pair(k_row, v_row, "append_token");
  const std::int32_t slot = slots_.check(h, "append_token");
  const std::int64_t t = lengths_[slot];
  if (t >= config_.max_seq_len)
    throw PoolError(PoolErrorKind::SequenceTooLong, "append_token on " + h.describe() + ": sequence is full at max_seq_len " +
                                                        std::to_string(config_.max_seq_len));
  const std::size_t row = config_.layout.row_bytes();
  if (k_row && backend_->has_memory()) {
    backend_->upload(slot_row(k_, slot, t), config_.max_seq_len * row, k_row, row, row, config_.layout.heads_kv);
    backend_->upload(slot_row(v_, slot, t), config_.max_seq_len * row, v_row, row, row, config_.layout.heads_kv);
  }
  lengths_[slot] = t + 1;
  write_length(slot);
}

void ContiguousPool::extend(SequenceHandle h, std::int64_t n) {
  const std::int32_t slot = slots_.check(h, "extend");
  if (n < 0) throw PoolError(PoolErrorKind::InvalidArgument, "extend: n must be >= 0 (got " + std::to_string(n) + ")");
  if (lengths_[slot] + n > config_.max_seq_len)
    throw PoolError(PoolErrorKind::SequenceTooLong, "extend on " + h.describe() + ": length " +
                                                        std::to_string(lengths_[slot]) + " + " + std::to_string(n) +
                                                        " exceeds max_seq_len " + std::to_string(config_.max_seq_len));
  lengths_[slot] += n;
  write_length(slot);
}

void ContiguousPool::release(SequenceHandle h) {
  const std::int32_t slot = slots_.check(h, "release");
  lengths_[slot] = 0;
  write_length(slot);  // a free slot reads as empty on the device (slot_span)
  slots_.vacate(slot);
}

SequenceHandle ContiguousPool::fork(SequenceHandle parent) {
  const std::int32_t from = slots_.check(parent, "fork");
  if (slots_.full())
    throw PoolError(PoolErrorKind::OutOfSlots,
                    "fork: all " + std::to_string(config_.max_seqs) + " contiguous slots are taken");
  const std::int32_t to = slots_.lowest_free();
  const std::size_t row = config_.layout.row_bytes(), pitch = config_.max_seq_len * row;
  const std::int64_t len = lengths_[from];
  if (backend_->has_memory()) {
    backend_->copy(slot_row(k_, to, 0), pitch, slot_row(k_, from, 0), pitch, len * row, config_.layout.heads_kv);
    backend_->copy(slot_row(v_, to, 0), pitch, slot_row(v_, from, 0), pitch, len * row, config_.layout.heads_kv);
  }
  lengths_[to] = len;
  write_length(to);
  return slots_.occupy(to);
}

std::int64_t ContiguousPool::length(SequenceHandle h) const { return lengths_[slots_.check(h, "length")]; }

void ContiguousPool::read_token(SequenceHandle h, std::int64_t t, void* k_row, void* v_row) const {
  const std::int32_t slot = slots_.check(h, "read_token");
  if (t < 0 || t >= lengths_[slot])
    throw PoolError(PoolErrorKind::InvalidArgument, "read_token on " + h.describe() + ": token " + std::to_string(t) +
                                                        " is outside [0, " + std::to_string(lengths_[slot]) + ")");
  check_has_memory("read_token");
  const std::size_t row = config_.layout.row_bytes(), pitch = config_.max_seq_len * row;
  backend_->download(k_row, row, slot_row(k_, slot, t), pitch, row, config_.layout.heads_kv);
  backend_->download(v_row, row, slot_row(v_, slot, t), pitch, row, config_.layout.heads_kv);
}

std::int32_t ContiguousPool::check_consecutive(std::span<const SequenceHandle> handles) const {
  if (handles.empty()) throw PoolError(PoolErrorKind::InvalidArgument, "batch: no sequences given");
  const std::int32_t first = slots_.check(handles[0], "batch");
  for (std::size_t i = 1; i < handles.size(); ++i)
    if (slots_.check(handles[i], "batch") != first + static_cast<std::int32_t>(i))
      throw PoolError(PoolErrorKind::InvalidArgument,
                      "batch: a contiguous batch must be consecutive slots in order; sequence " + std::to_string(i) +
                          " is " + handles[i].describe() + ", expected slot " + std::to_string(first + i));
  return first;
}

PoolStats ContiguousPool::stats() const {
  PoolStats s;
  s.sequences = slots_.live_count();
  for (std::int32_t slot = 0; slot < config_.max_seqs; ++slot)
    if (slots_.is_live(slot)) s.logical_tokens += lengths_[slot];
  s.stored_tokens = s.logical_tokens;
  s.units_total = config_.max_seqs;
  s.units_used = s.sequences;
  s.units_free = s.units_total - s.units_used;
  s.arena_bytes = 2ull * config_.max_seqs * config_.slab_bytes();
  s.bytes_reserved = 2ull * s.units_used * config_.slab_bytes();
  s.bytes_used = static_cast<std::uint64_t>(s.stored_tokens) * config_.layout.token_kv_bytes();
  s.metadata_bytes = slot_lengths_.bytes();
  return s;
}

}  // namespace decode_bench
