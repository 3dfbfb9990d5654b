// The short- and ragged-batch planning of the CUDA-core flash-decode (kernels/decode_balance.hpp),
// host-side: the work list covers every token of every sequence exactly once, bounds each item's
// work and the partial workspace, orders items longest first; the tiling rule picks the short
// tiling for the short batches and nothing else.
#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/decode_balance.hpp"
#include "pools/length_distribution.hpp"

namespace decode_bench {
namespace {

// Every sequence has exactly splits 0..n-1, n = ceil(L / C) (1 for L = 0), each item's share
// ceil(L / n) <= C, partial ranges disjoint and summing to partial_splits, items by work descending.
void expect_valid(const BalancedWork& w, const std::vector<std::int32_t>& lengths, int tile) {
  ASSERT_GT(w.chunk_bound, 0);
  EXPECT_EQ(w.chunk_bound % tile, 0);
  EXPECT_GE(w.chunk_bound, 2 * tile);
  std::map<int, std::vector<int>> splits_of;
  std::vector<std::int64_t> work;
  for (const auto& it : w.items) {
    ASSERT_GE(it.seq, 0);
    ASSERT_LT(it.seq, static_cast<int>(lengths.size()));
    const std::int64_t len = lengths[it.seq];
    const std::int64_t n = std::max<std::int64_t>(1, (len + w.chunk_bound - 1) / w.chunk_bound);
    EXPECT_EQ(it.num_splits, n) << "seq " << it.seq;
    EXPECT_LE((len + n - 1) / n, w.chunk_bound);
    splits_of[it.seq].push_back(it.split);
    work.push_back((len + n - 1) / n);
  }
  EXPECT_TRUE(std::is_sorted(work.rbegin(), work.rend())) << "items must come longest first";
  ASSERT_EQ(splits_of.size(), lengths.size()) << "every sequence has an item (empty ones write the empty state)";
  std::int64_t partial = 0;
  std::vector<std::pair<int, int>> ranges;  // [base, base + n) per split sequence
  int max_splits = 1;
  for (auto& [seq, splits] : splits_of) {
    std::sort(splits.begin(), splits.end());
    std::vector<int> expect(splits.size());
    std::iota(expect.begin(), expect.end(), 0);
    EXPECT_EQ(splits, expect) << "seq " << seq;
    const int n = static_cast<int>(splits.size());
    max_splits = std::max(max_splits, n);
    if (n > 1) {
      partial += n;
      const auto it = std::find_if(w.items.begin(), w.items.end(), [&](const DecodeWorkItem& i) { return i.seq == seq; });
      ranges.push_back({it->partial_base, it->partial_base + n});
      for (const auto& i : w.items) {
        if (i.seq == seq) {
          EXPECT_EQ(i.partial_base, it->partial_base);
        }
      }
    }
  }
  EXPECT_EQ(partial, w.partial_splits);
  EXPECT_LE(w.partial_splits, static_cast<std::int64_t>(w.items.size()));  // bounded by the grid
  EXPECT_EQ(max_splits, w.max_splits);
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 0; i + 1 < ranges.size(); ++i) EXPECT_LE(ranges[i].second, ranges[i + 1].first);
  if (!ranges.empty()) {
    EXPECT_LE(ranges.back().second, w.partial_splits);
  }
}

// The order exactly: items in (sequence, split) order, then stably by work descending (ties keep
// that order), for works of one value (no radix pass), within a byte, and across three bytes.
TEST(DecodeBalance, ItemsComeLongestFirstTiesInSequenceOrder) {
  std::mt19937 rng(11);
  for (const std::int32_t spread : {0, 200, 5000, 3000000}) {
    SCOPED_TRACE(spread);
    std::vector<std::int32_t> lengths(300);
    for (auto& l : lengths) l = 1000 + (spread == 0 ? 0 : static_cast<std::int32_t>(rng() % spread));
    lengths[7] = lengths[3];  // a tie between sequences
    for (const int slots : {1, 132}) {
      const BalancedWork w = balance_decode_work(lengths, 8, slots, 64);
      std::vector<DecodeWorkItem> expect;
      std::vector<std::int64_t> work;
      for (std::size_t b = 0; b < lengths.size(); ++b) {
        const std::int64_t n = std::max<std::int64_t>(1, (lengths[b] + w.chunk_bound - 1) / w.chunk_bound);
        for (std::int64_t k = 0; k < n; ++k) {
          expect.push_back({static_cast<std::int32_t>(b), static_cast<std::int32_t>(k), static_cast<std::int32_t>(n), 0});
          work.push_back((lengths[b] + n - 1) / n);
        }
      }
      std::vector<std::size_t> order(expect.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return work[a] > work[b]; });
      ASSERT_EQ(w.items.size(), expect.size());
      for (std::size_t i = 0; i < order.size(); ++i) {
        EXPECT_EQ(w.items[i].seq, expect[order[i]].seq) << i;
        EXPECT_EQ(w.items[i].split, expect[order[i]].split) << i;
      }
    }
  }
}

