#pragma once
// The tensor-core row attention's tilings (kernels/row_attention.hpp), apart so the tuning policy
// (kernels/tuning_policy.hpp) can name them without the planner's types.

namespace decode_bench {

// narrow = 4 warps x 1 row tile of 16; wide = 8 warps x 2 row tiles (FP16 / BF16 at head_dim <= 128);
// wgmma = Hopper's warpgroup MMA, one or two warpgroups of 64 rows (FP16) or one of 32 (BF16), at
// head dims up to 128, compiled for 64 and 128, on compute capability 9.0 in a build for it:
// kernels/row_attention_wgmma.hpp; elsewhere the automatic choice. automatic: wgmma where it runs
// for FP16 items of more than 32 rows and for grouped decodes at d 128 (kernels/row_attention_launch.cuh),
// else wide for items of more than 32 rows, or what the tuning policy pins
// (TuningPolicy::row_tiling, DECODE_BENCH_ROW_TILING).
enum class RowAttentionTiling { automatic, narrow, wide, wgmma };

}  // namespace decode_bench
