#pragma once
// PagedPool: an arena of fixed-size pages, a free list, refcounted pages and per-sequence block
// tables that live in pool memory and are updated one entry at a time.
//   K, V arenas:  (num_pages, H_kv, page_size, D)
//   tables:       (max_seqs, max_pages_per_seq) int32   row s = slot s's pages in token order
//   slot_indptr:  (max_seqs, 2) int32 = {0, pages of slot s}, so a row is a one-sequence CSR
//   slot_lengths: (max_seqs) int32
// A new page costs one 4-byte table write (plus the indptr and length words) on the pool's
// stream; nothing copies a whole table per decode (the seed's per-decode cudaMemcpy was part
// of its 1.79x paged overhead).
//
// Copy-on-write: fork shares every page of the parent (refcount + 1). A write into a page with
// refcount > 1 first copies that page to a fresh one for the writer. Only a partly filled tail
// page is ever written, so full shared pages stay shared for good and the first append after a
// fork copies at most one page per sequence.
#include <memory>
#include <span>

#include "kernels/kv_accessor.hpp"
#include "pools/deferred_words.hpp"
#include "pools/kv_pool.hpp"
#include "pools/page_allocator.hpp"
#include "pools/slot_registry.hpp"

namespace decode_bench {

struct PagedPoolConfig {
  KVLayout layout;
  int page_size = 16;
  std::int32_t num_pages = 0;
  std::int64_t max_seq_len = 0;
  std::int32_t max_seqs = 0;
  PageOrder page_order = PageOrder::sequential;
  std::uint64_t order_seed = 1;
  std::int64_t churn_ops = 0;  // PageOrder::churned only; 0 means 4 * num_pages

  std::size_t page_bytes() const { return layout.token_bytes() * static_cast<std::size_t>(page_size); }  // K or V
  std::int64_t max_pages_per_seq() const { return page_size < 1 ? 0 : (max_seq_len + page_size - 1) / page_size; }
  // As many pages as fit in budget_bytes of K + V; max_seqs 0 picks min(num_pages, 65536).
  static PagedPoolConfig for_budget(const KVLayout& layout, std::uint64_t budget_bytes, int page_size,
                                    std::int64_t max_seq_len, std::int32_t max_seqs = 0);
  std::string invalid_reason() const;
};

class PagedPool final : public KVPool {
 public:
  PagedPool(const PagedPoolConfig& config, std::unique_ptr<MemoryBackend> backend);

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
  const PagedPoolConfig& config() const { return config_; }

  using KVPool::admit;
  using KVPool::append_token;

  // Appends n tokens at once: k, v: (H_kv, n, D) host data of the pool's dtype (both nullptr
  // reserves without writing). The same pool state as n append_token calls (a shared partial
  // tail page is copied first), checked up front as a whole, with one upload per page touched
  // instead of one per token (shared-prefix batches append thousands of suffix tokens).
  void append_tokens(SequenceHandle h, const void* k, const void* v, std::int64_t n);
  template <class T>
  void append_tokens(SequenceHandle h, std::span<const T> k, std::span<const T> v, std::int64_t n) {
    check_dtype<T>("append_tokens");
    const std::size_t want =
        static_cast<std::size_t>(config_.layout.heads_kv) * static_cast<std::size_t>(n < 0 ? 0 : n) * config_.layout.head_dim;
    if (k.size() != want || v.size() != want)
      throw PoolError(PoolErrorKind::InvalidArgument, "append_tokens: k and v must hold H_kv * n * D = " +
                                                          std::to_string(want) + " elements (got " +
                                                          std::to_string(k.size()) + " and " + std::to_string(v.size()) + ")");
    append_tokens(h, static_cast<const void*>(k.data()), static_cast<const void*>(v.data()), n);
  }