TEST(DecodeBalance, ChunkBoundIsThePerSlotShareInWholeTiles) {
  // 32 KV heads, 264 slots x 2 shares: total 100000 + 1 + 50 + 0 = 100051 tokens per head;
  // share = ceil(32 * 100051 / 528) = 6064 -> 6080 (whole 32-token tiles).
  const std::vector<std::int32_t> lengths{0, 1, 100000, 50};
  const BalancedWork w = balance_decode_work(lengths, 32, 264, 32);
  EXPECT_EQ(w.chunk_bound, 6080);
  expect_valid(w, lengths, 32);
  EXPECT_EQ(w.max_splits, 17);  // ceil(100000 / 6080)
  EXPECT_EQ(w.items.size(), 17u + 3u);
  EXPECT_EQ(w.items.front().seq, 2);  // the long sequence's splits first
  EXPECT_EQ(w.items.back().seq, 0);   // the empty one last
  EXPECT_EQ(w.partial_splits, 17);
}

TEST(DecodeBalance, ShortBatchesAreNotSplitBelowTwoTiles) {
  const std::vector<std::int32_t> lengths{3, 7, 0, 64, 1};
  const BalancedWork w = balance_decode_work(lengths, 1, 132, 128);
  EXPECT_EQ(w.chunk_bound, 256);
  expect_valid(w, lengths, 128);
  EXPECT_EQ(w.partial_splits, 0);  // no sequence split: no partials, no counters
  EXPECT_EQ(w.items.size(), lengths.size());
}

// The ragged point: 64 sequences of zipf lengths (alpha 1.2, mean 1K), plus the extremes
// the GPU tests use (0, 1, 100x the median). No item holds more than the per-slot share, so a
// greedy block scheduler finishes within about 1.5 shares of the ideal whatever the mix.
TEST(DecodeBalance, ZipfBatchesWithExtremeLengths) {
  LengthSampler sampler(LengthDistribution::zipf(1024, 1.2), 7);
  for (int tile : {16, 32, 128}) {
    std::vector<std::int32_t> lengths;
    for (int b = 0; b < 64; ++b) lengths.push_back(static_cast<std::int32_t>(sampler.next()));
    std::vector<std::int32_t> sorted = lengths;
    std::sort(sorted.begin(), sorted.end());
    const std::int32_t median = sorted[sorted.size() / 2];
    lengths.insert(lengths.end(), {0, 1, 100 * median, 65536});
    for (auto [heads, slots] : {std::pair{32, 132}, std::pair{32, 792}, std::pair{1, 132}, std::pair{8, 264}}) {
      const BalancedWork w = balance_decode_work(lengths, heads, slots, tile);
      SCOPED_TRACE("tile " + std::to_string(tile) + " heads " + std::to_string(heads) + " slots " + std::to_string(slots));
      expect_valid(w, lengths, tile);
      const std::int64_t total = std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0});
      const std::int64_t share = (total * heads + 2 * slots - 1) / (2 * slots);
      EXPECT_LE(w.chunk_bound, std::max<std::int64_t>(share + tile, 2 * tile));
      EXPECT_GT(w.max_splits, 1);  // the 65536-token sequence is always cut
    }
  }
}

TEST(DecodeBalance, TheItemCountStaysWithinTheGrid) {
  // 40000 sequences of 4096 tokens (one of 1) on a huge slot count: the per-slot share would cut
  // each into 15 items (600K in all, above the grid's 65535 rows), so the bound doubles until one
  // item per sequence (40000) remains.
  std::vector<std::int32_t> ragged(40000, 4096);
  ragged[0] = 1;
  const BalancedWork w = balance_decode_work(ragged, 32, 10'000'000, 16);
  EXPECT_LE(static_cast<std::int64_t>(w.items.size()), kMaxWorkItems);
  EXPECT_GE(w.chunk_bound, 4096);
  expect_valid(w, ragged, 16);
  const std::vector<std::int32_t> too_many(kMaxWorkItems + 1, 3);
  EXPECT_THROW((void)balance_decode_work(too_many, 1, 132, 16), std::invalid_argument);
}

