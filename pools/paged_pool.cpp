#include "pools/paged_pool.hpp"

#include <algorithm>
#include <limits>

namespace decode_bench {

PagedPoolConfig PagedPoolConfig::for_budget(const KVLayout& layout, std::uint64_t budget_bytes, int page_size,
                                            std::int64_t max_seq_len, std::int32_t max_seqs) {
  PagedPoolConfig c;
  c.layout = layout;
  c.page_size = page_size;
  c.max_seq_len = max_seq_len;
  if (page_size >= 1 && layout.invalid_reason().empty()) {
    const std::uint64_t pages = budget_bytes / (2 * c.page_bytes());
    c.num_pages = static_cast<std::int32_t>(std::min<std::uint64_t>(pages, std::numeric_limits<std::int32_t>::max()));
  }
  c.max_seqs = max_seqs > 0 ? max_seqs : std::max(1, std::min(c.num_pages, std::int32_t{1} << 16));
  return c;
}

std::string PagedPoolConfig::invalid_reason() const {
  if (auto r = layout.invalid_reason(); !r.empty()) return r;
  if (page_size < 1) return "page_size must be >= 1 (got " + std::to_string(page_size) + ")";
  if (num_pages < 1) return "num_pages must be >= 1 (got " + std::to_string(num_pages) + "; is the budget below one page?)";
  if (auto r = max_seq_len_invalid_reason(max_seq_len); !r.empty()) return r;
  if (max_seqs < 1) return "max_seqs must be >= 1 (got " + std::to_string(max_seqs) + ")";
  if (churn_ops < 0) return "churn_ops must be >= 0 (got " + std::to_string(churn_ops) + ")";
  return {};
}

namespace {
std::int64_t pages_for(std::int64_t tokens, int page_size) { return (tokens + page_size - 1) / page_size; }
}  // namespace

PagedPool::PagedPool(const PagedPoolConfig& config, std::unique_ptr<MemoryBackend> backend)
    : config_(validated_config(config, "PagedPool")),
      backend_(std::move(backend)),
      k_(*backend_, config_.num_pages * config_.page_bytes()),
      v_(*backend_, config_.num_pages * config_.page_bytes()),
      tables_(*backend_, config_.max_seqs * config_.max_pages_per_seq() * sizeof(std::int32_t)),
      slot_indptr_(*backend_, 2 * config_.max_seqs * sizeof(std::int32_t)),
      slot_lengths_(*backend_, config_.max_seqs * sizeof(std::int32_t)),
      pages_(config_.num_pages),
      slots_(config_.max_seqs),
      tables_host_(config_.max_seqs),
      lengths_(config_.max_seqs, 0),
      released_(config_.max_seqs, 0) {
  const std::int64_t churn = config_.churn_ops > 0 ? config_.churn_ops : 4 * std::int64_t{config_.num_pages};
  pages_.arrange(config_.page_order, config_.order_seed, churn);
}

std::byte* PagedPool::page_row(const PoolBuffer& arena, std::int32_t page, std::int64_t slot_in_page) const {
  return arena.data() + page * config_.page_bytes() + slot_in_page * config_.layout.row_bytes();
}

// Token rows (H_kv, D) land at (page, h, slot_in_page, :) for every head h.
void PagedPool::write_token(std::int32_t page, std::int64_t slot_in_page, const void* k_row, const void* v_row) {
  if (!k_row || !backend_->has_memory()) return;
  const std::size_t row = config_.layout.row_bytes(), head_pitch = config_.page_size * row;
  backend_->upload(page_row(k_, page, slot_in_page), head_pitch, k_row, row, row, config_.layout.heads_kv);
  backend_->upload(page_row(v_, page, slot_in_page), head_pitch, v_row, row, row, config_.layout.heads_kv);
}

// Sources of these small uploads are host locals / mirror entries: an upload takes its source
// before it returns (memory_backend.hpp), so they may change right after the call.
void PagedPool::write_table_entry(std::int32_t slot, std::int64_t index) {
  if (!backend_->has_memory()) return;
  words_.put(tables_.as<std::int32_t>() + slot * row_stride() + index, tables_host_[slot][index]);
  words_.put(slot_indptr_.as<std::int32_t>() + 2 * slot + 1, static_cast<std::int32_t>(tables_host_[slot].size()));
}

void PagedPool::write_table_row(std::int32_t slot) {
  if (!backend_->has_memory()) return;
  const auto& row = tables_host_[slot];
  const std::int32_t indptr[2] = {0, static_cast<std::int32_t>(row.size())};
  if (words_.deferred()) {
    std::int32_t* dst = tables_.as<std::int32_t>() + slot * row_stride();
    for (std::size_t i = 0; i < row.size(); ++i) words_.put(dst + i, row[i]);
    words_.put(slot_indptr_.as<std::int32_t>() + 2 * slot, indptr[0]);
    words_.put(slot_indptr_.as<std::int32_t>() + 2 * slot + 1, indptr[1]);
    return;
  }
  backend_->upload(tables_.as<std::int32_t>() + slot * row_stride(), row.size() * 4, row.data(), row.size() * 4,
                   row.size() * 4, 1);
  backend_->upload(slot_indptr_.as<std::int32_t>() + 2 * slot, sizeof indptr, indptr, sizeof indptr, sizeof indptr, 1);
}

void PagedPool::write_length(std::int32_t slot) {
  if (!backend_->has_memory()) return;
  words_.put(slot_lengths_.as<std::int32_t>() + slot, static_cast<std::int32_t>(lengths_[slot]));
}

std::int32_t PagedPool::take_page(const char* operation, SequenceHandle h) {
  if (pages_.free_count() == 0)
    throw PoolError(PoolErrorKind::OutOfPages, std::string(operation) + " on " + h.describe() + ": all " +
                                                   std::to_string(pages_.total()) + " pages are in use");
  return pages_.pop();
}

SequenceHandle PagedPool::admit(const void* k, const void* v, std::int64_t len) {
  check_admit(k, v, len);
  if (slots_.full())
    throw PoolError(PoolErrorKind::OutOfSlots, "admit: all " + std::to_string(config_.max_seqs) + " sequence slots are taken");
  const std::int64_t need = pages_for(len, config_.page_size);
  if (need > pages_.free_count())
    throw PoolError(PoolErrorKind::OutOfPages, "admit: len " + std::to_string(len) + " needs " + std::to_string(need) +
                                                   " pages, " + std::to_string(pages_.free_count()) + " are free");
  const std::int32_t slot = slots_.lowest_free();
  std::vector<std::int32_t> row;
  row.reserve(need);
  try {
    for (std::int64_t i = 0; i < need; ++i) row.push_back(pages_.pop());
    const std::size_t rb = config_.layout.row_bytes(), head_pitch = config_.page_size * rb;
    for (std::int64_t i = 0; i < need; ++i) {
      const std::int64_t first = i * config_.page_size, n = std::min<std::int64_t>(config_.page_size, len - first);
      pages_.set_fill(row[i], static_cast<std::int32_t>(n));
      if (!k || !backend_->has_memory()) continue;
      // Per head: tokens [first, first + n) of the source's (len, D) block -> the page's (page_size, D) block.
      const auto* kb = static_cast<const std::byte*>(k) + first * rb;
      const auto* vb = static_cast<const std::byte*>(v) + first * rb;
      backend_->upload(page_row(k_, row[i], 0), head_pitch, kb, len * rb, n * rb, config_.layout.heads_kv);
      backend_->upload(page_row(v_, row[i], 0), head_pitch, vb, len * rb, n * rb, config_.layout.heads_kv);
    }
    tables_host_[slot] = std::move(row);
    set_length(slot, len);
    write_table_row(slot);
    write_length(slot);
  } catch (...) {
    for (std::int32_t p : row) pages_.release(p);
    for (std::int32_t p : tables_host_[slot]) pages_.release(p);
    tables_host_[slot].clear();
    set_length(slot, 0);
    throw;
  }
  ++table_epoch_;
  return slots_.occupy(slot);
}

std::int64_t PagedPool::pages_needed_to_append(std::int32_t slot, std::int64_t n) const {
  if (n == 0) return 0;
  const std::int64_t t = lengths_[slot];
  const auto& row = tables_host_[slot];
  const bool copies_tail = t % config_.page_size != 0 && pages_.refcount(row.back()) > 1;
  return pages_for(t + n, config_.page_size) - pages_for(t, config_.page_size) + (copies_tail ? 1 : 0);
}

void PagedPool::check_append(SequenceHandle h, std::int32_t slot, std::int64_t n, const char* operation) const {
  const std::int64_t t = lengths_[slot];
  if (t + n > config_.max_seq_len)
    throw PoolError(PoolErrorKind::SequenceTooLong, std::string(operation) + " on " + h.describe() + ": length " +
                                                        std::to_string(t) + " + " + std::to_string(n) +
                                                        " exceeds max_seq_len " + std::to_string(config_.max_seq_len));
  const std::int64_t need = pages_needed_to_append(slot, n);
  const bool copies_tail = n > 0 && t % config_.page_size != 0 && pages_.refcount(tables_host_[slot].back()) > 1;
  if (need > pages_.free_count())
    throw PoolError(PoolErrorKind::OutOfPages, std::string(operation) + " on " + h.describe() + ": needs " +
                                                   std::to_string(need) + " pages" +
                                                   (copies_tail ? " (one for a copy-on-write of the shared tail)" : "") +
                                                   ", " +
                                                   std::to_string(pages_.free_count()) + " of " +
                                                   std::to_string(pages_.total()) + " are free");
}

void PagedPool::append_token(SequenceHandle h, const void* k_row, const void* v_row) {
  check_data_pair(k_row, v_row, "append_token");
  const std::int32_t slot = slots_.check(h, "append_token");
  check_append(h, slot, 1, "append_token");
  append_one(h, slot, k_row, v_row, "append_token");
  write_length(slot);
}

void PagedPool::extend(SequenceHandle h, std::int64_t n) {
  const std::int32_t slot = slots_.check(h, "extend");
  if (n < 0) throw PoolError(PoolErrorKind::InvalidArgument, "extend: n must be >= 0 (got " + std::to_string(n) + ")");
  check_append(h, slot, n, "extend");
  for (std::int64_t i = 0; i < n; ++i) append_one(h, slot, nullptr, nullptr, "extend");
  write_length(slot);
}

void PagedPool::append_one(SequenceHandle h, std::int32_t slot, const void* k_row, const void* v_row,
                           const char* operation) {
  const std::int64_t t = lengths_[slot];
  const std::int64_t slot_in_page = t % config_.page_size;
  const std::int32_t page = writable_tail(h, slot, operation);
  try {
    write_token(page, slot_in_page, k_row, v_row);
  } catch (...) {
    // A fresh page that never got its token goes back, so the table again matches the length (a
    // copied tail stays: it holds the same tokens as the page it replaced).
    if (slot_in_page == 0) {
      tables_host_[slot].pop_back();
      pages_.release(page);
      ++table_epoch_;
    }
    throw;
  }
  pages_.set_fill(page, static_cast<std::int32_t>(slot_in_page + 1));
  set_length(slot, t + 1);
}

std::int32_t PagedPool::writable_tail(SequenceHandle h, std::int32_t slot, const char* operation) {
  auto& row = tables_host_[slot];
  if (lengths_[slot] % config_.page_size == 0) {
    const std::int32_t page = take_page(operation, h);
    try {
      row.push_back(page);
      write_table_entry(slot, static_cast<std::int64_t>(row.size()) - 1);
    } catch (...) {
      if (!row.empty() && row.back() == page) row.pop_back();
      pages_.release(page);
      throw;
    }
    pages_.set_fill(page, 0);
    ++table_epoch_;
    return page;
  }
  const std::int32_t tail = row.back();
  if (pages_.refcount(tail) == 1) return tail;
  // Copy-on-write: the writer takes a private copy of the shared tail.
  const std::int32_t copy = take_page((std::string(operation) + " (copy-on-write)").c_str(), h);
  try {
    if (backend_->has_memory()) {
      backend_->copy(page_row(k_, copy, 0), config_.page_bytes(), page_row(k_, tail, 0), config_.page_bytes(),
                     config_.page_bytes(), 1);
      backend_->copy(page_row(v_, copy, 0), config_.page_bytes(), page_row(v_, tail, 0), config_.page_bytes(),
                     config_.page_bytes(), 1);
    }
    row.back() = copy;
    write_table_entry(slot, static_cast<std::int64_t>(row.size()) - 1);
  } catch (...) {
    row.back() = tail;
    pages_.release(copy);
    throw;
  }
  pages_.set_fill(copy, pages_.fill(tail));
  pages_.release(tail);
  ++table_epoch_;
  return copy;
}

void PagedPool::append_tokens(SequenceHandle h, const void* k, const void* v, std::int64_t n) {
  check_data_pair(k, v, "append_tokens");
  const std::int32_t slot = slots_.check(h, "append_tokens");
  if (n < 0) throw PoolError(PoolErrorKind::InvalidArgument, "append_tokens: n must be >= 0 (got " + std::to_string(n) + ")");
  check_append(h, slot, n, "append_tokens");
  const std::size_t rb = config_.layout.row_bytes(), head_pitch = config_.page_size * rb;
  for (std::int64_t done = 0; done < n;) {
    const std::int64_t t = lengths_[slot], in_page = t % config_.page_size;
    const std::int64_t chunk = std::min<std::int64_t>(config_.page_size - in_page, n - done);
    const std::int32_t page = writable_tail(h, slot, "append_tokens");
    if (k && backend_->has_memory()) {
      // Per head: tokens [done, done + chunk) of the source's (n, D) block -> slots [in_page, + chunk).
      const auto* kb = static_cast<const std::byte*>(k) + done * rb;
      const auto* vb = static_cast<const std::byte*>(v) + done * rb;
      backend_->upload(page_row(k_, page, in_page), head_pitch, kb, n * rb, chunk * rb, config_.layout.heads_kv);
      backend_->upload(page_row(v_, page, in_page), head_pitch, vb, n * rb, chunk * rb, config_.layout.heads_kv);
    }
    pages_.set_fill(page, static_cast<std::int32_t>(in_page + chunk));
    set_length(slot, t + chunk);
    done += chunk;
  }
  write_length(slot);
}

void PagedPool::release(SequenceHandle h) {
  const std::int32_t slot = slots_.check(h, "release");
  for (std::int32_t p : tables_host_[slot])
    if (p != kReleasedPage) pages_.release(p);
  tables_host_[slot].clear();
  set_length(slot, 0);
  released_[slot] = 0;
  slots_.vacate(slot);
  ++table_epoch_;
}

SequenceHandle PagedPool::fork(SequenceHandle parent) {
  const std::int32_t from = slots_.check(parent, "fork");
  if (slots_.full())
    throw PoolError(PoolErrorKind::OutOfSlots, "fork: all " + std::to_string(config_.max_seqs) + " sequence slots are taken");
  const std::int32_t to = slots_.lowest_free();
  tables_host_[to] = tables_host_[from];
  set_length(to, lengths_[from]);
  released_[to] = released_[from];
  try {
    write_table_row(to);
    write_length(to);
  } catch (...) {
    tables_host_[to].clear();
    set_length(to, 0);
    released_[to] = 0;
    throw;
  }
  for (std::int32_t p : tables_host_[to])
    if (p != kReleasedPage) pages_.retain(p);
  ++table_epoch_;
  return slots_.occupy(to);
}

std::int64_t PagedPool::length(SequenceHandle h) const { return lengths_[slots_.check(h, "length")]; }

std::int64_t PagedPool::release_pages_before(SequenceHandle h, std::int64_t first_kept) {
  const std::int32_t slot = slots_.check(h, "release_pages_before");
  if (first_kept < 0 || first_kept > lengths_[slot])
    throw PoolError(PoolErrorKind::InvalidArgument, "release_pages_before on " + h.describe() + ": first_kept " +
                                                        std::to_string(first_kept) + " is outside [0, " +
                                                        std::to_string(lengths_[slot]) + "]");
  auto& row = tables_host_[slot];
  const std::int64_t before = released_[slot], upto = first_kept / config_.page_size;  // whole pages only
  if (upto <= before) return 0;
  ++table_epoch_;
  // Entry by entry, so a failed table write leaves the pool as released up to that entry.
  for (std::int64_t i = before; i < upto; ++i) {
    const std::int32_t page = row[i];
    row[i] = kReleasedPage;
    try {
      write_table_entry(slot, i);
    } catch (...) {
      row[i] = page;
      throw;
    }
    pages_.release(page);
    released_[slot] = i + 1;
  }
  return upto - before;
}

std::int64_t PagedPool::released_pages(SequenceHandle h) const { return released_[slots_.check(h, "released_pages")]; }

std::span<const std::int32_t> PagedPool::block_table(SequenceHandle h) const {
  return tables_host_[slots_.check(h, "block_table")];
}

void PagedPool::read_token(SequenceHandle h, std::int64_t t, void* k_row, void* v_row) const {
  const std::int32_t slot = slots_.check(h, "read_token");
  if (t < 0 || t >= lengths_[slot])
    throw PoolError(PoolErrorKind::InvalidArgument, "read_token on " + h.describe() + ": token " + std::to_string(t) +
                                                        " is outside [0, " + std::to_string(lengths_[slot]) + ")");
  const std::int32_t page = tables_host_[slot][t / config_.page_size];
  if (page == kReleasedPage)
    throw PoolError(PoolErrorKind::InvalidArgument, "read_token on " + h.describe() + ": token " + std::to_string(t) +
                                                        " is on a page released behind the window");
  check_has_memory("read_token");
  const std::size_t row = config_.layout.row_bytes(), head_pitch = config_.page_size * row;
  backend_->download(k_row, row, page_row(k_, page, t % config_.page_size), head_pitch, row, config_.layout.heads_kv);
  backend_->download(v_row, row, page_row(v_, page, t % config_.page_size), head_pitch, row, config_.layout.heads_kv);
}

const PagedPool::BatchCache& PagedPool::build_batch(std::span<const SequenceHandle> handles) const {
  if (handles.empty()) throw PoolError(PoolErrorKind::InvalidArgument, "batch: no sequences given");
  words_.flush();  // the gather reads the per-slot rows and lengths
  const auto n = static_cast<int>(handles.size());
  // The candidate slots, indptr and lengths go into vectors kept between calls (a serving loop
  // asks for a batch every step).
  std::vector<std::int32_t>& slots = next_slots_;
  std::vector<std::int32_t>& indptr = next_indptr_;
  std::vector<std::int32_t>& lengths = next_lengths_;
  slots.resize(n);
  indptr.resize(n + 1);
  lengths.resize(n);
  indptr[0] = 0;
  std::int64_t max_len = 0;
  for (int i = 0; i < n; ++i) {
    slots[i] = slots_.check(handles[i], "batch");
    indptr[i + 1] = indptr[i] + static_cast<std::int32_t>(tables_host_[slots[i]].size());
    lengths[i] = static_cast<std::int32_t>(lengths_[slots[i]]);
    max_len = std::max<std::int64_t>(max_len, lengths[i]);
  }
  BatchCache& c = batch_cache_;
  const bool same_handles = std::equal(handles.begin(), handles.end(), c.handles.begin(), c.handles.end());
  if (same_handles && c.epoch == table_epoch_ && c.lengths == lengths) return c;

  // Buffers move out of the cache to be reused, and into it at the end; on a failure the cache is
  // emptied and the next call rebuilds from scratch. slots_dev holds the slots, then the indptr,
  // so a new batch shape costs one upload.
  PoolBuffer slots_dev, pages_dev, lens_dev;
  try {
    const bool same_shape = same_handles && c.indptr == indptr;
    auto grow = [&](PoolBuffer& have, std::size_t bytes) {
      return have.bytes() >= bytes ? std::move(have)
                                   : PoolBuffer(*backend_, std::max<std::size_t>(bytes, 2 * have.bytes()));
    };
    const std::size_t meta_bytes = (2 * static_cast<std::size_t>(n) + 1) * 4;
    slots_dev = grow(c.slots_dev, meta_bytes);
    lens_dev = grow(c.lens_dev, n * 4);
    pages_dev = grow(c.pages_dev, std::max<std::size_t>(4, indptr[n] * std::size_t{4}));
    // Same handles and page counts: the uploaded slots and indptr are still right (same buffers,
    // nothing grew); only the gather runs again, for new entries (copy-on-write) or lengths.
    if (!same_shape) {
      std::vector<std::int32_t>& meta = next_meta_;
      meta.assign(slots.begin(), slots.end());
      meta.insert(meta.end(), indptr.begin(), indptr.end());
      backend_->upload(slots_dev.data(), meta_bytes, meta.data(), meta_bytes, meta_bytes, 1);
    }
    const std::int32_t* indptr_dev = slots_dev.as<std::int32_t>() + n;
    backend_->gather_block_tables(tables_.as<std::int32_t>(), row_stride(), slot_lengths_.as<std::int32_t>(),
                                  slots_dev.as<std::int32_t>(), indptr_dev, n, pages_dev.as<std::int32_t>(),
                                  lens_dev.as<std::int32_t>());
  } catch (...) {
    c = BatchCache{};
    throw;
  }
  c.handles.assign(handles.begin(), handles.end());
  std::swap(c.slots, slots);
  std::swap(c.indptr, indptr);
  std::swap(c.lengths, lengths);
  c.max_len = max_len;
  c.epoch = table_epoch_;
  c.slots_dev = std::move(slots_dev);
  c.pages_dev = std::move(pages_dev);
  c.lens_dev = std::move(lens_dev);
  return c;
}

double PagedPool::physical_discontinuity() const {
  std::int64_t pairs = 0, jumps = 0;
  for (std::int32_t slot = 0; slot < config_.max_seqs; ++slot) {
    const auto& row = tables_host_[slot];
    for (std::size_t i = std::max<std::size_t>(1, released_[slot] + 1); i < row.size(); ++i, ++pairs)
      jumps += row[i] != row[i - 1] + 1;
  }
  return pairs == 0 ? 0.0 : static_cast<double>(jumps) / static_cast<double>(pairs);
}

PoolStats PagedPool::stats() const {
  PoolStats s;
  s.sequences = slots_.live_count();
  s.logical_tokens = logical_tokens_;
  s.stored_tokens = pages_.filled_tokens();
  s.units_total = pages_.total();
  s.units_used = pages_.used_count();
  s.units_free = pages_.free_count();
  s.arena_bytes = 2ull * config_.num_pages * config_.page_bytes();
  s.bytes_reserved = 2ull * s.units_used * config_.page_bytes();
  s.bytes_used = static_cast<std::uint64_t>(s.stored_tokens) * config_.layout.token_kv_bytes();
  const auto& c = batch_cache_;
  s.metadata_bytes = tables_.bytes() + slot_indptr_.bytes() + slot_lengths_.bytes() + c.slots_dev.bytes() +
                     c.pages_dev.bytes() + c.lens_dev.bytes();
  return s;
}


void PagedPool::check_pages_in_use(std::span<const std::int32_t> pages, const char* operation, bool full) const {
  for (std::int32_t p : pages) {
    if (p < 0 || p >= pages_.total())
      throw PoolError(PoolErrorKind::InvalidArgument, std::string(operation) + ": page " + std::to_string(p) +
                                                          " is outside [0, " + std::to_string(pages_.total()) + ")");
    if (pages_.refcount(p) == 0)
      throw PoolError(PoolErrorKind::InvalidArgument,
                      std::string(operation) + ": page " + std::to_string(p) + " is free (no holder to share it from)");
    if (full && pages_.fill(p) != config_.page_size)
      throw PoolError(PoolErrorKind::InvalidArgument, std::string(operation) + ": page " + std::to_string(p) +
                                                          " holds " + std::to_string(pages_.fill(p)) + " of " +
                                                          std::to_string(config_.page_size) + " tokens (only full pages are shared)");
  }
}

void PagedPool::retain_pages(std::span<const std::int32_t> pages) {
  check_pages_in_use(pages, "retain_pages", false);
  for (std::int32_t p : pages) pages_.retain(p);
}

void PagedPool::release_pages(std::span<const std::int32_t> pages) {
  check_pages_in_use(pages, "release_pages", false);
  // A page listed k times must have k holders, or the list is a caller bug.
  std::vector<std::int32_t> sorted(pages.begin(), pages.end());
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j < sorted.size() && sorted[j] == sorted[i]) ++j;
    if (static_cast<std::int32_t>(j - i) > pages_.refcount(sorted[i]))
      throw PoolError(PoolErrorKind::InvalidArgument, "release_pages: page " + std::to_string(sorted[i]) + " listed " +
                                                          std::to_string(j - i) + " times but has " +
                                                          std::to_string(pages_.refcount(sorted[i])) + " holders");
    i = j;
  }
  for (std::int32_t p : pages) pages_.release(p);
}

