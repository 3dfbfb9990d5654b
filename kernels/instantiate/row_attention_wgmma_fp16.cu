// The warpgroup-MMA row-attention kernels (sm_90a only: kernels/CMakeLists.txt), FP16 K/V at head
// dims 64 and 128, contiguous and paged, blocks of one and two warpgroups; at d 64 two-warpgroup
// blocks also over 128-token tiles, and those blocks' host-length twins at either tile.
#include <type_traits>

#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_wgmma.cuh"
#include "kernels/row_attention_wgmma.hpp"

namespace decode_bench {

namespace {

// The plain kernels (kHostLength false) and the host-length twins (true: d 64 only, blocks of two
// warpgroups, the dispatch below never asks for others): kTile-token tiles in blocks of kWG
// warpgroups; 128-token tiles only for the d 64 blocks of two warpgroups.
template <class KV, int D, bool kHostLength>
WgmmaRowKernel wgmma_row_kernel_at(int rows_per_block, int tile) {
  const auto pick = [&](auto wg, auto tokens) -> WgmmaRowKernel {
    constexpr int kWG = decltype(wg)::value, kTile = decltype(tokens)::value;
    using Tr = device::RowWgmmaTraits<kWG, D, kTile>;
    if (tile != kTile || rows_per_block != Tr::kRows) return {};
    return {reinterpret_cast<const void*>(&device::row_attention_wgmma_kernel<KV, kWG, D, kTile, kHostLength>),
            Tr::shared_bytes(), Tr::kThreads, Tr::kTile, Tr::kStages};
  };
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  using T64 = std::integral_constant<int, 64>;
  if constexpr (!kHostLength)
    if (const WgmmaRowKernel k = pick(One{}, T64{}); k.kernel != nullptr) return k;
  if (const WgmmaRowKernel k = pick(Two{}, T64{}); k.kernel != nullptr) return k;
  if constexpr (D == 64) return pick(Two{}, std::integral_constant<int, 128>{});
  return {};
}

}  // namespace

template <class KV>
WgmmaRowKernel wgmma_row_kernel(int rows_per_block, int d, int tile, bool host_length) {
  if (d == 64)
    return host_length ? wgmma_row_kernel_at<KV, 64, true>(rows_per_block, tile)
                       : wgmma_row_kernel_at<KV, 64, false>(rows_per_block, tile);
  if (d == 128 && !host_length) return wgmma_row_kernel_at<KV, 128, false>(rows_per_block, tile);
  return {};
}

bool wgmma_row_kernel_runs_on(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return false;
  return major == 9 && minor == 0;
}

template WgmmaRowKernel wgmma_row_kernel<ContiguousKV<__half>>(int, int, int, bool);
template WgmmaRowKernel wgmma_row_kernel<PagedKV<__half>>(int, int, int, bool);

}  // namespace decode_bench
