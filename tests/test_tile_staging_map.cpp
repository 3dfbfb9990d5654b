// The chunk map of a staged K/V tile (kernels/tile_staging_map.hpp), host-side, for every tiling
// the kernels instantiate: each chunk of the tile is staged by exactly one (thread, pass); and
// where rows are resolved once per warp, the lane a thread takes its row offset from is one of the
// warp's resolving lanes and resolved exactly that row, and each resolving lane's row is staged by
// its own warp.
#include <set>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "kernels/tile_staging_map.hpp"

namespace decode_bench {
namespace {

template <int kTile, int kChunks, int kThreads>
void expect_consistent_map() {
  using Map = TileStagingMap<kTile, kChunks, kThreads>;
  SCOPED_TRACE(testing::Message() << "tile " << kTile << ", chunks " << kChunks << ", threads " << kThreads);
  std::vector<int> staged(kTile * kChunks, 0);
  for (int x = 0; x < kThreads; ++x)
    for (int p = 0; p < Map::kPasses; ++p) {
      const int r = Map::row(x, p), c = Map::column(x, p);
      ASSERT_GE(r, 0);
      ASSERT_LT(r, kTile);
      ASSERT_EQ(r * kChunks + c, Map::chunk(x, p));
      ++staged[Map::chunk(x, p)];
    }
  for (int i = 0; i < kTile * kChunks; ++i) ASSERT_EQ(staged[i], 1) << "chunk " << i;

  if constexpr (Map::kResolvable) {
    for (int x = 0; x < kThreads; ++x) {
      const int warp_first = x - x % 32;
      std::set<int> rows_of_warp;
      for (int p = 0; p < Map::kPasses; ++p) {
        const int src = Map::source_lane(x, p);
        ASSERT_GE(src, 0);
        ASSERT_LT(src, Map::kResolvers) << "thread " << x << " pass " << p << " reads a lane that resolved nothing";
        EXPECT_EQ(Map::resolved_row(warp_first + src), Map::row(x, p)) << "thread " << x << " pass " << p;
      }
      // The resolving lane's row is one its warp stages (it is resolved for someone).
      if (x % 32 < Map::kResolvers) {
        bool staged_by_warp = false;
        for (int y = warp_first; y < warp_first + 32; ++y)
          for (int p = 0; p < Map::kPasses; ++p) staged_by_warp |= Map::row(y, p) == Map::resolved_row(x);
        EXPECT_TRUE(staged_by_warp) << "lane " << x << " resolves row " << Map::resolved_row(x);
      }
    }
  }
}

TEST(TileStagingMap, EveryChunkOnceAndEveryRowOffsetFromTheLaneThatResolvedIt) {
  // The narrow tensor-core tiling (64-token tiles, 128 threads): FP16 / BF16 at D 64, 128, 256
  // (8, 16, 32 chunks), FP8 at D 64, 128, 256 (4, 8, 16).
  expect_consistent_map<64, 4, 128>();
  expect_consistent_map<64, 8, 128>();
  expect_consistent_map<64, 16, 128>();
  expect_consistent_map<64, 32, 128>();
  // The wide tiling (256 threads) and the SIMT kernel (32-token tiles; FP32 D 256: 64 chunks).
  expect_consistent_map<64, 8, 256>();
  expect_consistent_map<64, 16, 256>();
  expect_consistent_map<32, 16, 128>();
  expect_consistent_map<32, 32, 128>();
  expect_consistent_map<32, 64, 128>();
}

TEST(TileStagingMap, ResolvableWhereAWarpsPassesCoverWholeRows) {
  // FP16 D 128 on the narrow tiling: 8 passes of 2 rows, 16 resolving lanes.
  using Fp16 = TileStagingMap<64, 16, 128>;
  EXPECT_TRUE(Fp16::kResolvable);
  EXPECT_EQ(Fp16::kPasses, 8);
  EXPECT_EQ(Fp16::kRowsPerPass, 2);
  EXPECT_EQ(Fp16::kResolvers, 16);
  // A row of 64 chunks spans two warps: no single warp stages it whole.
  EXPECT_FALSE((TileStagingMap<32, 64, 128>::kResolvable));
}

}  // namespace
}  // namespace decode_bench
