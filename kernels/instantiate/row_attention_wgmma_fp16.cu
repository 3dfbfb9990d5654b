// The warpgroup-MMA row-attention kernels (sm_90a only: kernels/CMakeLists.txt), FP16 K/V at head
// dims 64 and 128, contiguous and paged, blocks of one and two warpgroups; at d 64 two-warpgroup
// blocks also over 128-token tiles, and those blocks' host-length twins at either tile.
#include <cuda_fp16.h>

#include "kernels/kv_accessor.hpp"
#include "kernels/row_attention_wgmma.cuh"
#include "kernels/row_attention_wgmma.hpp"

namespace decode_bench {

namespace {

template <class KV, int D>
WgmmaRowKernel wgmma_row_kernel_at(int rows_per_block, int tile, bool host_length) {
  const auto pick = [](auto traits, const void* kernel) {
    using Tr = decltype(traits);
    return WgmmaRowKernel{kernel, Tr::shared_bytes(), Tr::kThreads, Tr::kTile, Tr::kStages};
  };
  // The host-length twins: the d 64 two-warpgroup blocks (MQA's many heads on one KV head) only.
  if (host_length) {
    if constexpr (D == 64) {
      if (tile == 64 && rows_per_block == device::RowWgmmaTraits<2, D>::kRows)
        return pick(device::RowWgmmaTraits<2, D>{},
                    reinterpret_cast<const void*>(&device::row_attention_wgmma_kernel<KV, 2, D, 64, true>));
      if (tile == 128 && rows_per_block == device::RowWgmmaTraits<2, D, 128>::kRows)
        return pick(device::RowWgmmaTraits<2, D, 128>{},
                    reinterpret_cast<const void*>(&device::row_attention_wgmma_kernel<KV, 2, D, 128, true>));
    }
    return {};
  }
  if (tile == 64 && rows_per_block == device::RowWgmmaTraits<1, D>::kRows)
    return pick(device::RowWgmmaTraits<1, D>{},
                reinterpret_cast<const void*>(&device::row_attention_wgmma_kernel<KV, 1, D>));
  if (tile == 64 && rows_per_block == device::RowWgmmaTraits<2, D>::kRows)
    return pick(device::RowWgmmaTraits<2, D>{},
                reinterpret_cast<const void*>(&device::row_attention_wgmma_kernel<KV, 2, D>));
  // 128-token tiles: the d 64 two-warpgroup kernel only (MQA's many heads on one KV head).
  if constexpr (D == 64)
    if (tile == 128 && rows_per_block == device::RowWgmmaTraits<2, D, 128>::kRows)
      return pick(device::RowWgmmaTraits<2, D, 128>{},
                  reinterpret_cast<const void*>(&device::row_attention_wgmma_kernel<KV, 2, D, 128>));
  return {};
}

}  // namespace

template <class KV>
WgmmaRowKernel wgmma_row_kernel(int rows_per_block, int d, int tile, bool host_length) {
  if (d == 64) return wgmma_row_kernel_at<KV, 64>(rows_per_block, tile, host_length);
  if (d == 128) return wgmma_row_kernel_at<KV, 128>(rows_per_block, tile, host_length);
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
