#pragma once
// The warpgroup-MMA row-attention kernel table (wgmma_row_kernel, kernels/row_attention_wgmma.hpp)
// over one storage type's kernels: included by kernels/instantiate/row_attention_wgmma_fp16.cu and
// row_attention_wgmma_bf16.cu, each compiling its own type's kernels for sm_90a.
//   FP16: blocks of one and two warpgroups (64, 128 rows) at d 64 and 128, 64-token tiles; at d 64
//         two-warpgroup blocks also over 128-token tiles. Host-length twins: the d 64 two-warpgroup
//         blocks (both tiles) and the one-warpgroup blocks at d 128 (the grouped decodes).
//   BF16: blocks of one warpgroup (32 rows: the packed split) at d 64 and 128, 64-token tiles, and
//         their host-length twins.
#include <type_traits>

#include <cuda_bf16.h>

#include "kernels/row_attention_wgmma.cuh"
#include "kernels/row_attention_wgmma.hpp"

namespace decode_bench::wgmma_table {

// The plain kernels (kHostLength false) and the host-length twins (true: the blocks that run decode
// items on the uniform grid, where a block's first copies would otherwise wait for seq_lens: MQA's
// d 64 two-warpgroup blocks, the grouped decodes' one-warpgroup blocks at d 128, FP16 and BF16, and
// BF16's at d 64).
template <class KV, int D, bool kHostLength>
WgmmaRowKernel kernel_at(int rows_per_block, int tile) {
  constexpr bool kPacked = std::is_same_v<typename KV::value_type, __nv_bfloat16>;
  const auto pick = [&](auto wg, auto tokens) -> WgmmaRowKernel {
    constexpr int kWG = decltype(wg)::value, kTile = decltype(tokens)::value;
    using Tr = device::RowWgmmaTraits<kWG, D, kTile, kPacked>;
    if (tile != kTile || rows_per_block != Tr::kRows) return {};
    return {reinterpret_cast<const void*>(&device::row_attention_wgmma_kernel<KV, kWG, D, kTile, kHostLength>),
            Tr::shared_bytes(), Tr::kThreads, Tr::kTile, Tr::kStages};
  };
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  using T64 = std::integral_constant<int, 64>;
  if constexpr (kPacked || (kHostLength && D == 128)) {
    return pick(One{}, T64{});
  } else {
    if constexpr (!kHostLength)
      if (const WgmmaRowKernel k = pick(One{}, T64{}); k.kernel != nullptr) return k;
    if (const WgmmaRowKernel k = pick(Two{}, T64{}); k.kernel != nullptr) return k;
    if constexpr (D == 64) return pick(Two{}, std::integral_constant<int, 128>{});
    return {};
  }
}

template <class KV>
WgmmaRowKernel kernel(int rows_per_block, int d, int tile, bool host_length) {
  if (d == 64)
    return host_length ? kernel_at<KV, 64, true>(rows_per_block, tile) : kernel_at<KV, 64, false>(rows_per_block, tile);
  if (d == 128)
    return host_length ? kernel_at<KV, 128, true>(rows_per_block, tile) : kernel_at<KV, 128, false>(rows_per_block, tile);
  return {};
}

}  // namespace decode_bench::wgmma_table
