// Warpgroup-MMA tensor ceilings (harness/ceiling_wgmma.hpp), compiled for sm_90a alone.
// A block's warpgroups share one A tile (64 rows) and one B tile (256 rows) of 128-byte rows in
// the 128-byte swizzle layout (K-major, 8-row atoms 1 KiB apart), filled once with a small finite
// bit pattern (the FP16 and BF16 halves and the E4M3 bytes of 0x1419 are all finite and small, so
// the accumulators never overflow). A loop step is the 4 K-steps of one 128-byte row: K 16 for
// f16 / bf16, 32 for e4m3, 32 bytes each. Only the accumulators' sum leaves the kernel, and only
// if it equals a value it never takes.
#include "harness/ceiling_wgmma.hpp"

#include <cstdint>

#include <cuda_runtime.h>

#include "kernels/cp_async.cuh"  // shared_address
#include "kernels/wgmma_ops.cuh"

namespace decode_bench {
namespace {

constexpr int kStepInstructions = 4;
constexpr int kABytes = 64 * 128, kBBytes = 256 * 128;
constexpr float kNeverSum = -1.2345e-7f;

template <WgmmaCeilingInput kIn>
__host__ __device__ constexpr device::WgmmaInput device_input() {
  return kIn == WgmmaCeilingInput::f16    ? device::WgmmaInput::f16
         : kIn == WgmmaCeilingInput::bf16 ? device::WgmmaInput::bf16
                                          : device::WgmmaInput::e4m3;
}

template <WgmmaCeilingInput kIn, int kWG>
__global__ void __launch_bounds__(128 * kWG) wgmma_ceiling_kernel_impl(int steps, unsigned bits, unsigned* sink) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using namespace device;
  __shared__ __align__(1024) unsigned tiles[(kABytes + kBBytes) / 4];
  for (int i = static_cast<int>(threadIdx.x); i < (kABytes + kBBytes) / 4; i += 128 * kWG) tiles[i] = bits;
  fence_proxy_async_shared();  // the st.shared writes visible to wgmma's operand reads
  __syncthreads();
  const std::uint32_t base = shared_address(tiles);
  std::uint64_t a_desc[kStepInstructions], b_desc[kStepInstructions];
#pragma unroll
  for (int k = 0; k < kStepInstructions; ++k) {
    a_desc[k] = sw128_descriptor(base + 32u * k, 16, 1024);
    b_desc[k] = sw128_descriptor(base + kABytes + 32u * k, 16, 1024);
  }
  float d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 0.f;
  for (int s = 0; s < steps; ++s) {
    wgmma_fence();  // the accumulators' registers ordered before this step's wgmma reads them
#pragma unroll
    for (int k = 0; k < kStepInstructions; ++k) wgmma_m64n256_ss<device_input<kIn>()>(d, a_desc[k], b_desc[k], 1);
    wgmma_commit();
    wgmma_wait<1>();  // one group in flight while the next is issued
  }
  wgmma_wait<0>();
  fence_registers(d);
  float sum = 0.f;
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += d[i];
  if (sum == kNeverSum) *sink = 1;
#else
  (void)steps, (void)bits, (void)sink;
  __trap();  // compiled for sm_90a only; never launched elsewhere (wgmma_ceiling_refusal)
#endif
}

template <WgmmaCeilingInput kIn>
WgmmaCeilingKernel make(int warpgroups) {
  constexpr double k = kIn == WgmmaCeilingInput::e4m3 ? 32.0 : 16.0;
  const void* kernel = nullptr;
  if (warpgroups == 1) kernel = reinterpret_cast<const void*>(wgmma_ceiling_kernel_impl<kIn, 1>);
  if (warpgroups == 2) kernel = reinterpret_cast<const void*>(wgmma_ceiling_kernel_impl<kIn, 2>);
  if (kernel == nullptr) return {};
  return {kernel, 128 * warpgroups, kStepInstructions, 2.0 * 64 * 256 * k};
}

}  // namespace

WgmmaCeilingKernel wgmma_ceiling_kernel(WgmmaCeilingInput input, int warpgroups) {
  switch (input) {
    case WgmmaCeilingInput::f16: return make<WgmmaCeilingInput::f16>(warpgroups);
    case WgmmaCeilingInput::bf16: return make<WgmmaCeilingInput::bf16>(warpgroups);
    case WgmmaCeilingInput::e4m3: return make<WgmmaCeilingInput::e4m3>(warpgroups);
  }
  return {};
}

const char* wgmma_ceiling_refusal(int major, int minor) {
  if (major == 9 && minor == 0) return "";
  return "warpgroup MMA needs sm_90a code, which runs on compute capability 9.0 only";
}

}  // namespace decode_bench
