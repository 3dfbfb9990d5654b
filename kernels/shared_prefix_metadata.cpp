#include "kernels/shared_prefix_metadata.hpp"

#include <algorithm>
#include <cstring>

namespace decode_bench {
namespace {

constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

template <class V>
void put(std::vector<std::byte>& image, std::size_t offset, const std::vector<V>& values) {
  if (!values.empty()) std::memcpy(image.data() + offset, values.data(), values.size() * sizeof(V));
}

}  // namespace

void shared_prefix_metadata(const DecodeShape& shape, const SharedPrefixLayout& layout, SharedPrefixMetadata* out) {
  SharedPrefixMetadata& m = *out;
  const int n = layout.num_seqs(), hq = shape.heads_q, hkv = shape.heads_kv, group = shape.group();
  const int ps = layout.page_size;
  m = SharedPrefixMetadata{};
  m.num_seqs = n;
  m.max_depth = layout.max_depth();

  // Prefix items and rows: level l, KV head kh -> rows [base, base + num_seqs * G), row
  // base + i * G + j = query head kh * G + j of sequence first_seq + i.
  std::vector<RowAttentionItem> items;
  std::vector<std::int32_t> row_q;
  std::vector<std::int32_t> merge_rows(static_cast<std::size_t>(m.max_depth) * n * hq, -1);
  for (const SharedLevel& level : layout.levels) {
    m.prefix_tokens += level.token_end - level.token_begin;
    m.prefix_row_tokens += (level.token_end - level.token_begin) * level.num_seqs;
    m.max_item_tokens = std::max(m.max_item_tokens, level.token_end - level.token_begin);
    m.max_item_rows = std::max(m.max_item_rows, level.num_seqs * group);
    for (int kh = 0; kh < hkv; ++kh) {
      const auto base = static_cast<std::int32_t>(row_q.size());
      items.push_back({level.first_seq, kh, base, base + level.num_seqs * group, level.token_begin, level.token_end});
      for (int i = 0; i < level.num_seqs; ++i)
        for (int j = 0; j < group; ++j) {
          const int state = (level.first_seq + i) * hq + kh * group + j;
          merge_rows[static_cast<std::size_t>(level.depth) * n * hq + state] = static_cast<std::int32_t>(row_q.size());
          row_q.push_back(state);
        }
    }
  }
  m.num_items = static_cast<int>(items.size());
  m.num_rows = static_cast<int>(row_q.size());

  // Suffix view: the batch CSR has ceil(len / page) pages per sequence in batch order (PagedPool::
  // batch); sequence s's own pages start suffix_begin / page entries into its row.
  std::vector<std::int32_t> indptr(n + 1, 0), lens(n);
  for (int s = 0; s < n; ++s) {
    const std::int64_t pages = (layout.lengths[s] + ps - 1) / ps;
    indptr[s + 1] = static_cast<std::int32_t>(indptr[s] + pages);
    lens[s] = static_cast<std::int32_t>(layout.lengths[s] - layout.suffix_begin[s]);
    m.suffix_tokens += lens[s];
    m.max_suffix_len = std::max<std::int64_t>(m.max_suffix_len, lens[s]);
  }
  std::vector<std::int32_t> suffix_indptr(n + 1);
  for (int s = 0; s < n; ++s) suffix_indptr[s] = static_cast<std::int32_t>(indptr[s] + layout.suffix_begin[s] / ps);
  suffix_indptr[n] = indptr[n];

  std::size_t at = 0;
  const auto take = [&at](std::size_t bytes) {
    const std::size_t here = at;
    at = align_up(at + bytes);
    return here;
  };
  m.items_offset = take(items.size() * sizeof(RowAttentionItem));
  m.row_q_offset = take(row_q.size() * 4);
  m.merge_rows_offset = take(merge_rows.size() * 4);
  m.suffix_indptr_offset = take(suffix_indptr.size() * 4);
  m.suffix_lens_offset = take(lens.size() * 4);
  m.image.assign(at, std::byte{0});
  put(m.image, m.items_offset, items);
  put(m.image, m.row_q_offset, row_q);
  put(m.image, m.merge_rows_offset, merge_rows);
  put(m.image, m.suffix_indptr_offset, suffix_indptr);
  put(m.image, m.suffix_lens_offset, lens);
}

}  // namespace decode_bench
