// Capacity on the accounting backend (exact, no memory): the seed paper's Figure 5 as exact
// assertions, closed forms for model shapes and shared prefixes, and the input parsers.
#include <gtest/gtest.h>

#include "pools/capacity.hpp"
#include "pools/pool_error.hpp"

namespace decode_bench {
namespace {

CapacityResult run(PoolKind kind, const CapacityQuery& q) { return measure_capacity(kind, q, BackendKind::accounting); }

// Seed paper, Fig. 5: 4 GiB of FP32 K+V, one head, d = 128, every sequence 512 tokens:
// 512 * 128 * 4 B * 2 = 512 KiB per sequence -> 8192 paged; contiguous halves per doubling.
TEST(Capacity, Figure5Exactly) {
  CapacityQuery q;
  const std::pair<std::int64_t, std::int64_t> contiguous[] = {{512, 8192}, {1024, 4096}, {2048, 2048}, {4096, 1024}};
  for (const auto& [max_len, want] : contiguous) {
    q.max_seq_len = max_len;
    const auto c = run(PoolKind::contiguous, q);
    EXPECT_EQ(c.sequences, want) << "contiguous, max_seq_len " << max_len;
    EXPECT_EQ(c.stats.bytes_reserved, std::uint64_t{4} << 30);
    EXPECT_EQ(c.stats.bytes_used, static_cast<std::uint64_t>(want) * 512 * 128 * 4 * 2);
    EXPECT_DOUBLE_EQ(c.stats.fragmentation(), 1.0 - 512.0 / static_cast<double>(max_len));
    EXPECT_NE(c.stopped_by.find("OutOfSlots"), std::string::npos) << c.stopped_by;
    const auto p = run(PoolKind::paged, q);
    EXPECT_EQ(p.sequences, 8192) << "paged, max_seq_len " << max_len;
    EXPECT_EQ(p.stats.units_total, 262144);  // 4 GiB / (16 tokens * 128 * 4 B * 2)
    EXPECT_EQ(p.stats.units_free, 0);
    EXPECT_DOUBLE_EQ(p.stats.fragmentation(), 0.0);
    EXPECT_NE(p.stopped_by.find("OutOfPages"), std::string::npos) << p.stopped_by;
  }
}

TEST(Capacity, PartialPagesWasteAtMostOnePagePerSequence) {
  CapacityQuery q;
  q.lengths = LengthDistribution::fixed(500);  // 31.25 pages -> 32
  q.max_seq_len = 2048;
  const auto p = run(PoolKind::paged, q);
  EXPECT_EQ(p.sequences, 8192);
  EXPECT_DOUBLE_EQ(p.stats.fragmentation(), 12.0 / 512.0);
  q.page_size = 1;  // no rounding at all: 4 GiB / (500 * 1 KiB)
  EXPECT_EQ(run(PoolKind::paged, q).sequences, (std::int64_t{4} << 30) / (500 * 1024));
}

// Llama-style shape: 32 layers x 8 KV heads x d = 128, FP16 -> 128 KiB of K+V per token.
TEST(Capacity, ModelShapeFoldsLayersIntoHeads) {
  CapacityQuery q;
  q.layout = {8, 128, DType::fp16};
  q.layers = 32;
  q.max_seq_len = 4096;
  EXPECT_EQ(run(PoolKind::paged, q).sequences, 64);       // 4 GiB / (512 * 128 KiB)
  EXPECT_EQ(run(PoolKind::contiguous, q).sequences, 8);   // 4 GiB / (4096 * 128 KiB)
}

TEST(Capacity, SharedPrefixClosedForms) {
  CapacityQuery q;
  q.max_seq_len = 512;
  q.prefix = 384;  // 24 full pages shared; each fork adds 128 tokens = 8 pages
  q.lengths = LengthDistribution::fixed(128);
  EXPECT_EQ(run(PoolKind::paged, q).sequences, (262144 - 24) / 8);
  q.share_prefix = false;
  EXPECT_EQ(run(PoolKind::paged, q).sequences, 8192);
  EXPECT_EQ(run(PoolKind::contiguous, q).sequences, 8192);
  q.share_prefix = true;  // contiguous has nothing to share, and the parent takes a slot
  EXPECT_EQ(run(PoolKind::contiguous, q).sequences, 8191);
  // A prefix ending mid-page: the parent holds 25 pages; each fork copies the shared tail on its
  // first append and takes 7 more (pages 25..31) -> 8 pages per fork.
  q.prefix = 392;
  q.lengths = LengthDistribution::fixed(120);
  const auto p = run(PoolKind::paged, q);
  EXPECT_EQ(p.sequences, (262144 - 25) / 8);
  EXPECT_EQ(p.stats.logical_tokens, 392 + p.sequences * 512);
  EXPECT_LT(p.stats.stored_tokens, p.stats.logical_tokens);
}

TEST(Capacity, SuffixesAreClampedToMaxSeqLen) {
  CapacityQuery q;
  q.max_seq_len = 256;
  q.lengths = LengthDistribution::fixed(1000);
  const auto c = run(PoolKind::contiguous, q);
  EXPECT_EQ(c.sequences, 16384);
  EXPECT_DOUBLE_EQ(c.mean_length, 256);
}

TEST(Capacity, RandomLengthsAreSeededAndPagedHoldsMore) {
  CapacityQuery q;
  q.budget_bytes = std::uint64_t{256} << 20;
  q.lengths = LengthDistribution::parse("zipf:mean=512,s=1.1");
  q.max_seq_len = 4096;
  const auto a = run(PoolKind::paged, q), b = run(PoolKind::paged, q);
  EXPECT_EQ(a.sequences, b.sequences);
  EXPECT_EQ(a.stats.bytes_used, b.stats.bytes_used);
  const auto c = run(PoolKind::contiguous, q);
  EXPECT_EQ(c.sequences, 64);  // 256 MiB / 4 MiB slabs, whatever the lengths
  EXPECT_GT(a.sequences, 4 * c.sequences);
  // Paged waste is below one page per sequence.
  EXPECT_LT(a.stats.internal_waste(), static_cast<std::uint64_t>(a.sequences) * 16 * 1024);
  q.seed = 2;
  EXPECT_NE(run(PoolKind::paged, q).stats.bytes_used, a.stats.bytes_used);
}

TEST(Capacity, BadQueriesAreRefusedByName) {
  CapacityQuery q;
  q.prefix = 512;
  try {
    run(PoolKind::paged, q);
    ADD_FAILURE();
  } catch (const PoolError& e) {
    EXPECT_EQ(e.kind(), PoolErrorKind::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find("prefix must be in [0, max_seq_len)"), std::string::npos) << e.what();
  }
  q = CapacityQuery{};
  q.page_size = 0;
  EXPECT_THROW(run(PoolKind::paged, q), PoolError);
  // Every other field names itself (the query is checked before any pool is built).
  const auto reason = [](auto change) {
    CapacityQuery bad;
    change(bad);
    return bad.invalid_reason();
  };
  EXPECT_EQ(reason([](CapacityQuery& b) { b.layers = 0; }), "layers must be >= 1 (got 0)");
  EXPECT_EQ(reason([](CapacityQuery& b) { b.budget_bytes = 0; }), "budget must be > 0 bytes");
  EXPECT_EQ(reason([](CapacityQuery& b) { b.max_seq_len = std::int64_t{1} << 31; }),
            "max_seq_len must be in [1, 2^31) (got 2147483648)");
  EXPECT_EQ(reason([](CapacityQuery& b) { b.max_seq_len = 0; }), "max_seq_len must be in [1, 2^31) (got 0)");
}

TEST(LengthDistribution, ParsesEveryFormAndRejectsBadText) {
  const auto f = LengthDistribution::parse("fixed:512");
  EXPECT_EQ(f.kind, LengthDistribution::Kind::fixed);
  EXPECT_EQ(f.lo, 512);
  const auto u = LengthDistribution::parse("uniform:64..2048");
  EXPECT_EQ(u.lo, 64);
  EXPECT_EQ(u.hi, 2048);
  LengthSampler su(u, 3);
  for (int i = 0; i < 1000; ++i) {
    const auto x = su.next();
    ASSERT_GE(x, 64);
    ASSERT_LE(x, 2048);
  }
  const auto z = LengthDistribution::parse("zipf:mean=512");
  EXPECT_DOUBLE_EQ(z.exponent, 1.1);
  LengthSampler sz(z, 4);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(sz.next());
  EXPECT_NEAR(sum / n, 512, 512 * 0.05);  // the support is chosen to give this mean
  for (const char* bad : {"512", "fixed:", "fixed:0", "fixed:x", "uniform:5", "uniform:9..3", "zipf:mean=0",
                          "zipf:s=1.1", "zipf:mean=10,q=2", "zipf:mean=1e9,s=3", "normal:5"})
    EXPECT_THROW(LengthDistribution::parse(bad), std::invalid_argument) << bad;
  try {
    LengthDistribution::parse("uniform:9..3");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'uniform:9..3'"), std::string::npos) << e.what();
  }
}

// The numeric constructors the sweep's capacity points use; parse() is built on them.
TEST(LengthDistribution, NumericFormsMatchTheParsedOnes) {
  const auto u = LengthDistribution::uniform(1, 1023);
  EXPECT_EQ(u.describe(), LengthDistribution::parse("uniform:1..1023").describe());
  EXPECT_DOUBLE_EQ(u.mean, 512);
  const auto z = LengthDistribution::zipf(512, 1.5), zp = LengthDistribution::parse("zipf:mean=512,s=1.5");
  EXPECT_EQ(z.hi, zp.hi);
  EXPECT_GT(z.hi, 512);
  EXPECT_THROW(LengthDistribution::uniform(0, 5), std::invalid_argument);
  EXPECT_THROW(LengthDistribution::uniform(9, 3), std::invalid_argument);
  EXPECT_THROW(LengthDistribution::zipf(0.5, 1.5), std::invalid_argument);
  EXPECT_THROW(LengthDistribution::zipf(512, 0), std::invalid_argument);
  EXPECT_THROW(LengthDistribution::zipf(1e9, 3), std::invalid_argument);  // out of reach below 2^24
}

TEST(ByteSize, SuffixesParse) {
  EXPECT_EQ(parse_byte_size("4GiB"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_byte_size("4G"), std::uint64_t{4} << 30);
  EXPECT_EQ(parse_byte_size("4GB"), 4000000000ull);
  EXPECT_EQ(parse_byte_size("512MiB"), std::uint64_t{512} << 20);
  EXPECT_EQ(parse_byte_size("1.5KiB"), 1536u);
  EXPECT_EQ(parse_byte_size("4096"), 4096u);
  EXPECT_EQ(parse_byte_size("4096B"), 4096u);
  EXPECT_FALSE(parse_byte_size("4 GiB"));
  EXPECT_FALSE(parse_byte_size("GiB"));
  EXPECT_FALSE(parse_byte_size("4XB"));
  EXPECT_FALSE(parse_byte_size("0.3B"));
  EXPECT_FALSE(parse_byte_size("-1"));
  EXPECT_EQ(format_bytes(std::uint64_t{4} << 30), "4 GiB");
}

}  // namespace
}  // namespace decode_bench
