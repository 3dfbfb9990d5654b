#pragma once
// Which thread stages which 16-byte chunk of a K/V tile, and, for rows resolved once (paged K/V),
// which lane of a warp resolves which row and where each thread finds its row's offset.
//
// A tile is kTile rows x kChunks chunks, row-major; pass p of thread x stages chunk x + p x kThreads
// (consecutive threads take consecutive chunks of a row, so a warp's pass reads whole 16-byte
// runs of rows). A warp's pass then covers kRowsPerPass whole rows (kChunks <= 32) or a part of one.
// Resolving each row once per warp: lane j resolves the row of pass j / kRowsPerPass staged by lanes
// [(j % kRowsPerPass) x kChunks, + kChunks); a thread takes its pass-p row offset from lane
// source_lane(x, p). Host-side so that tests can check the whole map (tests/test_tile_staging_map.cpp).
#include "kernels/host_device.hpp"

namespace decode_bench {

template <int kTile, int kChunks, int kThreads>
struct TileStagingMap {
  static_assert(kThreads % 32 == 0 && (kTile * kChunks) % kThreads == 0, "thread tiling");
  static constexpr int kPasses = kTile * kChunks / kThreads;  // chunks per thread and tile
  static constexpr int kRowsPerPass = kChunks <= 32 ? 32 / kChunks : 1;
  static constexpr int kResolvers = kPasses * kRowsPerPass;  // lanes of a warp that resolve a row
  // Rows can be resolved once per warp when a warp's pass covers whole rows and the warp has a
  // lane for each row it stages.
  static constexpr bool kResolvable = 32 % kChunks == 0 && kResolvers <= 32;

  static DB_HD constexpr int chunk(int thread, int pass) { return thread + pass * kThreads; }
  static DB_HD constexpr int row(int thread, int pass) { return chunk(thread, pass) / kChunks; }
  static DB_HD constexpr int column(int thread, int pass) { return chunk(thread, pass) % kChunks; }
  // The tile row that `thread` resolves (its lane < kResolvers).
  static DB_HD constexpr int resolved_row(int thread) {
    const int lane = thread % 32;
    return (thread - lane + (lane % kRowsPerPass) * kChunks + (lane / kRowsPerPass) * kThreads) / kChunks;
  }
  // The lane of thread's warp that resolved the row thread stages in pass `pass`.
  static DB_HD constexpr int source_lane(int thread, int pass) { return pass * kRowsPerPass + (thread % 32) / kChunks; }
};

}  // namespace decode_bench
