#pragma once
// ContiguousPool: one allocation of max_seqs slabs of max_seq_len tokens each.
//   K, V arenas: (max_seqs, H_kv, max_seq_len, D)    slot_lengths: (max_seqs) int32
// A sequence reserves a whole slab on admit whatever its length, so capacity is
// budget / (2 * H_kv * max_seq_len * D * bytes) and halves when max_seq_len doubles.
#include <memory>

#include "kernels/kv_accessor.hpp"
#include "pools/deferred_words.hpp"
#include "pools/kv_pool.hpp"
#include "pools/slot_registry.hpp"

namespace decode_bench {

struct ContiguousPoolConfig {
  KVLayout layout;
  std::int64_t max_seq_len = 0;
  std::int32_t max_seqs = 0;

  std::size_t slab_bytes() const { return layout.token_bytes() * static_cast<std::size_t>(max_seq_len); }  // K or V
  // As many slabs as fit in budget_bytes of K + V.
  static ContiguousPoolConfig for_budget(const KVLayout& layout, std::uint64_t budget_bytes, std::int64_t max_seq_len);
  std::string invalid_reason() const;
};

class ContiguousPool final : public KVPool {
 public:
  ContiguousPool(const ContiguousPoolConfig& config, std::unique_ptr<MemoryBackend> backend);

  SequenceHandle admit(const void* k, const void* v, std::int64_t len) override;
  void append_token(SequenceHandle h, const void* k_row, const void* v_row) override;
  void extend(SequenceHandle h, std::int64_t n) override;
  void release(SequenceHandle h) override;
  SequenceHandle fork(SequenceHandle parent) override;
  std::int64_t length(SequenceHandle h) const override;
  void read_token(SequenceHandle h, std::int64_t t, void* k_row, void* v_row) const override;
  PoolStats stats() const override;
  std::int64_t max_seq_len() const override { return config_.max_seq_len; }
  const KVLayout& layout() const override { return config_.layout; }
  MemoryBackend& backend() const override { return *backend_; }
  const ContiguousPoolConfig& config() const { return config_; }
  std::int32_t slot_of(SequenceHandle h) const { return slots_.check(h, "slot_of"); }
  // Whether every slot is taken (admit would throw OutOfSlots).
  bool slots_full() const { return slots_.full(); }

  using KVPool::admit;
  using KVPool::append_token;

  // Deferred length words (pools/deferred_words.hpp), as PagedPool's: set together when a view
  // is next handed out (accessor, batch, slot_span) or at flush_metadata().
  void defer_metadata_writes(bool on) { words_.set_deferred(on); }
  void flush_metadata() const { words_.flush(); }
  const DeferredWords& metadata_writes() const { return words_; }

  // One sequence as sequence 0 of a ContiguousKV.
  template <class T>
  ContiguousKV<T> accessor(SequenceHandle h) const {
    check_dtype<T>("accessor");
    check_has_memory("accessor");
    const std::int32_t slot = slots_.check(h, "accessor");
    words_.flush();
    return typed_view<T>(slot);
  }
  // A batch of sequences in consecutive slots, in slot order (ContiguousKV has no slot map, so
  // batch index i must be slot first + i). Sequences admitted in order into an empty pool are.
  template <class T>
  BatchView<ContiguousKV<T>> batch(std::span<const SequenceHandle> handles) const {
    check_dtype<T>("batch");
    check_has_memory("batch");
    BatchView<ContiguousKV<T>> out;
    const std::int32_t first = check_consecutive(handles);
    words_.flush();
    out.kv = typed_view<T>(first);
    out.seq_lens_device = slot_lengths_.as<std::int32_t>() + first;
    out.num_seqs = static_cast<int>(handles.size());
    for (const auto& h : handles) {
      out.lengths_host.push_back(static_cast<std::int32_t>(lengths_[h.slot]));
      out.max_len = std::max<std::int64_t>(out.max_len, lengths_[h.slot]);
    }
    return out;
  }
  // Slots [first, first + count) as one batch, free slots included with length 0: how a
  // contiguous-slab server decodes when continuous batching leaves free slots between its
  // sequences (ContiguousKV has no slot map; a free slot's length is 0 on the device too).
  template <class T>
  BatchView<ContiguousKV<T>> slot_span(std::int32_t first, std::int32_t count) const {
    check_dtype<T>("slot_span");
    check_has_memory("slot_span");
    if (first < 0 || count < 1 || first + static_cast<std::int64_t>(count) > config_.max_seqs)
      throw PoolError(PoolErrorKind::InvalidArgument, "slot_span: slots [" + std::to_string(first) + ", " +
                                                          std::to_string(first + static_cast<std::int64_t>(count)) +
                                                          ") are not within the pool's " +
                                                          std::to_string(config_.max_seqs));
    words_.flush();
    BatchView<ContiguousKV<T>> out;
    out.kv = typed_view<T>(first);
    out.seq_lens_device = slot_lengths_.as<std::int32_t>() + first;
    out.num_seqs = count;
    for (std::int32_t s = first; s < first + count; ++s) {
      out.lengths_host.push_back(static_cast<std::int32_t>(lengths_[s]));
      out.max_len = std::max<std::int64_t>(out.max_len, lengths_[s]);
    }
    return out;
  }

 private:
  template <class T>
  ContiguousKV<T> typed_view(std::int32_t slot) const {
    const std::size_t offset = slot * config_.slab_bytes();
    return ContiguousKV<T>::make(reinterpret_cast<const T*>(k_.data() + offset),
                                 reinterpret_cast<const T*>(v_.data() + offset), config_.layout.heads_kv,
                                 config_.max_seq_len, config_.layout.head_dim);
  }
  std::int32_t check_consecutive(std::span<const SequenceHandle> handles) const;
  std::byte* slot_row(const PoolBuffer& arena, std::int32_t slot, std::int64_t t) const;
  void write_length(std::int32_t slot);

  ContiguousPoolConfig config_;
  std::unique_ptr<MemoryBackend> backend_;
  PoolBuffer k_, v_;           // (max_seqs, H_kv, max_seq_len, D) each
  PoolBuffer slot_lengths_;    // (max_seqs) int32, mirrored from lengths_
  std::vector<std::int64_t> lengths_;
  SlotRegistry slots_;
  mutable DeferredWords words_{*backend_};
};

}  // namespace decode_bench