  // Pages held by a holder other than a sequence (the radix prefix cache, pools/radix_cache.hpp):
  // retain adds one holder to each page, release_pages drops one (a page reaching zero goes back
  // to the free list). Every page must be in use; checked for all before any changes.
  void retain_pages(std::span<const std::int32_t> pages);
  void release_pages(std::span<const std::int32_t> pages);
  // A new sequence whose first prefix_pages.size() * page_size tokens are the given full, in-use
  // pages (shared: one more holder each, nothing copied), followed by suffix_len tokens on fresh
  // pages (k, v: (H_kv, suffix_len, D) host data, or both nullptr to reserve). Everything is
  // checked before anything changes.
  SequenceHandle admit_with_prefix(std::span<const std::int32_t> prefix_pages, const void* k, const void* v,
                                   std::int64_t suffix_len);

  // Deferred metadata writes (pools/deferred_words.hpp): block-table, indptr and length words are
  // collected and set with one staged copy when a view is next handed out (batch, accessor) or at
  // flush_metadata(), instead of one upload each. A serving loop that appends to every running
  // sequence each step turns this on. Off again flushes.
  void defer_metadata_writes(bool on) { words_.set_deferred(on); }
  void flush_metadata() const { words_.flush(); }
  const DeferredWords& metadata_writes() const { return words_; }

  // Sliding-window layers (pools/windowed_pages.hpp): every page of the sequence wholly before
  // token first_kept (page i with (i + 1) x page_size <= first_kept) goes back to the free list
  // (one holder fewer: a page a fork still shares stays), once; its block-table entry becomes
  // kReleasedPage, so entries keep their token positions. A windowed kernel never reads them (it
  // starts at the window); read_token refuses them. first_kept in [0, length]; returns the pages
  // released by this call.
  static constexpr std::int32_t kReleasedPage = -1;
  std::int64_t release_pages_before(SequenceHandle h, std::int64_t first_kept);
  // Pages of the sequence released so far (the leading kReleasedPage entries of its table).
  std::int64_t released_pages(SequenceHandle h) const;

  // Whether every sequence slot is taken (admit would throw OutOfSlots), and the pages an append
  // of n tokens to h would take (new pages, plus one for a copy-on-write of a shared tail): a
  // scheduler asks before it admits or appends, instead of catching the pool's refusal.
  bool slots_full() const { return slots_.full(); }
  std::int64_t pages_to_append(SequenceHandle h, std::int64_t n) const {
    return pages_needed_to_append(slots_.check(h, "pages_to_append"), n);
  }

  // Host mirror of a sequence's block table (what the pool-memory row holds).
  std::span<const std::int32_t> block_table(SequenceHandle h) const;
  const PageAllocator& pages() const { return pages_; }
  // Share of logically adjacent page pairs (over live sequences) that are not physically
  // adjacent: 0 for sequential admits into a fresh pool, near 1 for a shuffled free list.
  double physical_discontinuity() const;

  // One sequence as sequence 0 of a PagedKV (its block-table row and {0, pages} indptr).
  template <class T>
  PagedKV<T> accessor(SequenceHandle h) const {
    check_dtype<T>("accessor");
    check_has_memory("accessor");
    const std::int32_t slot = slots_.check(h, "accessor");
    words_.flush();
    return typed_view<T>(tables_.as<std::int32_t>() + slot * row_stride(), slot_indptr_.as<std::int32_t>() + 2 * slot);
  }
  // A batch: CSR (indptr, concatenated page indices) and seq_lens gathered in pool memory from
  // the per-slot rows. Cached: asking again for the same handles after no change costs nothing;
  // after appends it costs one gather launch (plus an indptr upload when page counts changed).
  template <class T>
  BatchView<PagedKV<T>> batch(std::span<const SequenceHandle> handles) const {
    check_dtype<T>("batch");
    check_has_memory("batch");
    const BatchCache& c = build_batch(handles);
    BatchView<PagedKV<T>> out;
    out.kv = typed_view<T>(c.pages_dev.as<std::int32_t>(), c.slots_dev.as<std::int32_t>() + handles.size());
    out.seq_lens_device = c.lens_dev.as<std::int32_t>();
    out.num_seqs = static_cast<int>(handles.size());
    out.lengths_host = c.lengths;
    out.max_len = c.max_len;
    return out;
  }

