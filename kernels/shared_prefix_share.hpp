#pragma once
// The share of the SMs an overlapped shared-prefix phase is planned for (pure, host-tested).
//
// The prefix phase (compute-heavy row attention) and the suffix phase (a memory-bound batch
// decode) run on two streams, the prefix dispatched first. Planned for every SM, the prefix's
// blocks take whole SMs and the suffix mostly waits for them; planned for fewer, the prefix runs
// longer but the suffix streams beside it. Which pays depends on how long each phase would take.
// Measured on the H100 (h100 preset, FP16, 32 heads, d 128, S 128; commit f4763da,
// git show 9372013:results/reference/probe/h100-f4763da-sp-share/), time at a share of 1 / 0.75 / 0.5, us:
//   N 64:  P 1K 80.7 / 71.8 / 67.5,   P 8K 131.6 / 127.1 / 174.3,   P 32K 299.6 / 367.0 / 541.6
//   N 256: P 1K 235.7 / 255.3 / 236.7, P 8K 351.9 / 316.5 / 348.9, P 32K 701.9 / 765.8 / 1104.3
// The rule: estimate suffix time / prefix time as (suffix K/V bytes / DRAM bandwidth) over (prefix
// FLOPs / 128 TFLOP/s, the prefix phase's rate at long prefixes on that H100, about a fifth of
// its FP16 tensor roof), then share 1 below 0.4, 0.75 below 1.2, 0.5 above. It picks the fastest
// of the three (or within 0.5% of it) at each of the six points above, where it was fitted. Only
// items of 64 to 256 rows (N x group) take it: the cascade preset at 5d4ed59 ran N 16 and N 1024
// 5-13% slower under it than under a share of 1 (git show 9372013:results/reference/5d4ed59/compare/); there the
// share stays 1 (DECODE_BENCH_SP_PREFIX_SHARE pins a share anywhere).
//
// The warpgroup-MMA prefix kernel (kernels/row_attention_wgmma.cuh, FP16 at head dim 128 on
// Hopper) changed both phases' balance, so it has a rule of its own, fitted the same way (h100
// preset, overlapped, commit 0ba70cd, git show 9372013:results/reference/0ba70cd/ README), time at a share of
// 1 / 0.75 / 0.5, us:
//   N 64:  P 1K 77.4 / 73.9 / 71.3,   P 8K 114.9 / 125.4 / 137.8,  P 32K 243.9 / 271.5 / 349.5
//   N 256: P 1K 222.3 / 227.2 / 206.8, P 8K 297.2 / 293.9 / 248.2, P 32K 551.0 / 605.0 / 786.9
// Its prefix phase is no longer compute-bound everywhere (N 64 P 8K reads 134 MB of prefix K/V for
// 8.6 GFLOP), so the prefix time is estimated as the larger of its K/V bytes over the DRAM
// bandwidth and its FLOPs over 350 TFLOP/s (its rate at N 256 P 32K: 339-383 TFLOP/s in the probe
// of that call); the suffix time as before. The rule: share 1 below a ratio of 1.3, else 0.5
// (0.75 was the best at none of the six). Ratios at the six points: 8.0, 1.0, 0.25 (N 64) and 13,
// 1.6, 0.41 (N 256): it picks the fastest share at each. Items of 64 to 256 rows only, as above.
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
