// Tiling probe: times flash-decode traits the library does not select (unroll, warps, pipeline
// stages, tile order) against the default, on contiguous and shuffled-paged KV, and checks each
// variant's output against the default kernel's. It produced the session-3 variant table of
// docs/kernel-notes.md:  build/kernels/tuning/decode-probe        (GPU; about 3 minutes)
//
// Deliberately simpler than the harness, so that a variant is one line: CUDA events around one
// launch, median of 15, and a cudaMemset of 256 MiB as the cold-L2 flush. That write flush costs
// each launch ~15 us of write-back the harness's read flush does not, so these numbers sit a few
// percent under the harness's for the same kernel; compare variants with each other, not with
// results/.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "harness/device_buffer.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/flash_decode_launch.cuh"
#include "kernels/traffic_model.hpp"

namespace decode_bench {
namespace {

// Pseudo-random values in [-1, 1): a hash of the index.
template <class T>
__global__ void fill_kernel(T* p, std::size_t n, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = static_cast<T>((x & 0xffff) / 32768.0f - 1.0f);
  }
}

// Grid-stride read of n float4 (every block reads nearby addresses at the same time).
__global__ void read_grid_stride_kernel(const float4* p, std::size_t n, float* sink) {
  float acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = __ldcs(p + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) *sink = acc;
}

// Each block reads one contiguous chunk: the access order of one-range-per-split flash-decode.
__global__ void read_chunked_kernel(const float4* p, std::size_t n, float* sink) {
  const std::size_t per = (n + gridDim.x - 1) / gridDim.x, begin = blockIdx.x * per, end = min(n, begin + per);
  float acc = 0;
  for (std::size_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const float4 v = __ldcs(p + i);
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 1234.5f) *sink = acc;
}

struct Probe {
  DeviceBuffer<char> flush{std::size_t{256} << 20};
  int repetitions = 15;

