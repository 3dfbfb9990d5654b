#pragma once
// The share of the SMs an overlapped shared-prefix phase is planned for (pure, host-tested).
//
// The prefix phase (compute-heavy row attention) and the suffix phase (a memory-bound batch
// decode) run on two streams, the prefix dispatched first. Planned for every SM, the prefix's
// blocks take whole SMs and the suffix mostly waits for them; planned for fewer, the prefix runs
// longer but the suffix streams beside it. Which pays depends on how long each phase would take.
// Measured on the H100 at shares 1, 0.75 and 0.5 (h100 preset, FP16, 32 heads, d 128, S 128,
// N 64 and 256 at P 1K, 8K and 32K; commit f4763da, git show
// 9372013:results/reference/probe/h100-f4763da-sp-share/; the times: docs/history/kernel-notes.md,
// "Where a launch's time goes, block by block").
// The rule: estimate suffix time / prefix time as (suffix K/V bytes / DRAM bandwidth) over (prefix
// FLOPs / kPrefixPhaseFlopRate, the prefix phase's rate at long prefixes fitted to those H100 probe
// runs), then share 1 below 0.4, 0.75 below 1.2, 0.5 above: the thresholds are fitted so that it
// picks the fastest of the three (or one within 0.5% of it) at each of the six probe points. Only
// items of 64 to 256 rows (N x group) take it: the cascade preset at 5d4ed59 ran N 16 and N 1024
// slower under it than under a share of 1 (git show 9372013:results/reference/5d4ed59/compare/, same
// section of the notes); there the share stays 1 (DECODE_BENCH_SP_PREFIX_SHARE pins a share anywhere).
//
// The warpgroup-MMA prefix kernel (kernels/row_attention_wgmma.cuh, FP16 at head dim 128 on
// Hopper) changed both phases' balance, so it has a rule of its own, fitted the same way to the
// same six points (h100 preset, overlapped, commit 0ba70cd, git show
// 9372013:results/reference/0ba70cd/ README; docs/history/kernel-notes.md, "The shared-prefix
// phase on Hopper's warpgroup MMA").
// Its prefix phase is no longer compute-bound everywhere (N 64 P 8K reads 134 MB of prefix K/V for
// 8.6 GFLOP), so the prefix time is estimated as the larger of its K/V bytes over the DRAM
// bandwidth and its FLOPs over kWgmmaPrefixFlopRate (its rate at N 256 P 32K, fitted to the H100
// probe of that call); the suffix time as before. The rule: share 1 below a ratio of 1.3, else 0.5
// (0.75 was the best at none of the six): it picks the fastest share at each of the six points.
// Items of 64 to 256 rows only, as above.
#include <algorithm>
#include <cstdint>

namespace decode_bench {

inline constexpr double kPrefixPhaseFlopRate = 128e12;  // FLOP/s, see above

// suffix_bytes: K + V bytes the suffix phase reads; prefix_flops: 4 x (tokens x rows) x head_dim
// summed over the levels; dram_bytes_per_s: the device's DRAM bandwidth.
inline constexpr int kAutoShareMinRows = 64, kAutoShareMaxRows = 256;

// max_item_rows: the prefix phase's widest item (sequences sharing a level x group).
inline double shared_prefix_auto_share(double suffix_bytes, double prefix_flops, double dram_bytes_per_s,
                                       int max_item_rows) {
  if (max_item_rows < kAutoShareMinRows || max_item_rows > kAutoShareMaxRows) return 1.0;
  if (!(prefix_flops > 0) || !(dram_bytes_per_s > 0)) return 1.0;
  const double ratio = (suffix_bytes / dram_bytes_per_s) / (prefix_flops / kPrefixPhaseFlopRate);
  return ratio < 0.4 ? 1.0 : ratio < 1.2 ? 0.75 : 0.5;
}

inline constexpr double kWgmmaPrefixFlopRate = 350e12;  // FLOP/s, see above

// The rule for the warpgroup-MMA prefix kernel; prefix_bytes: the K + V bytes of the prefix levels.
inline double shared_prefix_auto_share_wgmma(double suffix_bytes, double prefix_bytes, double prefix_flops,
                                             double dram_bytes_per_s, int max_item_rows) {
  if (max_item_rows < kAutoShareMinRows || max_item_rows > kAutoShareMaxRows) return 1.0;
  if (!(prefix_flops > 0) || !(dram_bytes_per_s > 0)) return 1.0;
  const double prefix_s = std::max(prefix_bytes / dram_bytes_per_s, prefix_flops / kWgmmaPrefixFlopRate);
  return (suffix_bytes / dram_bytes_per_s) / prefix_s < 1.3 ? 1.0 : 0.5;
}

}  // namespace decode_bench