TEST(DecodeBalance, BadInputIsRefusedWithTheReason) {
  const std::vector<std::int32_t> negative{4, -1};
  try {
    (void)balance_decode_work(negative, 1, 132, 32);
    FAIL() << "a negative length must throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("length -1 of sequence 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)balance_decode_work({}, 1, 132, 32), std::invalid_argument);
  const std::vector<std::int32_t> one{4};
  EXPECT_THROW((void)balance_decode_work(one, 0, 132, 32), std::invalid_argument);
  EXPECT_THROW((void)balance_decode_work(one, 1, 0, 32), std::invalid_argument);
  EXPECT_THROW((void)balance_decode_work(one, 1, 132, 0), std::invalid_argument);
}

TEST(DecodeBalance, RaggedMeansLengthsDiffer) {
  EXPECT_FALSE(lengths_are_ragged({}));
  const std::vector<std::int32_t> fixed{512, 512, 512}, ragged{512, 0, 512};
  EXPECT_FALSE(lengths_are_ragged(fixed));
  EXPECT_TRUE(lengths_are_ragged(ragged));
}

// H100 numbers for FP16, d = 128, group 1: the standard tiling is 128-token tiles, one block per SM.
TilingQuery h100(int seqs, int heads, std::int64_t len) {
  TilingQuery q;
  q.head_blocks = static_cast<std::int64_t>(seqs) * heads;
  q.standard_slots = 132;
  q.standard_tile = 128;
  q.max_len = len;
  return q;
}

bool takes_short(const TilingQuery& q) { return choose_decode_tiling(q) == DecodeTiling::short_batch; }
bool takes_deep(const TilingQuery& q) { return choose_decode_tiling(q) == DecodeTiling::deep; }

TEST(DecodeTilingChoice, ShortBatchesTakeTheShortTiling) {
  EXPECT_TRUE(takes_short(h100(64, 32, 32)));    // the 64 x 32 heads x 32 tokens
  EXPECT_TRUE(takes_short(h100(64, 32, 256)));   // and x 256 (two standard tiles)
  EXPECT_FALSE(takes_short(h100(64, 32, 1024)));  // 0.97 of the ceiling on the standard tiling
  EXPECT_FALSE(takes_short(h100(1, 32, 65536)));  // long MHA: split over a wave
  EXPECT_FALSE(takes_short(h100(2, 32, 32)));     // 64 blocks: less than a wave, split instead
  TilingQuery paged = h100(64, 32, 32);
  paged.paged = true;  // uniform short batches take it in paged caches too
  EXPECT_TRUE(takes_short(paged));
  TilingQuery g2 = h100(64, 32, 32);
  g2.group = 2;  // group 2: only on a wide bus
  EXPECT_FALSE(takes_short(g2));
  TilingQuery g4 = h100(64, 32, 32);
  g4.group = 4;  // no short tiling compiled
  EXPECT_FALSE(takes_short(g4));
  TilingQuery pinned = h100(64, 32, 32);
  pinned.pinned = true;
  EXPECT_FALSE(takes_short(pinned));
}

