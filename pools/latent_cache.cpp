#include "pools/latent_cache.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

namespace decode_bench {
namespace {

// splitmix64: a well-mixed 64-bit hash of the element's coordinates.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

constexpr float kE4m3Max = 448.f;

}  // namespace

std::string LatentCacheConfig::invalid_reason() const {
  if (key_dim < 1) return "key_dim must be >= 1 (got " + std::to_string(key_dim) + ")";
  if (dtype != DType::fp16 && dtype != DType::bf16 && dtype != DType::fp8_e4m3)
    return "dtype " + std::string(dtype_name(dtype)) + ": the latent cache stores fp16, bf16 or fp8_e4m3";
  if (storage == LatentStorage::paged && page_size < 1)
    return "page_size must be >= 1 (got " + std::to_string(page_size) + ")";
  if (!(amplitude > 0)) return "amplitude must be > 0";
  return {};
}

float LatentCache::generated_value(int seq, std::int64_t t, int c) const {
  const std::uint64_t h = mix(config_.seed ^ mix((static_cast<std::uint64_t>(seq) << 40) ^
                                                 (static_cast<std::uint64_t>(t) << 12) ^ static_cast<std::uint64_t>(c)));
  const float u = static_cast<float>(h >> 40) / static_cast<float>(1ull << 24);  // [0, 1)
  return config_.amplitude * (2.f * u - 1.f);
}

LatentCache::LatentCache(const LatentCacheConfig& config, std::vector<std::int32_t> lengths)
    : config_(config), lengths_(std::move(lengths)) {
  if (const std::string r = config_.invalid_reason(); !r.empty()) throw std::invalid_argument("latent cache: " + r);
  for (std::size_t s = 0; s < lengths_.size(); ++s) {
    if (lengths_[s] < 0)
      throw std::invalid_argument("latent cache: length of sequence " + std::to_string(s) + " is " +
                                  std::to_string(lengths_[s]) + " (must be >= 0)");
    max_len_ = std::max<std::int64_t>(max_len_, lengths_[s]);
  }
  if (config_.dtype == DType::fp8_e4m3) scale_ = config_.amplitude / kE4m3Max;
  const std::size_t elem = dtype_bytes(config_.dtype), row = elem * static_cast<std::size_t>(config_.key_dim);
  if (config_.storage == LatentStorage::contiguous) {
    data_.resize(lengths_.size() * static_cast<std::size_t>(std::max<std::int64_t>(max_len_, 1)) * row);
  } else {
    indptr_.assign(1, 0);
    for (const std::int32_t len : lengths_)
      indptr_.push_back(indptr_.back() + (len + config_.page_size - 1) / config_.page_size);
    const std::int32_t pages = indptr_.back();
    page_indices_.resize(static_cast<std::size_t>(pages));
    std::iota(page_indices_.begin(), page_indices_.end(), 0);
    if (config_.shuffle_pages) {
      std::mt19937_64 rng(mix(config_.seed + 0x5eed));
      std::shuffle(page_indices_.begin(), page_indices_.end(), rng);
    }
    data_.resize(static_cast<std::size_t>(std::max(pages, 1)) * config_.page_size * row);
  }
  switch (config_.dtype) {
    case DType::fp16: fill<__half>(); break;
    case DType::bf16: fill<__nv_bfloat16>(); break;
    case DType::fp8_e4m3: fill<__nv_fp8_e4m3>(); break;
    default: break;  // refused by invalid_reason
  }
}

template <class T>
void LatentCache::fill() {
  T* base = reinterpret_cast<T*>(data_.data());
  const float inv_scale = 1.f / scale_;
  for (int s = 0; s < num_seqs(); ++s)
    for (std::int64_t t = 0; t < lengths_[s]; ++t) {
      T* row = base + row_offset(s, t);
      for (int c = 0; c < config_.key_dim; ++c) row[c] = from_float<T>(generated_value(s, t, c) * inv_scale);
    }
}

std::int64_t LatentCache::row_offset(int seq, std::int64_t t) const {
  if (config_.storage == LatentStorage::contiguous)
    return (seq * std::max<std::int64_t>(max_len_, 1) + t) * config_.key_dim;
  const std::int32_t page = page_indices_[static_cast<std::size_t>(indptr_[seq] + t / config_.page_size)];
  return (static_cast<std::int64_t>(page) * config_.page_size + t % config_.page_size) * config_.key_dim;
}

std::vector<std::int32_t> LatentCache::pages_per_seq() const {
  std::vector<std::int32_t> p;
  for (std::size_t s = 0; s + 1 < indptr_.size(); ++s) p.push_back(indptr_[s + 1] - indptr_[s]);
  return p;
}

KVLayout latent_capacity_layout(int key_dim, DType dtype) {
  if (key_dim < 2 || key_dim % 2 != 0)
    throw std::invalid_argument("latent row of " + std::to_string(key_dim) +
                                " values (kv_lora_rank + rope_dim) must be even to count as K and V halves");
  return {1, key_dim / 2, dtype};
}

}  // namespace decode_bench
