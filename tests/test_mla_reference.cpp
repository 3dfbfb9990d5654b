// The MLA decode reference, the latent cache and the MLA traffic/FLOP model, host-side: closed
// forms (one token, zero queries, an empty sequence, values that are the key's first 512 columns),
// storage invariance (contiguous, paged, shuffled, page 7), q_len 2's causal row, and DeepSeek-V3's
// latent bytes per token and per 32K context.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/mla/mla_reference.hpp"
#include "pools/capacity.hpp"
#include "pools/latent_cache.hpp"

namespace decode_bench {
namespace {

struct RefRun {
  std::vector<double> o, lse;
};

std::vector<float> make_q(const MlaShape& s, int batch, std::uint64_t seed, float amplitude = 1.f) {
  std::vector<float> q(static_cast<std::size_t>(batch) * s.rows() * s.key_dim());
  std::uint64_t x = seed * 2654435761u + 1;
  for (float& v : q) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = amplitude * (static_cast<float>(x >> 40) / static_cast<float>(1 << 24) - 0.5f);
  }
  return q;
}

template <class T>
RefRun reference(const MlaShape& s, const LatentCache& c, const std::vector<float>& q) {
  RefRun r;
  r.o.resize(static_cast<std::size_t>(c.num_seqs()) * s.rows() * s.value_dim());
  r.lse.resize(static_cast<std::size_t>(c.num_seqs()) * s.rows());
  const T* base = reinterpret_cast<const T*>(c.data().data());
  const float scale = c.scale();
  if (c.config().storage == LatentStorage::contiguous) {
    mla_reference(s, c.contiguous_view(base, &scale), c.num_seqs(), c.lengths().data(), q.data(), r.o.data(), r.lse.data());
  } else {
    mla_reference(s, c.paged_view(base, c.page_indices().data(), c.indptr().data(), &scale), c.num_seqs(),
                  c.lengths().data(), q.data(), r.o.data(), r.lse.data());
  }
  return r;
}

template <class T>
double stored(const LatentCache& c, int seq, std::int64_t t, int col) {
  return to_double(reinterpret_cast<const T*>(c.data().data())[c.row_offset(seq, t) + col]) * c.scale();
}

MlaShape small_shape() {
  MlaShape s;
  s.heads_q = 3;
  s.kv_lora_rank = 32;
  s.rope_dim = 8;
  return s;
}

TEST(MlaShape, DeepSeekDefaultsAndScale) {
  const MlaShape s;
  EXPECT_EQ(s.key_dim(), 576);
  EXPECT_EQ(s.value_dim(), 512);
  EXPECT_DOUBLE_EQ(s.softmax_scale, 1.0 / std::sqrt(192.0));
  EXPECT_DOUBLE_EQ(deepseek_softmax_scale(64), s.softmax_scale);
  EXPECT_EQ(s.invalid_reason(), "");
  MlaShape bad = s;
  bad.heads_q = 0;
  EXPECT_NE(bad.invalid_reason().find("heads_q"), std::string::npos);
  bad = s;
  bad.q_len = 0;
  EXPECT_NE(bad.invalid_reason().find("q_len"), std::string::npos);
}

// One visible token: its weight is 1, so o is its first value_dim stored values and lse its logit.
TEST(MlaReference, OneTokenIsItsValuePrefixAndItsLogit) {
  const MlaShape s = small_shape();
  LatentCacheConfig cfg;
  cfg.key_dim = s.key_dim();
  cfg.storage = LatentStorage::paged;
  cfg.page_size = 4;
  const LatentCache c(cfg, {1, 1});
  const auto q = make_q(s, 2, 1);
  const RefRun r = reference<__nv_bfloat16>(s, c, q);
  for (int b = 0; b < 2; ++b)
    for (int h = 0; h < s.heads_q; ++h) {
      const std::size_t row = static_cast<std::size_t>(b) * s.heads_q + h;
      double dot = 0;
      for (int col = 0; col < s.key_dim(); ++col) dot += q[row * s.key_dim() + col] * stored<__nv_bfloat16>(c, b, 0, col);
      EXPECT_NEAR(r.lse[row], dot * s.softmax_scale, 1e-12);
      for (int j = 0; j < s.value_dim(); ++j) EXPECT_EQ(r.o[row * s.value_dim() + j], stored<__nv_bfloat16>(c, b, 0, j));
    }
}

// q = 0: every logit 0, uniform weights: o is the mean value row and lse = log(len).
TEST(MlaReference, ZeroQueryIsTheMeanValueRow) {
  const MlaShape s = small_shape();
  LatentCacheConfig cfg;
  cfg.key_dim = s.key_dim();
  cfg.dtype = DType::fp16;
  cfg.storage = LatentStorage::contiguous;
  const LatentCache c(cfg, {5, 100});
  const std::vector<float> q(static_cast<std::size_t>(2) * s.rows() * s.key_dim(), 0.f);
  const RefRun r = reference<__half>(s, c, q);
  for (int b = 0; b < 2; ++b) {
    const int len = c.lengths()[b];
    for (int h = 0; h < s.heads_q; ++h) {
      const std::size_t row = static_cast<std::size_t>(b) * s.heads_q + h;
      EXPECT_NEAR(r.lse[row], std::log(static_cast<double>(len)), 1e-12);
      for (int j = 0; j < s.value_dim(); ++j) {
        double mean = 0;
        for (int t = 0; t < len; ++t) mean += stored<__half>(c, b, t, j);
        EXPECT_NEAR(r.o[row * s.value_dim() + j], mean / len, 1e-12);
      }
    }
  }
}

// An empty sequence has no visible token: o = 0, lse = -inf, and its neighbours are unaffected.
TEST(MlaReference, EmptySequenceGivesZeroAndMinusInfinity) {
  const MlaShape s = small_shape();
  LatentCacheConfig cfg;
  cfg.key_dim = s.key_dim();
  const LatentCache with_empty(cfg, {9, 0, 9});
  EXPECT_EQ(with_empty.pages_per_seq(), (std::vector<std::int32_t>{1, 0, 1}));
  const auto q = make_q(s, 3, 2);
  const RefRun r = reference<__nv_bfloat16>(s, with_empty, q);
  for (int h = 0; h < s.heads_q; ++h) {
    const std::size_t row = s.heads_q + h;
    EXPECT_EQ(r.lse[row], -std::numeric_limits<double>::infinity());
    for (int j = 0; j < s.value_dim(); ++j) EXPECT_EQ(r.o[row * s.value_dim() + j], 0.0);
    EXPECT_TRUE(std::isfinite(r.lse[h]));
  }
}

// The same (seed, sequence, token, column) values whatever the storage: contiguous, paged in order,
// paged shuffled at page 7 give bit-identical results (the same doubles in the same order).
TEST(MlaReference, StorageAndPageOrderDoNotChangeTheResult) {
  const MlaShape s = small_shape();
  const std::vector<std::int32_t> lengths = {1, 63, 64, 65, 130};
  const auto q = make_q(s, static_cast<int>(lengths.size()), 3);
  LatentCacheConfig cfg;
  cfg.key_dim = s.key_dim();
  cfg.seed = 11;
  cfg.storage = LatentStorage::contiguous;
  const RefRun want = reference<__nv_bfloat16>(s, LatentCache(cfg, lengths), q);
  cfg.storage = LatentStorage::paged;
  for (const int page : {1, 7, 64})
    for (const bool shuffle : {false, true}) {
      cfg.page_size = page;
      cfg.shuffle_pages = shuffle;
      const LatentCache c(cfg, lengths);
      if (shuffle) {
        EXPECT_FALSE(std::is_sorted(c.page_indices().begin(), c.page_indices().end())) << "page " << page;
      }
      const RefRun got = reference<__nv_bfloat16>(s, c, q);
      EXPECT_EQ(got.o, want.o) << "page " << page << (shuffle ? " shuffled" : "");
      EXPECT_EQ(got.lse, want.lse) << "page " << page << (shuffle ? " shuffled" : "");
    }
}

// The value is the key's first kv_lora_rank columns: with q zero on the rope columns, their values
// change nothing; with q non-zero there, they move the weights (and so o).
TEST(MlaReference, RopeColumnsAreKeyOnly) {
  const MlaShape s = small_shape();
  LatentCacheConfig cfg;
  cfg.key_dim = s.key_dim();
  cfg.storage = LatentStorage::contiguous;
  std::vector<float> q = make_q(s, 1, 4, 4.f);
  for (int r = 0; r < s.rows(); ++r)
    for (int col = s.value_dim(); col < s.key_dim(); ++col) q[static_cast<std::size_t>(r) * s.key_dim() + col] = 0.f;
  cfg.seed = 1;
  const LatentCache a(cfg, {40});
  // Another cache whose nope columns equal a's and whose rope columns differ: build it by hand.
  std::vector<__nv_bfloat16> b_data(reinterpret_cast<const __nv_bfloat16*>(a.data().data()),
                                    reinterpret_cast<const __nv_bfloat16*>(a.data().data()) + 40 * s.key_dim());
  for (int t = 0; t < 40; ++t)
    for (int col = s.value_dim(); col < s.key_dim(); ++col)
      b_data[static_cast<std::size_t>(t) * s.key_dim() + col] = from_float<__nv_bfloat16>(0.5f + 0.01f * t);
  const auto run_on = [&](const __nv_bfloat16* base, const std::vector<float>& query) {
    RefRun r;
    r.o.resize(static_cast<std::size_t>(s.rows()) * s.value_dim());
    r.lse.resize(s.rows());
    const std::int32_t len = 40;
    mla_reference(s, ContiguousKV<__nv_bfloat16>::make(base, base, 1, 40, s.key_dim()), 1, &len, query.data(),
                  r.o.data(), r.lse.data());
    return r;
  };
  const auto* a_base = reinterpret_cast<const __nv_bfloat16*>(a.data().data());
  EXPECT_EQ(run_on(a_base, q).o, run_on(b_data.data(), q).o);
  for (int r = 0; r < s.rows(); ++r) q[static_cast<std::size_t>(r) * s.key_dim() + s.value_dim()] = 3.f;
  EXPECT_NE(run_on(a_base, q).o, run_on(b_data.data(), q).o);
}

// q_len 2: position 0 sees all but the last token (it is the q_len 1 answer on the sequence one
// shorter), position 1 sees every token (the q_len 1 answer on the whole sequence).
TEST(MlaReference, SecondQueryTokenSeesOneMoreToken) {
  MlaShape two = small_shape();
  two.q_len = 2;
  MlaShape one = small_shape();
  LatentCacheConfig cfg;
  cfg.key_dim = two.key_dim();
  cfg.page_size = 5;
  const LatentCache full(cfg, {17}), shorter(cfg, {16});
  const auto q2 = make_q(two, 1, 5);
  const RefRun r2 = reference<__nv_bfloat16>(two, full, q2);
  const std::size_t head_block = static_cast<std::size_t>(one.heads_q) * one.key_dim();
  const std::vector<float> q_first(q2.begin(), q2.begin() + head_block), q_second(q2.begin() + head_block, q2.end());
  const RefRun first = reference<__nv_bfloat16>(one, shorter, q_first);
  const RefRun second = reference<__nv_bfloat16>(one, full, q_second);
  const std::size_t vd_block = static_cast<std::size_t>(one.heads_q) * one.value_dim();
  EXPECT_EQ(std::vector<double>(r2.o.begin(), r2.o.begin() + vd_block), first.o);
  EXPECT_EQ(std::vector<double>(r2.o.begin() + vd_block, r2.o.end()), second.o);
  EXPECT_EQ(std::vector<double>(r2.lse.begin(), r2.lse.begin() + one.heads_q), first.lse);
}

// FP8 E4M3 stores value / scale; the reference reads stored x scale, so a one-token o is that.
TEST(MlaReference, Fp8StoresValueOverTheScale) {
  const MlaShape s = small_shape();
  LatentCacheConfig cfg;
  cfg.key_dim = s.key_dim();
  cfg.dtype = DType::fp8_e4m3;
  cfg.amplitude = 2.f;
  const LatentCache c(cfg, {1});
  EXPECT_FLOAT_EQ(c.scale(), 2.f / 448.f);
  const RefRun r = reference<__nv_fp8_e4m3>(s, c, make_q(s, 1, 6));
  for (int j = 0; j < s.value_dim(); ++j) {
    const double want = stored<__nv_fp8_e4m3>(c, 0, 0, j);
    EXPECT_EQ(r.o[j], want);
    EXPECT_NEAR(want, c.generated_value(0, 0, j), 2.f * 0.0625) << "E4M3 keeps 3 mantissa bits";
  }
}

TEST(LatentCache, RefusesWhatItDoesNotStore) {
  LatentCacheConfig cfg;
  cfg.dtype = DType::fp32;
  EXPECT_THROW(LatentCache(cfg, {1}), std::invalid_argument);
  cfg.dtype = DType::bf16;
  cfg.page_size = 0;
  EXPECT_THROW(LatentCache(cfg, {1}), std::invalid_argument);
  cfg.page_size = 64;
  EXPECT_THROW(LatentCache(cfg, {4, -1}), std::invalid_argument);
  EXPECT_THROW(latent_capacity_layout(575, DType::bf16), std::invalid_argument);
}

// Traffic: the latent rows once per sequence, q in and o out (16-bit), lse out (FP32); FLOPs 2 h (576 + 512) per
// visible token and query position.
TEST(MlaModel, ClosedFormsForDeepSeekV3) {
  MlaShape s;  // 128 heads, 512 + 64
  const std::vector<std::int32_t> lengths = {4096, 100};
  const MlaTrafficModel m = mla_traffic_model(s, DType::bf16, lengths, {64, 2});
  EXPECT_DOUBLE_EQ(m.latent_bytes, (4096.0 + 100.0) * 576 * 2);
  EXPECT_DOUBLE_EQ(m.q_bytes, 2.0 * 128 * 576 * 2);
  EXPECT_DOUBLE_EQ(m.o_bytes, 2.0 * 128 * (512 * 2 + 4));
  EXPECT_DOUBLE_EQ(m.page_table_bytes, 4.0 * (66 + 3));
  EXPECT_DOUBLE_EQ(m.scale_bytes, 0.0);
  EXPECT_DOUBLE_EQ(m.flops, 2.0 * 128 * (576 + 512) * (4096 + 100));
  s.q_len = 2;  // the first position sees one token fewer
  EXPECT_DOUBLE_EQ(mla_traffic_model(s, DType::bf16, lengths, {}).flops,
                   2.0 * 128 * (576 + 512) * (2 * 4096 - 1 + 2 * 100 - 1));
  EXPECT_DOUBLE_EQ(mla_traffic_model(s, DType::fp8_e4m3, lengths, {}).latent_bytes, (4096.0 + 100.0) * 576);
  EXPECT_DOUBLE_EQ(mla_traffic_model(s, DType::fp8_e4m3, lengths, {}).scale_bytes, 4.0);
}

// Long sequences: intensity -> 2 h q_len (576 + 512) / (576 x 2) FLOP/B for BF16: about 30 at
// h_q 16 (under an H100's ridge) and 242 at 128 (over it).
TEST(MlaModel, IntensityGrowsWithHeadsTimesQueryTokens) {
  MlaShape s;
  for (const int h : {16, 128}) {
    s.heads_q = h;
    const double want = 2.0 * h * 1088 / 1152;
    EXPECT_NEAR(mla_traffic_model(s, DType::bf16, {1 << 20}, {}).arithmetic_intensity(), want, 0.01 * want) << h;
  }
}

// KV-cache calculators quote DeepSeek-V3 (61 layers, 512 + 64 latent, BF16) at a 32K context as
// 2.10 GiB (Llama 3.1 70B: 9.77 GiB). Their "32K" is 32,000 tokens, as Llama's
// 80 x 8 x 128 x 2 x 2 B x 32,000 = 9.766 GiB shows; DeepSeek-V3 is then 2,248,704,000 bytes,
// 2.094 GiB, within 0.01 GiB of the quoted 2.10. The capacity engine,
// counting the latent row through latent_capacity_layout, holds exactly one such sequence in
// that many bytes (and in one byte less than two), and none in one byte fewer (paged).
TEST(MlaCapacity, DeepSeekV3LatentCacheAt32KOver61Layers) {
  MlaShape s;
  EXPECT_EQ(mla_latent_token_bytes(s, DType::bf16), 1152u);
  const KVLayout layout = latent_capacity_layout(s.key_dim(), DType::bf16);
  EXPECT_EQ(layout.token_kv_bytes(), 1152u);
  const std::uint64_t bytes = layout.token_kv_bytes() * 61 * 32000;
  EXPECT_EQ(bytes, 2248704000u);
  const double gib = static_cast<double>(bytes) / (1u << 30);
  EXPECT_NEAR(gib, 2.10, 0.01);
  EXPECT_NEAR(80.0 * 8 * 128 * 2 * 2 * 32000 / (1u << 30), 9.77, 0.01);  // the quoted Llama 3.1 70B figure

  CapacityQuery q;
  q.layout = layout;
  q.layers = 61;
  q.lengths = LengthDistribution::fixed(32000);
  q.max_seq_len = 32000;
  q.page_size = 64;  // 32000 = 500 pages of 64
  for (const PoolKind kind : {PoolKind::contiguous, PoolKind::paged}) {
    q.budget_bytes = bytes;
    EXPECT_EQ(measure_capacity(kind, q, BackendKind::accounting).sequences, 1) << pool_kind_name(kind);
    q.budget_bytes = 2 * bytes - 1;
    EXPECT_EQ(measure_capacity(kind, q, BackendKind::accounting).sequences, 1) << pool_kind_name(kind);
  }
  q.budget_bytes = bytes - 1;  // 499 pages of 64 tokens: not one whole sequence
  EXPECT_EQ(measure_capacity(PoolKind::paged, q, BackendKind::accounting).sequences, 0);
}

}  // namespace
}  // namespace decode_bench
