// The soft-cap's tanh (kernels/tanh_approx.cuh, PTX tanh.approx.f32) against tanh in double over
// every 64th float in [2^-20, 16] and its negatives: its relative error stays under 2^-10, the
// bound the soft-cap's accuracy argument takes (docs/kernels/rows_mma.md, "Attention variants":
// about 2^-11 by the PTX ISA, here with a factor 2 to spare). The measured maximum is printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <vector>

#include "harness/device_buffer.hpp"
#include "kernels/tanh_approx.cuh"
#include "tests/gpu_test_support.hpp"

namespace decode_bench {
namespace {

__global__ void tanh_approx_kernel(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = device::tanh_approx(x[i]);
}

TEST(TanhApproxGpu, RelativeErrorStaysUnderTwoToTheMinus10) {
  DB_REQUIRE_GPU();
  const auto bits_of = [](float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  };
  std::vector<float> x;
  for (std::uint32_t b = bits_of(0x1.0p-20f); b <= bits_of(16.0f); b += 64) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    x.push_back(f);
    x.push_back(-f);
  }
  DeviceBuffer<float> d_x(x), d_y(x.size());
  const auto n = static_cast<std::int64_t>(x.size());
  tanh_approx_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(d_x.get(), d_y.get(), n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> y = d_y.download();
  double worst = 0, at = 0;
  long long non_finite = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::tanh(static_cast<double>(x[i]));
    const double rel = std::abs(static_cast<double>(y[i]) - exact) / std::abs(exact);
    if (!std::isfinite(rel)) ++non_finite;
    else if (rel > worst) {
      worst = rel;
      at = x[i];
    }
  }
  EXPECT_EQ(non_finite, 0);
  std::cout << "tanh_approx: max relative error " << worst << " (2^" << std::log2(worst) << ") at x = " << at
            << " over " << x.size() << " arguments\n";
  EXPECT_LE(worst, 0x1.0p-10) << "at x = " << at;
}

}  // namespace
}  // namespace decode_bench