  // Median event time of one launch, after two warm-up launches; cold: memset flush first.
  double median_us(const std::function<void()>& launch, bool cold = true) {
    cudaEvent_t start, stop;
    DB_CUDA_CHECK(cudaEventCreate(&start));
    DB_CUDA_CHECK(cudaEventCreate(&stop));
    launch();
    launch();
    DB_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> us;
    for (int r = 0; r < repetitions; ++r) {
      if (cold) DB_CUDA_CHECK(cudaMemsetAsync(flush.get(), r & 0xff, flush.bytes()));
      DB_CUDA_CHECK(cudaEventRecord(start));
      launch();
      DB_CUDA_CHECK(cudaEventRecord(stop));
      DB_CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0;
      DB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      us.push_back(1e3 * ms);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(us.begin(), us.end());
    return us[us.size() / 2];
  }

  // The probe's own DRAM read ceiling (best grid-stride read of 4 GiB), printing the chunked
  // read beside each grid size.
  double read_ceiling_gbps(int sms) {
    const std::size_t bytes = std::size_t{4} << 30, n = bytes / 16;
    DeviceBuffer<float4> buffer(n);
    DeviceBuffer<float> sink(1);
    fill_kernel<float><<<1024, 256>>>(reinterpret_cast<float*>(buffer.get()), bytes / 4, 1);
    double best = 0;
    for (int waves : {4, 8, 16, 32})
      for (int threads : {256, 512, 1024}) {
        const int blocks = sms * waves;
        const double stride = bytes / median_us([&] { read_grid_stride_kernel<<<blocks, threads>>>(buffer.get(), n, sink.get()); }, false) / 1e3;
        const double chunked = bytes / median_us([&] { read_chunked_kernel<<<blocks, threads>>>(buffer.get(), n, sink.get()); }, false) / 1e3;
        std::printf("read blocks=%d threads=%d grid-stride %.1f GB/s chunked %.1f GB/s\n", blocks, threads, stride, chunked);
        best = std::max(best, stride);
      }
    return best;
  }

  // One traits variant on `seqs` sequences of `len` tokens, contiguous (page 0) or over shuffled
  // pages. contiguous_ranges: give each split one range instead of interleaved tiles.
  template <class Tr>
  void variant(DecodeShape s, int seqs, int len, int page, double ceiling, const char* tag, bool contiguous_ranges = false) {
    using Elem = typename Tr::Elem;
    const std::vector<std::int32_t> lens(seqs, len);
    std::size_t rows = std::size_t{1} * seqs * s.heads_kv * len;
    std::vector<std::int32_t> pages, indptr{0};
    if (page > 0) {
      const int per_seq = (len + page - 1) / page;
      pages.resize(std::size_t{1} * per_seq * seqs);
      std::iota(pages.begin(), pages.end(), 0);
      std::shuffle(pages.begin(), pages.end(), std::mt19937(5));
      for (int b = 0; b < seqs; ++b) indptr.push_back(indptr.back() + per_seq);
      rows = pages.size() * page * s.heads_kv;
    }
    DeviceBuffer<Elem> k(rows * s.head_dim), v(rows * s.head_dim);
    fill_kernel<Elem><<<2048, 256>>>(k.get(), k.size(), 7);
    fill_kernel<Elem><<<2048, 256>>>(v.get(), v.size(), 9);
    const std::size_t out_elems = std::size_t{1} * seqs * s.heads_q * s.head_dim;
    DeviceBuffer<float> q(out_elems), o(out_elems), o_default(out_elems), lse(std::size_t{1} * seqs * s.heads_q);
    fill_kernel<float><<<64, 256>>>(q.get(), q.size(), 3);
    DeviceBuffer<std::int32_t> d_lens(lens), d_pages(pages.empty() ? std::vector<std::int32_t>{0} : pages), d_indptr(indptr);
    const DecodeProblem problem{s, dtype_of<Elem>::value, seqs, len, d_lens.get(), q.get(), o.get(), lse.get()};
    DecodeProblem default_problem = problem;
    default_problem.o = o_default.get();

    DecodePlan plan;
    double us = 0, max_diff = 0;
    const auto measure = [&](const auto& kv) {
      using KV = std::decay_t<decltype(kv)>;
      DecodePlan default_plan;
      DB_CUDA_CHECK(plan_decode<KV>(DecodeKernel::flash_decode, default_problem, 0, &default_plan));
      DeviceBuffer<char> default_ws(default_plan.workspace_bytes);
      DB_CUDA_CHECK(run_decode<KV>(kv, default_problem, default_plan, default_ws.get(), nullptr));
      DB_CUDA_CHECK((plan_flash_decode_with<Tr, KV>(problem, 0, &plan)));
      if (contiguous_ranges && plan.interleaved) {
        const std::int64_t chunk = (len + plan.num_splits - 1) / plan.num_splits;
        plan.chunk = (chunk + plan.tile_tokens - 1) / plan.tile_tokens * plan.tile_tokens;
        plan.interleaved = false;
      }
      DeviceBuffer<char> ws(plan.workspace_bytes);
      us = median_us([&] { DB_CUDA_CHECK((run_flash_decode_with<Tr, KV>(kv, problem, plan, ws.get(), nullptr))); });
      const auto got = o.download(), want = o_default.download();
      for (std::size_t i = 0; i < got.size(); ++i) max_diff = std::max(max_diff, static_cast<double>(std::fabs(got[i] - want[i])));
    };
    std::vector<std::int32_t> pages_per_seq;
    if (page > 0) {
      measure(PagedKV<Elem>{k.get(), v.get(), d_pages.get(), d_indptr.get(), page, s.heads_kv, s.head_dim});
      pages_per_seq.assign(seqs, (len + page - 1) / page);
    } else {
      measure(ContiguousKV<Elem>::make(k.get(), v.get(), s.heads_kv, len, s.head_dim));
    }
    const auto model = decode_traffic_model(DecodeKernel::flash_decode, s, dtype_of<Elem>::value, lens, pages_per_seq, plan.num_splits);
    const double gbps = model.minimum_bytes() / us / 1e3;
    std::printf("V %-10s %-5s U=%-2d W=%d S=%d IL=%d tile=%-4d Hq=%-3d B=%-3d T=%-8d pg=%-3d splits=%-5d occ=%d %9.2f us "
                "%7.1f GB/s %5.1f%% diff=%.1e\n",
                tag, std::string(dtype_name(dtype_of<Elem>::value)).c_str(), Tr::kUnroll, Tr::kWarps, Tr::kStages,
                static_cast<int>(plan.interleaved), Tr::kTileTokens, s.heads_q, seqs, len, page, plan.num_splits,
                plan.blocks_per_sm, us, gbps, 100 * gbps / ceiling, max_diff);
  }

  // (unroll, warps, stages): 0 / 0 / -1 is the library default; stages 0 is the register path.
  template <class T, int U, int W, int S>
  using Traits = device::FlashDecodeTraits<T, 128, 1, U, W, S>;

  template <class T>
  void sweep(DecodeShape s, int seqs, int len, int page, double ceiling, const char* tag) {
    variant<Traits<T, 8, 8, 0>>(s, seqs, len, page, ceiling, tag, /*contiguous_ranges=*/true);
    variant<Traits<T, 8, 8, 0>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 4, 8, 2>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 4, 8, 3>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 8, 4, 2>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 8, 4, 3>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 4, 4, 4>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 2, 8, 4>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 8, 8, 2>>(s, seqs, len, page, ceiling, tag);
  }
};

}  // namespace
}  // namespace decode_bench

int main() {
  using namespace decode_bench;
  int sms = 0;
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Probe probe;
  const double ceiling = probe.read_ceiling_gbps(sms);
  std::printf("DRAM read ceiling (probe): %.1f GB/s\n", ceiling);
  const DecodeShape one{1, 1, 128}, h32{32, 32, 128};
  probe.sweep<__half>(one, 1, 2097152, 0, ceiling, "2M");
  probe.sweep<float>(one, 1, 2097152, 0, ceiling, "2M");
  probe.sweep<__half>(h32, 1, 65536, 0, ceiling, "32x64K");
  for (int page : {1, 16, 512}) probe.sweep<__half>(h32, 1, 65536, page, ceiling, "32x64Kpg");
  probe.sweep<__half>(h32, 64, 1024, 0, ceiling, "64x1K");
  probe.sweep<__half>(h32, 64, 1024, 16, ceiling, "64x1Kpg");
  return 0;
}
