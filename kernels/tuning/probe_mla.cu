// Timing probe of the MLA decode kernels (kernels/mla/mla_decode.hpp; docs/kernels/mla.md) at the
// shapes of DeepSeek-V3 decode: BF16 latent cache, paged (page 64, pages in order), h_q 16 and 128
// (tensor parallel 8 and 1), q_len 1 and 2, batch x context 1 x 32K, 32 x 4K, 128 x 4K, 128 x 16K.
// Cold L2 (the harness's flush before each launch), CUDA events, median. One line per point: the
// kernel, its splits, the time, the model's bytes and FLOPs over it, and the intensity (compare with
// `decode-bench ceilings`: dram_read and bf16_tensor_wgmma). Each point runs the kernel the backend
// picks on this GPU (plan_mla_decode_for_device: mla_decode_mma_narrow at h_q 16, the warpgroup-MMA
// kernel on Hopper at 64 rows or more, else mla_decode_mma) and, where that is the warpgroup-MMA
// kernel, its other tiling (32-token tiles after 64, or 64 after 32) and mla_decode_mma too. The
// planner's knobs (DECODE_BENCH_MLA_TILE, ...: kernels/tuning_policy.hpp) apply to the first plan.
// Correctness is the GPU tests' job (MlaDecodeGpu.*, MlaDecodeWgmmaGpu.*).
//   decode-mla-probe [repetitions [filter]]
// repetitions 0: one launch per point, untimed (for ncu); filter: only the points whose label
// contains it (labels: "mla bf16 h16 q1 128x4096 page64").
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <cuda_bf16.h>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"
#include "kernels/kv_accessor.hpp"
#include "kernels/mla/mla_decode.hpp"
#include "kernels/mla/mla_decode_wgmma.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {
namespace {

// Values in [-1, 1) from a hash of the index (no host copy of gigabytes).
template <class T>
__global__ void fill_kernel(T* p, std::size_t n, unsigned salt) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned h = static_cast<unsigned>(i) * 2654435761u ^ salt;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    p[i] = static_cast<T>(static_cast<float>(h & 0xffff) / 32768.f - 1.f);
  }
}

int g_reps = 15;
TuningPolicy g_tuning;  // from the environment, parsed in main
const char* g_filter = "";