 private:
  struct BatchCache {
    std::vector<SequenceHandle> handles;
    std::vector<std::int32_t> indptr, lengths;  // (n + 1), (n)
    std::vector<std::int32_t> slots;            // (n)
    std::int64_t max_len = 0;
    std::uint64_t epoch = ~0ull;
    PoolBuffer slots_dev, pages_dev, lens_dev;  // slots_dev: (n) slots, then the (n + 1) indptr
  };

  template <class T>
  PagedKV<T> typed_view(const std::int32_t* page_indices, const std::int32_t* indptr) const {
    return {reinterpret_cast<const T*>(k_.data()), reinterpret_cast<const T*>(v_.data()), page_indices, indptr,
            config_.page_size, config_.layout.heads_kv, config_.layout.head_dim};
  }
  std::int64_t row_stride() const { return config_.max_pages_per_seq(); }
  const BatchCache& build_batch(std::span<const SequenceHandle> handles) const;
  std::int32_t take_page(const char* operation, SequenceHandle h);
  void check_pages_in_use(std::span<const std::int32_t> pages, const char* operation, bool full) const;
  // Pages an append of n tokens to `slot` takes: new pages plus one if the tail is copied.
  std::int64_t pages_needed_to_append(std::int32_t slot, std::int64_t n) const;
  void check_append(SequenceHandle h, std::int32_t slot, std::int64_t n, const char* operation) const;
  // One token (k_row, v_row may be null: reserve only) into writable_tail's page, without writing
  // the length word.
  void append_one(SequenceHandle h, std::int32_t slot, const void* k_row, const void* v_row, const char* operation);
  // The page that token lengths_[slot] goes into: a fresh one at a page boundary, else the tail,
  // copied first when it is shared. Updates the table row; the caller sets fill and length.
  std::int32_t writable_tail(SequenceHandle h, std::int32_t slot, const char* operation);
  void write_token(std::int32_t page, std::int64_t slot_in_page, const void* k_row, const void* v_row);
  void write_table_entry(std::int32_t slot, std::int64_t index);
  void write_table_row(std::int32_t slot);
  void write_length(std::int32_t slot);
  std::byte* page_row(const PoolBuffer& arena, std::int32_t page, std::int64_t slot_in_page) const;
  // Every length change goes through here, so stats() reads the live tokens' sum instead of
  // walking every slot each serving step.
  void set_length(std::int32_t slot, std::int64_t tokens) {
    logical_tokens_ += tokens - lengths_[slot];
    lengths_[slot] = tokens;
  }

  PagedPoolConfig config_;
  std::unique_ptr<MemoryBackend> backend_;
  PoolBuffer k_, v_;          // (num_pages, H_kv, page_size, D) each
  PoolBuffer tables_;         // (max_seqs, max_pages_per_seq) int32
  PoolBuffer slot_indptr_;    // (max_seqs, 2) int32
  PoolBuffer slot_lengths_;   // (max_seqs) int32
  PageAllocator pages_;
  SlotRegistry slots_;
  std::vector<std::vector<std::int32_t>> tables_host_;  // (max_seqs) rows, the host mirror
  std::vector<std::int64_t> lengths_;
  std::int64_t logical_tokens_ = 0;  // sum of lengths_
  std::vector<std::int64_t> released_;  // (max_seqs) leading entries released (release_pages_before)
  std::uint64_t table_epoch_ = 0;  // bumped whenever any block-table entry changes
  mutable BatchCache batch_cache_;
  // build_batch's candidates for the next cache (swapped with the cache's vectors when it is
  // rebuilt, so neither allocates once grown).
  mutable std::vector<std::int32_t> next_slots_, next_indptr_, next_lengths_;
  mutable std::vector<std::int32_t> next_meta_;  // the slots and indptr uploaded together
  mutable DeferredWords words_{*backend_};
};

}  // namespace decode_bench
