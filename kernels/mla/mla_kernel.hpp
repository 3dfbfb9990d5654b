#pragma once
// The MLA decode kernels by name, apart from their plans (kernels/mla/mla_decode.hpp) so that the
// tuning policy (kernels/tuning_policy.hpp: DECODE_BENCH_MLA_KERNEL) can name one without them.

namespace decode_bench {

enum class MlaKernel {
  mma,         // mla_decode_mma: 64 rows per block
  mma_narrow,  // mla_decode_mma_narrow: 16 or 32 rows per block (rows <= kMlaNarrowMaxRows)
  wgmma,       // mla_decode_wgmma: 64 rows per block on warpgroup MMA (kernels/mla/mla_decode_wgmma.hpp)
};

}  // namespace decode_bench
