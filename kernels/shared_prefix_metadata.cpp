#include "kernels/shared_prefix_metadata.hpp"

#include <algorithm>
#include <cstring>

namespace decode_bench {
namespace {

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Writes straight into the image (no per-region vectors): memcpy keeps the stores free of
// aliasing questions and compiles to plain stores.
template <class V>
void store(std::vector<std::byte>& image, std::size_t offset, std::size_t index, const V& value) {
  std::memcpy(image.data() + offset + index * sizeof(V), &value, sizeof(V));
}

// Calls f(lo, seqs, count) for each item group of `level`: its visible sequences (lo_b below the
// level's end) ordered by lo_b, then by index (stable), cut where lo_b changes. `order` is scratch.
template <class F>
void for_each_item_group(const SharedPrefixLayout& layout, const SharedLevel& level, std::int64_t window,
                         std::vector<std::int32_t>& order, F&& f) {
  order.clear();
  for (int s = level.first_seq; s < level.first_seq + level.num_seqs; ++s)
    if (level_window_start(layout, level, s, window) < level.token_end) order.push_back(s);
  if (window > 0)
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
      return level_window_start(layout, level, a, window) < level_window_start(layout, level, b, window);
    });
  for (std::size_t i = 0; i < order.size();) {
    const std::int64_t lo = level_window_start(layout, level, order[i], window);
    std::size_t j = i + 1;
    while (j < order.size() && level_window_start(layout, level, order[j], window) == lo) ++j;
    f(lo, order.data() + i, static_cast<int>(j - i));
    i = j;
  }
}

}  // namespace

void shared_prefix_metadata(const DecodeShape& shape, const SharedPrefixLayout& layout, SharedPrefixMetadata* out,
                            std::int64_t window) {
  SharedPrefixMetadata& m = *out;
  const int n = layout.num_seqs(), hq = shape.heads_q, hkv = shape.heads_kv, group = shape.group();
  const int ps = layout.page_size;
  std::vector<std::byte> image = std::move(m.image);  // its capacity, kept
  std::vector<std::int32_t> order = std::move(m.order);
  m = SharedPrefixMetadata{};
  m.num_seqs = n;
  m.max_depth = layout.max_depth();
  int groups = 0;
  for (const SharedLevel& level : layout.levels) {
    std::int64_t first_lo = level.token_end;
    for_each_item_group(layout, level, window, order, [&](std::int64_t lo, const std::int32_t*, int count) {
      first_lo = std::min(first_lo, lo);
      const std::int64_t tokens = level.token_end - lo;
      m.prefix_row_tokens += tokens * count;
      m.max_item_tokens = std::max(m.max_item_tokens, tokens);
      m.max_item_rows = std::max(m.max_item_rows, count * group);
      m.num_rows += count * hq;
      ++groups;
    });
    m.prefix_tokens += level.token_end - first_lo;
  }
  m.num_items = groups * hkv;

  std::size_t at = 0;
  const auto take = [&at](std::size_t bytes) {
    const std::size_t here = at;
    at = align_up(at + bytes);
    return here;
  };
  const std::size_t merge_entries = static_cast<std::size_t>(m.max_depth) * n * hq;
  m.items_offset = take(static_cast<std::size_t>(m.num_items) * sizeof(RowAttentionItem));
  m.row_q_offset = take(static_cast<std::size_t>(m.num_rows) * 4);
  m.merge_rows_offset = take(merge_entries * 4);
  m.suffix_indptr_offset = take((static_cast<std::size_t>(n) + 1) * 4);
  m.suffix_lens_offset = take(static_cast<std::size_t>(n) * 4);
  image.assign(at, std::byte{0});
  // -1 everywhere first: a state with no level at a depth (or a level outside its window).
  if (merge_entries > 0) std::memset(image.data() + m.merge_rows_offset, 0xFF, merge_entries * 4);

  // Prefix items and rows: item group (lo, sequences s_0 .. s_{c-1}) of a level, KV head kh ->
  // rows [base, base + c * G), row base + i * G + j = query head kh * G + j of sequence s_i.
  std::int32_t row = 0;
  std::size_t item = 0;
  for (const SharedLevel& level : layout.levels) {
    const std::size_t depth_base = static_cast<std::size_t>(level.depth) * n * hq;
    for_each_item_group(layout, level, window, order, [&](std::int64_t lo, const std::int32_t* seqs, int count) {
      for (int kh = 0; kh < hkv; ++kh) {
        const std::int32_t base = row;
        const RowAttentionItem it{level.first_seq, kh, base, base + count * group, lo, level.token_end};
        store(image, m.items_offset, item++, it);
        for (int i = 0; i < count; ++i)
          for (int j = 0; j < group; ++j, ++row) {
            const std::int32_t state = seqs[i] * hq + kh * group + j;
            store(image, m.merge_rows_offset, depth_base + static_cast<std::size_t>(state), row);
            store(image, m.row_q_offset, static_cast<std::size_t>(row), state);
          }
      }
    });
  }

  // Suffix view: the batch CSR has ceil(len / page) pages per sequence in batch order (PagedPool::
  // batch); sequence s's own pages start suffix_begin / page entries into its row.
  std::int32_t pages = 0;
  for (int s = 0; s < n; ++s) {
    const auto len = static_cast<std::int32_t>(layout.lengths[s] - layout.suffix_begin[s]);
    store(image, m.suffix_indptr_offset, static_cast<std::size_t>(s),
          static_cast<std::int32_t>(pages + layout.suffix_begin[s] / ps));
    store(image, m.suffix_lens_offset, static_cast<std::size_t>(s), len);
    pages += static_cast<std::int32_t>((layout.lengths[s] + ps - 1) / ps);
    m.suffix_tokens += len;
    m.suffix_read_tokens += window > 0 ? std::min<std::int64_t>(len, window) : len;
    m.max_suffix_len = std::max<std::int64_t>(m.max_suffix_len, len);
  }
  store(image, m.suffix_indptr_offset, static_cast<std::size_t>(n), pages);
  m.image = std::move(image);
  m.order = std::move(order);
}

}  // namespace decode_bench
