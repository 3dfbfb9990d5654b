#include "pools/shared_prefix_batch.hpp"

#include <algorithm>

namespace decode_bench {

std::vector<int> SharedPrefixSpec::group_sizes() const {
  const int g = group_prefix_len > 0 ? std::max(groups, 1) : 1;
  std::vector<int> sizes(g, batch / g);
  for (int i = 0; i < batch % g; ++i) ++sizes[i];
  return sizes;
}

std::string SharedPrefixSpec::invalid_reason() const {
  if (batch < 1) return "batch must be >= 1 (got " + std::to_string(batch) + ")";
  if (prefix_len < 1) return "prefix_len must be >= 1 (got " + std::to_string(prefix_len) + ")";
  if (group_prefix_len < 0) return "group_prefix_len must be >= 0 (got " + std::to_string(group_prefix_len) + ")";
  if (suffix_len < 1) return "suffix_len must be >= 1 (got " + std::to_string(suffix_len) + ")";
  if (group_prefix_len > 0 && (groups < 1 || groups > batch))
    return "groups must be in [1, batch " + std::to_string(batch) + "] (got " + std::to_string(groups) + ")";
  return {};
}

SharedPrefixLayout shared_prefix_layout(const SharedPrefixSpec& spec, int page_size) {
  SharedPrefixLayout out;
  out.page_size = page_size;
  const std::int64_t ps = page_size;
  // Tokens in pages every sharer holds untouched: appending after a partial page copies it.
  const std::int64_t root_end = spec.prefix_len / ps * ps;
  const std::int64_t group_end = (spec.prefix_len + spec.group_prefix_len) / ps * ps;
  out.lengths.assign(spec.batch, static_cast<std::int32_t>(spec.length()));
  out.suffix_begin.assign(spec.batch, 0);
  if (spec.batch < 2) return out;  // nothing shared: the one sequence reads everything itself
  if (root_end > 0) out.levels.push_back({0, 0, root_end, 0, spec.batch});
  std::fill(out.suffix_begin.begin(), out.suffix_begin.end(), root_end);
  if (spec.group_prefix_len == 0 || group_end <= root_end) return out;
  int first = 0;
  for (int size : spec.group_sizes()) {
    if (size >= 2) {
      out.levels.push_back({1, root_end, group_end, first, size});
      for (int s = first; s < first + size; ++s) out.suffix_begin[s] = group_end;
    }
    first += size;
  }
  return out;
}

std::int64_t shared_prefix_pages(const SharedPrefixSpec& spec, int page_size) {
  const std::int64_t ps = page_size;
  const auto ceil_pages = [ps](std::int64_t t) { return (t + ps - 1) / ps; };
  const std::int64_t grouped = spec.prefix_len + spec.group_prefix_len;
  std::int64_t pages = ceil_pages(spec.prefix_len);
  if (spec.group_prefix_len > 0)
    pages += static_cast<std::int64_t>(spec.group_sizes().size()) * (ceil_pages(grouped) - spec.prefix_len / ps);
  pages += spec.batch * (ceil_pages(spec.length()) - grouped / ps);
  return pages;
}

std::vector<std::vector<SequenceHandle>> build_shared_prefix_batch(std::span<PagedPool* const> pools,
                                                                   const SharedPrefixSpec& spec,
                                                                   const SharedSegmentFill& fill) {
  if (auto r = spec.invalid_reason(); !r.empty())
    throw PoolError(PoolErrorKind::InvalidArgument, "build_shared_prefix_batch: " + r);
  if (pools.empty()) return {};
  const std::size_t token_bytes = pools.front()->layout().token_bytes();  // K or V of one token, all heads
  for (const PagedPool* p : pools)
    if (p->layout().token_bytes() != token_bytes || p->layout().dtype != pools.front()->layout().dtype)
      throw PoolError(PoolErrorKind::InvalidArgument, "build_shared_prefix_batch: the pools differ in layout");
  std::vector<std::byte> k_data, v_data;
  const void* k = nullptr;  // the segment's data; nullptr without a fill (pages reserved only)
  const void* v = nullptr;
  // One segment's data, generated once and written to every pool.
  const auto segment = [&](SharedSegment kind, int index, std::int64_t len) {
    if (!fill) return;
    k_data.assign(static_cast<std::size_t>(len) * token_bytes, std::byte{0});
    v_data.assign(k_data.size(), std::byte{0});
    fill(kind, index, len, k_data.data(), v_data.data());
    k = k_data.data();
    v = v_data.data();
  };
  const std::size_t n = pools.size();
  std::vector<SequenceHandle> roots(n);
  segment(SharedSegment::prefix, 0, spec.prefix_len);
  for (std::size_t i = 0; i < n; ++i) roots[i] = pools[i]->admit(k, v, spec.prefix_len);

  const std::vector<int> sizes = spec.group_sizes();
  std::vector<std::vector<SequenceHandle>> parents(n, std::vector<SequenceHandle>(sizes.size()));
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    if (spec.group_prefix_len > 0) segment(SharedSegment::group_prefix, static_cast<int>(g), spec.group_prefix_len);
    for (std::size_t i = 0; i < n; ++i) {
      if (spec.group_prefix_len == 0) {
        parents[i][g] = roots[i];
        continue;
      }
      parents[i][g] = pools[i]->fork(roots[i]);
      pools[i]->append_tokens(parents[i][g], k, v, spec.group_prefix_len);
    }
  }
  std::vector<std::vector<SequenceHandle>> handles(n);
  int seq = 0;
  for (std::size_t g = 0; g < sizes.size(); ++g)
    for (int j = 0; j < sizes[g]; ++j, ++seq) {
      segment(SharedSegment::suffix, seq, spec.suffix_len);
      for (std::size_t i = 0; i < n; ++i) {
        const SequenceHandle h = pools[i]->fork(parents[i][g]);
        pools[i]->append_tokens(h, k, v, spec.suffix_len);
        handles[i].push_back(h);
      }
    }
  // Only the N sequences stay: forks hold every shared page, the parents' copied tails are freed.
  for (std::size_t i = 0; i < n; ++i) {
    if (spec.group_prefix_len > 0)
      for (SequenceHandle h : parents[i]) pools[i]->release(h);
    pools[i]->release(roots[i]);
  }
  return handles;
}

}  // namespace decode_bench
