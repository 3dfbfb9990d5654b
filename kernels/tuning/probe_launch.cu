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

double median_us(decode_bench::L2Flusher& flusher, int blocks, int threads, bool cold) {
  decode_bench::TimingOptions options;
  options.repetitions = 31;
  options.mode = cold ? decode_bench::TimingMode::cold : decode_bench::TimingMode::hot;
  options.graph_threshold_us = 0;  // events around single launches, also hot
  const auto r = decode_bench::time_launches(
      "empty", [&](cudaStream_t s) { empty_kernel<<<blocks, threads, 0, s>>>(); return cudaGetLastError(); }, options,
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
  return 0;
}