// Head dims below the compiled kernel's (Phi-3-mini's 96 on the kernel of 128) on a wide bus (an
// H200's): the short tiling up to kShortWideBusMaxTiles standard tiles a block, where the standard
// blocks fill a wave; the full head dim, a narrow bus or fewer blocks than slots as before.
TEST(DecodeTilingChoice, MaskedHeadDimsOnAWideBusUpToEightTiles) {
  const auto phi3 = [](int seqs, std::int64_t len, bool masked, bool wide) {
    TilingQuery q = h100(seqs, 32, len);
    q.masked_head_dim = masked;
    q.wide_bus = wide;
    return q;
  };
  EXPECT_TRUE(takes_short(phi3(128, 512, true, true)));
  EXPECT_TRUE(takes_short(phi3(64, 1024, true, true)));   // 8 standard tiles
  EXPECT_FALSE(takes_short(phi3(64, 1025, true, true)));  // a ninth
  EXPECT_FALSE(takes_short(phi3(16, 4096, true, true)));
  EXPECT_FALSE(takes_short(phi3(64, 1024, false, true)));  // d 128
  EXPECT_FALSE(takes_short(phi3(64, 1024, true, false)));  // an H100's bus
  EXPECT_FALSE(takes_short(phi3(4, 1024, true, true)));    // 128 blocks: less than a wave
  TilingQuery paged = phi3(64, 1024, true, true);
  paged.paged = true;
  EXPECT_TRUE(takes_short(paged));
  TilingQuery g4 = phi3(64, 1024, true, true);
  g4.group = 4;
  EXPECT_FALSE(takes_short(g4));
  TilingQuery pinned = phi3(64, 1024, true, true);
  pinned.pinned = true;
  EXPECT_FALSE(takes_short(pinned));
  // Ragged batches keep their own rule: a paged one never, a contiguous one by its short sequences.
  const std::vector<std::int32_t> lens(64, 1024), mixed{1024, 100, 1024, 1024};
  TilingQuery ragged = phi3(64, 1024, true, true);
  ragged.lengths = lens;  // equal lengths: not ragged, the uniform rule
  EXPECT_TRUE(takes_short(ragged));
  ragged.lengths = mixed;
  EXPECT_FALSE(takes_short(ragged));  // one of four at most two tiles
}

// Past the short tiling's reach, a masked head dim in a paged cache on a wide bus takes the deep
// one (uniform batches only): Phi-3-mini's 16 x 4K (512 blocks, 32 standard tiles) and 1 x 32K
// (32 blocks, split), and 64 x 1025 (one token past the short tiling's eight tiles). Never where the
// short tiling runs, in a contiguous cache, at the full head dim, on a narrow bus, at another group,
// pinned, or ragged.
TEST(DecodeTilingChoice, MaskedHeadDimsOnAWideBusPastTheShortTilingTakeTheDeepOne) {
  const auto phi3 = [](int seqs, std::int64_t len, bool masked, bool wide) {
    TilingQuery q = h100(seqs, 32, len);
    q.masked_head_dim = masked;
    q.wide_bus = wide;
    q.paged = true;
    return q;
  };
  EXPECT_TRUE(takes_deep(phi3(16, 4096, true, true)));
  EXPECT_TRUE(takes_deep(phi3(1, 32768, true, true)));
  EXPECT_TRUE(takes_deep(phi3(64, 1025, true, true)));
  EXPECT_TRUE(takes_deep(phi3(4, 1024, true, true)));     // fewer blocks than slots: no short tiling
  EXPECT_FALSE(takes_deep(phi3(64, 1024, true, true)));   // the short tiling's
  EXPECT_FALSE(takes_deep(phi3(128, 512, true, true)));   // the short tiling's
  EXPECT_FALSE(takes_deep(phi3(16, 4096, false, true)));  // d 128
  EXPECT_FALSE(takes_deep(phi3(16, 4096, true, false)));  // an H100's bus
  // One condition flipped at a time.
  const auto with = [](TilingQuery q, auto edit) {
    edit(q);
    return q;
  };
  const TilingQuery long16 = phi3(16, 4096, true, true);
  EXPECT_FALSE(takes_deep(with(long16, [](TilingQuery& q) { q.paged = false; })));
  EXPECT_FALSE(takes_deep(with(phi3(1, 32768, true, true), [](TilingQuery& q) { q.paged = false; })));
  EXPECT_FALSE(takes_deep(with(long16, [](TilingQuery& q) { q.group = 2; })));
  EXPECT_FALSE(takes_deep(with(long16, [](TilingQuery& q) { q.group = 4; })));
  EXPECT_FALSE(takes_deep(with(long16, [](TilingQuery& q) { q.pinned = true; })));
  const std::vector<std::int32_t> equal(16, 4096), mixed{4096, 100, 4096, 4096};
  EXPECT_TRUE(takes_deep(with(long16, [&](TilingQuery& q) { q.lengths = equal; })));   // the uniform rule
  EXPECT_FALSE(takes_deep(with(long16, [&](TilingQuery& q) { q.lengths = mixed; })));  // ragged: standard
  // Everything else is standard: the same points at d 128, on a narrow bus, contiguous past eight
  // tiles, at group 4, pinned.
  EXPECT_EQ(choose_decode_tiling(phi3(16, 4096, false, true)), DecodeTiling::standard);
  EXPECT_EQ(choose_decode_tiling(phi3(1, 32768, true, false)), DecodeTiling::standard);
  EXPECT_EQ(choose_decode_tiling(with(long16, [](TilingQuery& q) { q.paged = false; })), DecodeTiling::standard);
  EXPECT_EQ(choose_decode_tiling(with(phi3(64, 1024, true, true), [](TilingQuery& q) { q.group = 4; })),
            DecodeTiling::standard);
  EXPECT_EQ(choose_decode_tiling(with(phi3(64, 1024, true, true), [](TilingQuery& q) { q.pinned = true; })),
            DecodeTiling::standard);
}

