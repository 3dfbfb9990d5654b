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

}  // namespace

void shared_prefix_metadata(const DecodeShape& shape, const SharedPrefixLayout& layout, SharedPrefixMetadata* out) {
  SharedPrefixMetadata& m = *out;
  const int n = layout.num_seqs(), hq = shape.heads_q, hkv = shape.heads_kv, group = shape.group();
  const int ps = layout.page_size;
  std::vector<std::byte> image = std::move(m.image);  // its capacity, kept
  m = SharedPrefixMetadata{};
  m.num_seqs = n;
  m.max_depth = layout.max_depth();
  for (const SharedLevel& level : layout.levels) {
    m.prefix_tokens += level.token_end - level.token_begin;
    m.prefix_row_tokens += (level.token_end - level.token_begin) * level.num_seqs;
    m.max_item_tokens = std::max(m.max_item_tokens, level.token_end - level.token_begin);
    m.max_item_rows = std::max(m.max_item_rows, level.num_seqs * group);
    m.num_rows += level.num_seqs * hq;
  }
  m.num_items = static_cast<int>(layout.levels.size()) * hkv;

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
  // -1 everywhere first: a state with no level at a depth.
  if (merge_entries > 0) std::memset(image.data() + m.merge_rows_offset, 0xFF, merge_entries * 4);

  // Prefix items and rows: level l, KV head kh -> rows [base, base + num_seqs * G), row
  // base + i * G + j = query head kh * G + j of sequence first_seq + i.
  std::int32_t row = 0;
  std::size_t item = 0;
  for (const SharedLevel& level : layout.levels)
    for (int kh = 0; kh < hkv; ++kh) {
      const std::int32_t base = row;
      const RowAttentionItem it{level.first_seq, kh, base, base + level.num_seqs * group, level.token_begin,
                                level.token_end};
      store(image, m.items_offset, item++, it);
      const std::size_t depth_base = static_cast<std::size_t>(level.depth) * n * hq;
      for (int i = 0; i < level.num_seqs; ++i)
        for (int j = 0; j < group; ++j, ++row) {
          const std::int32_t state = (level.first_seq + i) * hq + kh * group + j;
          store(image, m.merge_rows_offset, depth_base + static_cast<std::size_t>(state), row);
          store(image, m.row_q_offset, static_cast<std::size_t>(row), state);
        }
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
    m.max_suffix_len = std::max<std::int64_t>(m.max_suffix_len, len);
  }
  store(image, m.suffix_indptr_offset, static_cast<std::size_t>(n), pages);
  m.image = std::move(image);
}

}  // namespace decode_bench
