#pragma once
// decode-bench's MLA latent cache (pools/latent_cache.hpp) as FlashInfer's MLA kernels address it.
// Host-only (no FlashInfer header), so the conversion is tested in every build.
//
// The latent pool stores one row of kv_lora_rank + rope_dim values per token, both parts in one
// array: ckv (the first kv_lora_rank values, key and value) and kpe (the last rope_dim, key only).
// FlashInfer's MLAParams take ckv and kpe as two arrays of pages, each with a page stride and a
// token stride (ckv_stride_page / ckv_stride_n, kpe_stride_page / kpe_stride_n); one array with
// both parts is the same two views, kpe starting kv_lora_rank elements into it:
//   ckv = base, kpe = base + kv_lora_rank, both with token stride key_dim and the page stride of
//   the pool (page_size x key_dim).
// FlashInfer's block table is page indices with a page indptr per request (no last-page length:
// its plan takes each request's KV length). A paged cache passes the pool's own table; a
// contiguous one (one slab of max_len rows per sequence) is addressed as pages of max_len tokens,
// sequence b being page b, so no sequence crosses a page.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "harness/attention_problem.hpp"

namespace decode_bench {

// The latent widths FlashInfer's MLA kernel is instantiated for here (DeepSeek-V3, Kimi K2).
inline constexpr int kFlashInferMlaCkvDim = 512;
inline constexpr int kFlashInferMlaKpeDim = 64;

struct MlaLatentPages {
  int page_size = 0;              // tokens a page (FlashInfer's block_size)
  std::int64_t page_stride = 0;   // elements between pages, for ckv and kpe alike
  std::int64_t row_stride = 0;    // elements between a page's tokens (key_dim)
  std::int64_t kpe_offset = 0;    // kpe = latent base + kpe_offset elements (kv_lora_rank)
  bool slots_as_pages = false;    // contiguous: sequence b is page b
  std::vector<std::int32_t> indptr;   // host page indptr, batch + 1 (the pool's when paged)
  std::vector<std::int32_t> indices;  // host page indices, contiguous only (0 .. batch - 1)
};

namespace mla_layout_detail {
inline constexpr std::int64_t kMaxU32 = std::numeric_limits<std::uint32_t>::max();
}

// The layout of an MLA problem's latent cache (p.mla set; host fields only, no device pointer is
// read), or why FlashInfer's MLA kernel cannot address it: its strides are 32-bit, and it counts
// tokens from the start of the block table (page indptr x page_size + position) in 32 bits.
inline std::optional<std::string> mla_latent_pages_reason(const AttentionProblem& p, MlaLatentPages* out = nullptr) {
  using mla_layout_detail::kMaxU32;
  if (!p.mla) return "not an MLA problem (attention mla)";
  MlaLatentPages l;
  const std::int64_t key_dim = p.mla->key_dim();
  l.row_stride = key_dim;
  l.kpe_offset = p.mla->kv_lora_rank;
  if (p.layout == KvLayoutKind::paged) {
    if (p.paged.page_size < 1) return "page_size " + std::to_string(p.paged.page_size) + " must be >= 1";
    if (p.host_indptr.size() != static_cast<std::size_t>(p.batch) + 1)
      return "the host page indptr has " + std::to_string(p.host_indptr.size()) + " entries, not batch + 1 = " +
             std::to_string(p.batch + 1);
    l.page_size = p.paged.page_size;
    l.page_stride = std::int64_t{p.paged.page_size} * key_dim;
    l.indptr = p.host_indptr;
  } else {
    // A slab of max(max_len, 1) rows per sequence (LatentCache::contiguous_view).
    const std::int64_t slot_rows = p.max_len > 0 ? p.max_len : 1;
    if (slot_rows > std::numeric_limits<std::int32_t>::max())
      return "max_len " + std::to_string(p.max_len) + " does not fit FlashInfer's 32-bit page size";
    l.page_size = static_cast<int>(slot_rows);
    l.page_stride = slot_rows * key_dim;
    l.slots_as_pages = true;
    for (int b = 0; b <= p.batch; ++b) l.indptr.push_back(b);
    for (int b = 0; b < p.batch; ++b) l.indices.push_back(b);
  }
  if (l.page_stride > kMaxU32)
    return "a page of " + std::to_string(l.page_size) + " latent rows (" + std::to_string(l.page_stride) +
           " elements) does not fit FlashInfer's 32-bit page stride";
  const std::int64_t tokens = std::int64_t{l.indptr.back()} * l.page_size;
  if (tokens > kMaxU32)
    return std::to_string(l.indptr.back()) + " pages of " + std::to_string(l.page_size) +
           " tokens: FlashInfer's MLA kernel counts the block table's tokens in 32 bits";
  if (out != nullptr) *out = std::move(l);
  return std::nullopt;
}

}  // namespace decode_bench