void point(int heads_q, int q_len, int batch, int len) {
  constexpr int kPage = 64;
  MlaShape shape;
  shape.heads_q = heads_q;
  shape.q_len = q_len;
  const std::string label = "mla bf16 h" + std::to_string(heads_q) + " q" + std::to_string(q_len) + " " +
                            std::to_string(batch) + "x" + std::to_string(len) + " page64";
  if (label.find(g_filter) == std::string::npos) return;
  const int pages_per_seq = (len + kPage - 1) / kPage;
  const std::size_t pages = static_cast<std::size_t>(batch) * pages_per_seq;
  DeviceBuffer<__nv_bfloat16> cache(pages * kPage * shape.key_dim());
  fill_kernel<<<1024, 256>>>(cache.get(), cache.size(), 17u);
  std::vector<std::int32_t> page_indices(pages), indptr(batch + 1), lens(batch, len);
  std::iota(page_indices.begin(), page_indices.end(), 0);
  for (int b = 0; b <= batch; ++b) indptr[b] = b * pages_per_seq;
  DeviceBuffer<std::int32_t> d_pages(page_indices), d_indptr(indptr), d_lens(lens);
  const std::size_t rows = static_cast<std::size_t>(batch) * shape.rows();
  DeviceBuffer<__nv_bfloat16> q(rows * shape.key_dim()), o(rows * shape.value_dim());  // MlaIo of a BF16 cache
  DeviceBuffer<float> lse(rows);
  fill_kernel<<<1024, 256>>>(q.get(), q.size(), 29u);
  DB_CUDA_CHECK(cudaGetLastError());
  int sm_count = 0;
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0));
  // The kernel the backend runs here (warpgroup MMA on Hopper at 64 rows or more), then, where
  // that is the warpgroup-MMA kernel, its other tiling and the mma.sync kernel beside it.
  std::vector<MlaDecodePlan> plans{
      plan_mla_decode_for_device(shape, DType::bf16, batch, len, 0, 0, g_tuning.mla_tile)};
  if (plans[0].kernel == MlaKernel::wgmma) {
    const int other_tile = plans[0].tile_tokens == 64 ? 32 : 64;
    plans.push_back(plan_mla_decode_wgmma(shape, DType::bf16, batch, len, sm_count, 0, other_tile));
    plans.push_back(plan_mla_decode(shape, DType::bf16, batch, len, sm_count));
  }
  std::vector<float> first_o;
  for (const MlaDecodePlan& plan : plans) {
    DeviceBuffer<std::uint8_t> workspace(plan.workspace_bytes);
    DB_CUDA_CHECK(init_mla_workspace(plan, workspace.get(), nullptr));
    PagedKV<__nv_bfloat16> kv;
    kv.k = kv.v = cache.get();
    kv.page_indices = d_pages.get();
    kv.indptr = d_indptr.get();
    kv.page_size = kPage;
    kv.heads_kv = 1;
    kv.head_dim = shape.key_dim();
    const auto launch = [&](cudaStream_t st) {
      return run_mla_decode(shape, kv, d_lens.get(), q.get(), o.get(), lse.get(), workspace.get(), plan, st);
    };
    double us = 0;
    if (g_reps == 0) {
      DB_CUDA_CHECK(launch(nullptr));
      DB_CUDA_CHECK(cudaDeviceSynchronize());
    } else {
      L2Flusher flusher(0);
      TimingOptions options;
      options.mode = TimingMode::cold;
      options.repetitions = g_reps;
      options.graph_threshold_us = 0;
      const TimingResult r = time_launches("mla-probe", launch, options, flusher, nullptr);
      if (!r.ok()) {
        std::fprintf(stderr, "%s: timing failed: %s\n", label.c_str(), r.error.c_str());
        std::exit(1);
      }
      us = r.stats.median;
    }
    const MlaTrafficModel m = mla_traffic_model(shape, DType::bf16, lens, std::vector<std::int32_t>(batch, pages_per_seq));
    // The second kernel's o against the first's (both ran at least once): a quick cross-check at
    // full size, not the GPU tests' bound.
    std::vector<float> out(o.size());
    const std::vector<__nv_bfloat16> out_bf16 = o.download();
    std::transform(out_bf16.begin(), out_bf16.end(), out.begin(), [](__nv_bfloat16 v) { return __bfloat162float(v); });
    double diff = 0;
    if (first_o.empty()) first_o = out;
    else
      for (std::size_t i = 0; i < out.size(); ++i)
        diff = std::max(diff, static_cast<double>(std::fabs(out[i] - first_o[i])));
    std::printf("%-36s %-21s tile %2d splits %3d  %10.2f us  %8.1f GB/s  %7.1f TFLOP/s  intensity %6.1f FLOP/B", label.c_str(),
                mla_kernel_name(plan.kernel), plan.tile_tokens, plan.num_splits, us,
                us > 0 ? m.minimum_bytes() / us / 1e3 : 0.0, us > 0 ? m.flops / us / 1e6 : 0.0, m.arithmetic_intensity());
    if (&plan != &plans.front())
      std::printf("  max |o - o(%s tile %d)| %.3g", mla_kernel_name(plans.front().kernel), plans.front().tile_tokens,
                  diff);
    std::printf("\n");
  }
}

}  // namespace
}  // namespace decode_bench

int main(int argc, char** argv) {
  using namespace decode_bench;
  try {
    g_tuning = tuning_policy_from_environment();
  } catch (const TuningPolicyError& e) {
    std::fprintf(stderr, "decode-mla-probe: %s\n", e.what());
    return 2;
  }
  if (argc > 1) g_reps = std::atoi(argv[1]);
  if (argc > 2) g_filter = argv[2];
  try {
    for (const int h : {16, 128})
      for (const int q_len : {1, 2}) {
        point(h, q_len, 1, 32768);
        point(h, q_len, 32, 4096);
        point(h, q_len, 128, 4096);
        point(h, q_len, 128, 16384);
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "decode-mla-probe: %s\n", e.what());
    return 1;
  }
  return 0;
}
