// Memory handed back to the driver (a GPU tool, not part of the sweep; docs/harness.md, "Memory
// handed back to the driver"): the cold read of one 1 GiB buffer, timed before and at intervals
// after a larger buffer elsewhere on the device is freed, once with cudaMalloc / cudaFree and once
// through the harness's keeping pool (device_malloc / device_free, harness/device_memory.hpp).
// The 1 GiB buffer itself is never freed; only the other buffer comes and goes.
//   build/kernels/tuning/decode-memory-return-probe [GiB freed (default 16)]
// Prints one line per reading: what happened before it, seconds since the free, median read time
// of 7 cold reads (L2 flushed by the harness's read flush before each), GB/s.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/device_memory.hpp"
#include "harness/l2_flush.hpp"

namespace {

__global__ void read_kernel(const uint4* p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 v = __ldcs(p + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;  // never: keeps the loads
}

double median_read_us(const void* buffer, std::size_t bytes, unsigned* sink, decode_bench::L2Flusher& flusher) {
  cudaEvent_t start, stop;
  DB_CUDA_CHECK(cudaEventCreate(&start));
  DB_CUDA_CHECK(cudaEventCreate(&stop));
  int sms = 0;
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::vector<double> us;
  for (int r = 0; r < 7; ++r) {
    DB_CUDA_CHECK(flusher.flush(nullptr));
    DB_CUDA_CHECK(cudaEventRecord(start));
    read_kernel<<<8 * sms, 512>>>(static_cast<const uint4*>(buffer), bytes / sizeof(uint4), sink);
    DB_CUDA_CHECK(cudaEventRecord(stop));
    DB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    DB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    us.push_back(ms * 1e3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace decode_bench;
  const double freed_gib = argc > 1 ? std::atof(argv[1]) : 16.0;
  if (!(freed_gib > 0 && freed_gib <= 1024)) {
    std::fprintf(stderr, "decode-memory-return-probe: GiB freed '%s' is not a number in (0, 1024]\n", argv[1]);
    return 2;
  }
  try {
    constexpr std::size_t kGiB = std::size_t{1} << 30;
    const std::size_t other = static_cast<std::size_t>(freed_gib * static_cast<double>(kGiB));
    L2Flusher flusher(0);
    void* buffer = nullptr;  // the 1 GiB that is read, never freed
    unsigned* sink = nullptr;
    DB_CUDA_CHECK(cudaMalloc(&buffer, kGiB));
    DB_CUDA_CHECK(cudaMemset(buffer, 1, kGiB));
    DB_CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
    const auto line = [&](const char* what, double seconds) {
      const double us = median_read_us(buffer, kGiB, sink, flusher);
      std::printf("%-44s %6.1f s %9.1f us %8.1f GB/s\n", what, seconds, us, static_cast<double>(kGiB) / us / 1e3);
    };
    std::printf("%-44s %8s %12s %13s\n", "1 GiB cold read, after", "since", "median", "rate");
    line("nothing", 0);
    const auto after_free = [&](const char* what, auto free_it) {
      free_it();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 6; ++i) {
        line(what, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    };
    void* p = nullptr;
    DB_CUDA_CHECK(cudaMalloc(&p, other));
    DB_CUDA_CHECK(cudaMemset(p, 1, other));
    DB_CUDA_CHECK(cudaDeviceSynchronize());
    after_free("cudaFree of the other buffer", [&] { DB_CUDA_CHECK(cudaFree(p)); });
    DB_CUDA_CHECK(device_malloc(&p, other));
    DB_CUDA_CHECK(cudaMemset(p, 1, other));
    DB_CUDA_CHECK(cudaDeviceSynchronize());
    after_free("device_free (kept in the harness's pool)", [&] { device_free(p); });
    std::printf("held by the pool after device_free: %.2f GiB\n", static_cast<double>(device_pool_reserved_bytes(0)) / kGiB);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "decode-memory-return-probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