// GQA group 2 (Gemma-3-27B's 32 / 16 heads, d 128) on a wide bus: the short tiling for a uniform
// batch whose standard blocks fill a wave, up to kShortWideBusMaxTiles standard tiles a block, at
// the full head dim and masked ones, contiguous and paged; never deep. Each other condition flipped
// alone keeps the standard tiling: a narrow bus, a ninth tile, fewer blocks than slots, ragged
// lengths, a pin.
TEST(DecodeTilingChoice, GroupTwoOnAWideBusUpToEightTiles) {
  const auto gemma3 = [](int seqs, std::int64_t len) {
    TilingQuery q = h100(seqs, 16, len);
    q.group = 2;
    q.wide_bus = true;
    return q;
  };
  const auto with = [](TilingQuery q, auto edit) {
    edit(q);
    return q;
  };
  EXPECT_TRUE(takes_short(gemma3(128, 512)));
  EXPECT_TRUE(takes_short(gemma3(64, 1024)));  // 8 standard tiles
  EXPECT_TRUE(takes_short(gemma3(128, 1)));
  EXPECT_TRUE(takes_short(gemma3(9, 1024)));   // 144 blocks: a wave of 132
  EXPECT_TRUE(takes_short(with(gemma3(64, 1024), [](TilingQuery& q) { q.paged = true; })));
  EXPECT_TRUE(takes_short(with(gemma3(64, 1024), [](TilingQuery& q) { q.masked_head_dim = true; })));
  const std::vector<std::int32_t> equal(64, 1024), mixed{1024, 100, 1024, 1024};
  EXPECT_TRUE(takes_short(with(gemma3(64, 1024), [&](TilingQuery& q) { q.lengths = equal; })));
  EXPECT_FALSE(takes_short(with(gemma3(64, 1024), [](TilingQuery& q) { q.wide_bus = false; })));
  EXPECT_FALSE(takes_short(gemma3(64, 1025)));
  EXPECT_FALSE(takes_short(gemma3(16, 4096)));
  EXPECT_FALSE(takes_short(gemma3(8, 1024)));  // 128 blocks: less than a wave
  EXPECT_FALSE(takes_short(with(gemma3(64, 1024), [&](TilingQuery& q) { q.lengths = mixed; })));
  EXPECT_FALSE(takes_short(with(gemma3(64, 1024), [](TilingQuery& q) { q.pinned = true; })));
  EXPECT_FALSE(takes_short(with(gemma3(64, 1024), [](TilingQuery& q) { q.standard_tile = 0; })));
  EXPECT_EQ(choose_decode_tiling(with(gemma3(16, 4096), [](TilingQuery& q) {
              q.paged = true;
              q.masked_head_dim = true;
            })),
            DecodeTiling::standard);  // the deep tiling is group 1's
}

TEST(DecodeTilingChoice, RaggedBatchesByTheirShortSequences) {
  LengthSampler zipf(LengthDistribution::zipf(1024, 1.2), 3);
  std::vector<std::int32_t> z, u;
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<std::int32_t> uniform(1, 2047);
  for (int b = 0; b < 64; ++b) {
    z.push_back(static_cast<std::int32_t>(zipf.next()));
    u.push_back(uniform(rng));
  }
  TilingQuery q = h100(64, 32, *std::max_element(z.begin(), z.end()));
  q.lengths = z;
  EXPECT_TRUE(takes_short(q));  // most zipf(1.2) lengths are a few tokens
  q.paged = true;
  EXPECT_FALSE(takes_short(q));  // paged ragged batches stream faster on the standard tiling
  q.paged = false;
  q.lengths = u;
  q.max_len = *std::max_element(u.begin(), u.end());
  EXPECT_FALSE(takes_short(q));  // uniform on [1, 2047]: 1 in 8 at most 256
}

}  // namespace
}  // namespace decode_bench
