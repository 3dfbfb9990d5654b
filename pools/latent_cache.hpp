#pragma once
// The MLA latent cache on the host: one row of key_dim = kv_lora_rank + rope_dim values per token
// (kernels/mla/mla_shape.hpp), stored once for key and value, contiguous (one slab of max_len rows
// per sequence) or paged (pages of page_size rows, 64 by default, in a CSR block table, in order
// or shuffled). FP16 and BF16 store the values; FP8 E4M3 stores value / scale with one scale for
// the whole cache, applied by the accessor (kv_scale) as for an FP8 K/V cache.
//
// Its accessors are the K/V accessors of one KV head and head_dim key_dim (kernels/kv_accessor.hpp)
// with K and V over the same array, so the reference and the kernels index it as any cache.
// The data are a function of (seed, sequence, token, column) alone, so the two storages and any
// page order hold the same values.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/dtype.hpp"
#include "kernels/kv_accessor.hpp"
#include "pools/kv_layout.hpp"

namespace decode_bench {

enum class LatentStorage { contiguous, paged };

struct LatentCacheConfig {
  int key_dim = 576;  // kv_lora_rank + rope_dim
  DType dtype = DType::bf16;
  LatentStorage storage = LatentStorage::paged;
  int page_size = 64;          // paged
  bool shuffle_pages = false;  // paged: physical pages in a random permutation (seed)
  std::uint64_t seed = 0;
  // The values are uniform in [-amplitude, amplitude) before rounding to dtype.
  float amplitude = 1.f;

  // Empty when usable, else which field and why (FP16, BF16 and FP8 E4M3 only).
  std::string invalid_reason() const;
};

class LatentCache {
 public:
  // lengths: tokens per sequence (0 allowed: an empty sequence owns no page). Throws
  // std::invalid_argument naming the field for a bad config or a negative length.
  LatentCache(const LatentCacheConfig& config, std::vector<std::int32_t> lengths);

  const LatentCacheConfig& config() const { return config_; }
  const std::vector<std::int32_t>& lengths() const { return lengths_; }
  int num_seqs() const { return static_cast<int>(lengths_.size()); }
  std::int64_t max_len() const { return max_len_; }
  // FP8: stored = value / scale (amplitude / 448: the largest value lands on E4M3's largest); else 1.
  float scale() const { return scale_; }

  // The arena: rows of key_dim elements of dtype (contiguous: (num_seqs, max(max_len, 1), key_dim);
  // paged: (num_pages, page_size, key_dim)).
  const std::vector<std::byte>& data() const { return data_; }
  // Paged: the block table (CSR), else empty.
  const std::vector<std::int32_t>& page_indices() const { return page_indices_; }
  const std::vector<std::int32_t>& indptr() const { return indptr_; }
  std::vector<std::int32_t> pages_per_seq() const;  // empty for contiguous

  // Element offset of token t of sequence s (as the accessor computes it).
  std::int64_t row_offset(int seq, std::int64_t t) const;

  // The value stored for (seq, t, c) before rounding: what the data are a function of.
  float generated_value(int seq, std::int64_t t, int c) const;

  // Accessors over arrays laid out as data() (host or device copies), the block table and the
  // scale in the same memory space. T must be the config's dtype's type.
  template <class T>
  ContiguousKV<T> contiguous_view(const T* base, const float* scale) const {
    ContiguousKV<T> kv = ContiguousKV<T>::make(base, base, 1, max_len_ > 0 ? max_len_ : 1, config_.key_dim);
    kv.k_scale = kv.v_scale = scale;
    return kv;
  }
  template <class T>
  PagedKV<T> paged_view(const T* base, const std::int32_t* page_indices, const std::int32_t* indptr,
                        const float* scale) const {
    PagedKV<T> kv;
    kv.k = kv.v = base;
    kv.page_indices = page_indices;
    kv.indptr = indptr;
    kv.page_size = config_.page_size;
    kv.heads_kv = 1;
    kv.head_dim = config_.key_dim;
    kv.k_scale = kv.v_scale = scale;
    return kv;
  }

 private:
  template <class T>
  void fill();

  LatentCacheConfig config_;
  std::vector<std::int32_t> lengths_;
  std::int64_t max_len_ = 0;
  float scale_ = 1.f;
  std::vector<std::byte> data_;
  std::vector<std::int32_t> page_indices_, indptr_;
};

// A layout whose K/V pools hold exactly the latent bytes per token: one head of key_dim / 2
// elements counted once for K and once for V is one key_dim row. The K/V pools (and so
// `decode-bench capacity`) count a latent cache through it. Throws std::invalid_argument for an
// odd key_dim (no such split).
KVLayout latent_capacity_layout(int key_dim, DType dtype);

}  // namespace decode_bench
