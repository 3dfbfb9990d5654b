// The launch floor under the harness's own timing (tools/notes, not part of the sweep): an empty
// kernel, one block and the 2048-block grid of a 64 x 32-head batch, cold (L2 read-flushed, gated)
// and hot, CUDA-event median of 31. A decode point far above these is bandwidth- or latency-bound in
// its own loads; one near them is bound by the launch.
//   build/kernels/tuning/decode-launch-probe
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "harness/cuda_check.hpp"
#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"

namespace {

__global__ void empty_kernel() {}
// Touches one word of its dynamic shared memory, so the launch reserves it.
__global__ void shared_kernel(int* sink) {
  extern __shared__ int smem[];
  smem[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (smem[(threadIdx.x + 1) % blockDim.x] < 0) *sink = 1;
}

double median_us(decode_bench::L2Flusher& flusher, int blocks, int threads, bool cold, int shared_bytes = 0,
                 int* sink = nullptr) {
  decode_bench::TimingOptions options;
  options.repetitions = 31;
  options.mode = cold ? decode_bench::TimingMode::cold : decode_bench::TimingMode::hot;
  options.graph_threshold_us = 0;  // events around single launches, also hot
  const auto r = decode_bench::time_launches(
      "empty",
      [&](cudaStream_t s) {
        if (shared_bytes > 0) shared_kernel<<<blocks, threads, shared_bytes, s>>>(sink);
        else empty_kernel<<<blocks, threads, 0, s>>>();
        return cudaGetLastError();
      },
      options,
      flusher, nullptr);
  if (!r.ok()) {
    std::fprintf(stderr, "timing failed: %s\n", r.error.c_str());
    std::exit(1);
  }
  return r.stats.median;
}

}  // namespace

int main() {
  decode_bench::L2Flusher flusher(0);
  for (auto [blocks, threads] : {std::pair{1, 32}, std::pair{2048, 128}, std::pair{2048, 256}})
    std::printf("empty kernel <<<%d, %d>>>: cold %.2f us, hot %.2f us\n", blocks, threads,
                median_us(flusher, blocks, threads, true), median_us(flusher, blocks, threads, false));
  // A kernel of large dynamic shared memory after the flush (which prefers L1): does the L1 /
  // shared reconfiguration between them show in the cold time? Then with the flush preferring
  // the most shared memory, as a kernel of large shared memory before it would leave the SMs.
  int* sink = nullptr;
  if (cudaMalloc(&sink, sizeof(int)) != cudaSuccess ||
      cudaFuncSetAttribute(shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024) != cudaSuccess) {
    std::fprintf(stderr, "shared-memory kernel setup failed\n");
    return 1;
  }
  for (int carveout : {-1, 100}) {
    if (carveout >= 0 && flusher.prefer_carveout(carveout) != cudaSuccess) return 1;
    for (int kib : {100, 200})
      std::printf("kernel <<<264, 128, %d KiB shared>>> after a flush of carveout %s: cold %.2f us, hot %.2f us\n", kib,
                  carveout < 0 ? "default" : "100", median_us(flusher, 264, 128, true, kib * 1024, sink),
                  median_us(flusher, 264, 128, false, kib * 1024, sink));
  }
  return 0;
}