SequenceHandle PagedPool::admit_with_prefix(std::span<const std::int32_t> prefix_pages, const void* k, const void* v,
                                            std::int64_t suffix_len) {
  check_data_pair(k, v, "admit_with_prefix");
  check_pages_in_use(prefix_pages, "admit_with_prefix", true);
  const std::int64_t prefix_len = static_cast<std::int64_t>(prefix_pages.size()) * config_.page_size;
  if (suffix_len < 0)
    throw PoolError(PoolErrorKind::InvalidArgument,
                    "admit_with_prefix: suffix_len must be >= 0 (got " + std::to_string(suffix_len) + ")");
  if (prefix_len + suffix_len > config_.max_seq_len)
    throw PoolError(PoolErrorKind::SequenceTooLong, "admit_with_prefix: prefix " + std::to_string(prefix_len) +
                                                        " + suffix " + std::to_string(suffix_len) +
                                                        " exceeds max_seq_len " + std::to_string(config_.max_seq_len));
  if (slots_.full())
    throw PoolError(PoolErrorKind::OutOfSlots,
                    "admit_with_prefix: all " + std::to_string(config_.max_seqs) + " sequence slots are taken");
  const std::int64_t need = pages_for(suffix_len, config_.page_size);
  if (need > pages_.free_count())
    throw PoolError(PoolErrorKind::OutOfPages, "admit_with_prefix: suffix " + std::to_string(suffix_len) + " needs " +
                                                   std::to_string(need) + " pages, " +
                                                   std::to_string(pages_.free_count()) + " are free");
  const std::int32_t slot = slots_.lowest_free();
  tables_host_[slot].assign(prefix_pages.begin(), prefix_pages.end());
  set_length(slot, prefix_len);
  for (std::int32_t p : prefix_pages) pages_.retain(p);
  ++table_epoch_;
  SequenceHandle h;
  try {
    write_table_row(slot);
    write_length(slot);
    h = slots_.occupy(slot);
  } catch (...) {
    for (std::int32_t p : prefix_pages) pages_.release(p);
    tables_host_[slot].clear();
    set_length(slot, 0);
    throw;
  }
  if (suffix_len == 0) return h;
  try {
    append_tokens(h, k, v, suffix_len);
  } catch (...) {
    release(h);  // only a backend failure gets here: every pool precondition was checked above
    throw;
  }
  return h;
}

}  // namespace decode_bench
