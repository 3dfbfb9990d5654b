// Tiling probe: times flash-decode variants the library does not select (unroll, warps, pipeline
// stages, tile order, split count, merge kernel) against the default, on contiguous and
// shuffled-paged KV, and checks each variant's output against the default kernel's. It produced
// the variant tables of docs/history/kernel-notes.md:
//   build/kernels/tuning/decode-probe [ceiling] [tiling] [merge] [splits]   (GPU; default: these)
//   build/kernels/tuning/decode-probe tiling2m | locality | short | masked | group2 | group1-stages
//   ncu ... build/kernels/tuning/decode-probe ncu|ncu-paged|ncu-locality   (one untimed launch per kernel)
//
// The planner's knobs (DECODE_BENCH_FD_*, ...: kernels/tuning_policy.hpp) apply to every plan,
// parsed once at start; a bad value ends the probe with exit 2.
//
// Timing is the harness's own (time_launches: stream gate, read flush of 2x L2, CUDA events
// around one launch, cold L2, median of the repetitions), so these numbers compare with results/.
// The tables of commit 5efe1fc came from an earlier version that flushed with cudaMemset and timed
// without the gate; they sit a few percent lower.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "harness/device_buffer.hpp"
#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/flash_decode_launch.cuh"
#include "kernels/traffic_model.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {
namespace {

TuningPolicy g_tuning;  // from the environment, parsed in main

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
  L2Flusher flusher{0};
  TimingOptions cold_options;

  Probe() { cold_options.repetitions = 9; }

  // The harness's cold-L2 median of one launch (read flush outside the events); `cold` false:
  // hot, back to back.
  double median_us(const std::function<void(cudaStream_t)>& launch, bool cold = true) {
    TimingOptions options = cold_options;
    options.mode = cold ? TimingMode::cold : TimingMode::hot;
    options.graph_threshold_us = 0;  // events around single launches, also hot
    const TimingResult r = time_launches(
        "probe", [&](cudaStream_t stream) { launch(stream); return cudaGetLastError(); }, options, flusher, nullptr);
    if (!r.ok()) {
      std::fprintf(stderr, "timing failed: %s\n", r.error.c_str());
      std::exit(1);
    }
    return r.stats.median;
  }

  // The probe's own DRAM read ceiling (best grid-stride read of 4 GiB), printing the chunked
  // read beside each grid size.
  double read_ceiling_gbps(int sms, bool print) {
    const std::size_t bytes = std::size_t{4} << 30, n = bytes / 16;
    DeviceBuffer<float4> buffer(n);
    DeviceBuffer<float> sink(1);
    fill_kernel<float><<<1024, 256>>>(reinterpret_cast<float*>(buffer.get()), bytes / 4, 1);
    double best = 0;
    for (int waves : {4, 8, 16, 32})
      for (int threads : {256, 512, 1024}) {
        const int blocks = sms * waves;
        const double stride = bytes / median_us([&](cudaStream_t st) { read_grid_stride_kernel<<<blocks, threads, 0, st>>>(buffer.get(), n, sink.get()); }) / 1e3;
        if (print) {
          const double chunked = bytes / median_us([&](cudaStream_t st) { read_chunked_kernel<<<blocks, threads, 0, st>>>(buffer.get(), n, sink.get()); }) / 1e3;
          std::printf("read blocks=%d threads=%d grid-stride %.1f GB/s chunked %.1f GB/s\n", blocks, threads, stride, chunked);
        }
        best = std::max(best, stride);
      }
    return best;
  }

  // How a variant is planned beyond its traits.
  struct Knobs {
    int splits = 0;                  // requested split count (0: the planner's choice)
    int heads_per_block = 0;         // KV heads per block (0: the planner's choice)
    bool fused_merge = true;         // false: the separate merge kernel
    bool contiguous_ranges = false;  // one range per split instead of interleaved tiles
    bool once = false;               // one untimed launch (for ncu), no timing
    int shuffle_window = 0;          // pages shuffled within windows of this many physical pages
                                     // (0: one shuffle over all; 1: physical order = logical)
  };

  // One traits variant on `seqs` sequences of `len` tokens, contiguous (page 0) or over shuffled
  // pages.
  template <class Tr>
  void variant(DecodeShape s, int seqs, int len, int page, double ceiling, const char* tag, Knobs knobs = {}) {
    using Elem = typename Tr::Elem;
    const std::vector<std::int32_t> lens(seqs, len);
    std::size_t rows = std::size_t{1} * seqs * s.heads_kv * len;
    std::vector<std::int32_t> pages, indptr{0};
    if (page > 0) {
      const int per_seq = (len + page - 1) / page;
      pages.resize(std::size_t{1} * per_seq * seqs);
      std::iota(pages.begin(), pages.end(), 0);
      std::mt19937 rng(5);
      const std::size_t window = knobs.shuffle_window > 0 ? knobs.shuffle_window : pages.size();
      for (std::size_t first = 0; first < pages.size(); first += window)
        std::shuffle(pages.begin() + first, pages.begin() + std::min(pages.size(), first + window), rng);
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
      DB_CUDA_CHECK(plan_decode<KV>(DecodeKernel::flash_decode, default_problem, {.tuning = g_tuning}, &default_plan));
      DeviceBuffer<char> default_ws(default_plan.workspace_bytes);
      DB_CUDA_CHECK(init_decode_workspace(default_plan, default_ws.get(), nullptr));
      DB_CUDA_CHECK(run_decode<KV>(kv, default_problem, default_plan, default_ws.get(), nullptr));
      const DecodeOptions options{.splits = knobs.splits, .heads_per_block = knobs.heads_per_block,
                                  .fused_merge = knobs.fused_merge, .tuning = g_tuning};
      DB_CUDA_CHECK((plan_flash_decode_with<Tr, KV>(problem, options, &plan)));
      if (knobs.contiguous_ranges && plan.interleaved) {
        const std::int64_t chunk = (len + plan.num_splits - 1) / plan.num_splits;
        plan.chunk = (chunk + plan.tile_tokens - 1) / plan.tile_tokens * plan.tile_tokens;
        plan.interleaved = false;
      }
      DeviceBuffer<char> ws(plan.workspace_bytes);
      DB_CUDA_CHECK(init_decode_workspace(plan, ws.get(), nullptr));
      const auto launch = [&](cudaStream_t st) { DB_CUDA_CHECK((run_flash_decode_with<Tr, KV>(kv, problem, plan, ws.get(), st))); };
      if (knobs.once) {
        launch(nullptr);
        DB_CUDA_CHECK(cudaDeviceSynchronize());
        us = 1;
      } else {
        us = median_us(launch);
      }
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
    std::printf("V %-10s %-5s win=%-6d U=%-2d W=%d S=%d HB=%d IL=%d fused=%d tile=%-4d Hq=%-3d B=%-3d T=%-8d pg=%-3d splits=%-5d "
                "blocks=%-5d occ=%d %9.2f us %7.1f GB/s %5.1f%% diff=%.1e\n",
                tag, std::string(dtype_name(dtype_of<Elem>::value)).c_str(), knobs.shuffle_window, Tr::kUnroll, Tr::kWarps, Tr::kStages,
                plan.heads_per_block, static_cast<int>(plan.interleaved), static_cast<int>(plan.fused_merge),
                plan.tile_tokens, s.heads_q, seqs, len, page, plan.num_splits,
                plan.num_splits * s.heads_kv / plan.heads_per_block * seqs, plan.blocks_per_sm, us, gbps,
                100 * gbps / ceiling, max_diff);
    std::fflush(stdout);
  }

  // (unroll, warps, stages): 0 / 0 / -1 is the library default; stages 0 is the register path.
  template <class T, int U, int W, int S>
  using Traits = device::FlashDecodeTraits<T, 128, 1, U, W, S>;

  // The tiling table of commit 5efe1fc.
  template <class T>
  void tilings(DecodeShape s, int seqs, int len, int page, double ceiling, const char* tag) {
    variant<Traits<T, 8, 8, 0>>(s, seqs, len, page, ceiling, tag, {.contiguous_ranges = true});
    variant<Traits<T, 8, 8, 0>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 4, 8, 2>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 4, 8, 3>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 8, 4, 2>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 8, 4, 3>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 4, 4, 4>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 2, 8, 4>>(s, seqs, len, page, ceiling, tag);
    variant<Traits<T, 8, 8, 2>>(s, seqs, len, page, ceiling, tag);
  }

  // Fused merge against the separate merge kernel, default tiling.
  template <class T>
  void merges(DecodeShape s, int seqs, int len, int page, double ceiling, const char* tag, bool once = false) {
    variant<Traits<T, 0, 0, -1>>(s, seqs, len, page, ceiling, tag, {.fused_merge = false, .once = once});
    variant<Traits<T, 0, 0, -1>>(s, seqs, len, page, ceiling, tag, {.fused_merge = true, .once = once});
    if (page > 0) variant<Traits<T, 0, 0, -1>>(s, seqs, len, 0, ceiling, tag, {.fused_merge = true, .once = once});
  }

  // What the paged gap at small pages follows. First run (commit 328fb71, one head per block): the
  // pages in logical order, shuffled only within 2 MiB windows (the GPU's large-page size: the same
  // scattered DRAM runs, few address translations) and shuffled over the whole pool, then deeper
  // pipelines. The windowed shuffle closed the gap, so translations are in the way; the second
  // run compares heads per block (HB) at full shuffle, HB heads of a page sharing a translation.
  template <class T>
  void locality(DecodeShape s, int seqs, int len, double ceiling, const char* tag, bool windows) {
    for (int heads : {1, 8}) variant<Traits<T, 0, 0, -1>>(s, seqs, len, 0, ceiling, tag, {.heads_per_block = heads});
    const std::int64_t row_bytes = std::int64_t{1} * s.heads_kv * s.head_dim * sizeof(T);
    for (int page : {1, 4, 16, 64, 256}) {
      const int window = static_cast<int>(std::max<std::int64_t>(1, (std::int64_t{2} << 20) / (row_bytes * page)));
      if (windows) variant<Traits<T, 0, 0, -1>>(s, seqs, len, page, ceiling, tag, {.heads_per_block = 1, .shuffle_window = 1});
      variant<Traits<T, 0, 0, -1>>(s, seqs, len, page, ceiling, tag, {.heads_per_block = 1, .shuffle_window = window});
      for (int heads : {1, 2, 4, 8})
        variant<Traits<T, 0, 0, -1>>(s, seqs, len, page, ceiling, tag, {.heads_per_block = heads});
    }
  }

  // The short tiling's neighbours (group 1, D 128): unroll (rows per row group), warps and stages
  // around ShortFlashDecodeTraits' 4 / 4 / 2, at 64 x 32 heads x 32 and x 256; and deeper
  // pipelines of the standard tiling at one head x 32 x 8K. Each against the library's plan.
  template <class T>
  void short_tilings(double ceiling) {
    const DecodeShape h32{32, 32, 128}, one{1, 1, 128};
    for (int len : {32, 256}) {
      const char* tag = len == 32 ? "64x32" : "64x256";
      variant<Traits<T, 4, 4, 2>>(h32, 64, len, 0, ceiling, tag);  // the short tiling
      variant<Traits<T, 4, 4, 3>>(h32, 64, len, 0, ceiling, tag);
      variant<Traits<T, 4, 4, 4>>(h32, 64, len, 0, ceiling, tag);
      variant<Traits<T, 2, 4, 3>>(h32, 64, len, 0, ceiling, tag);
      variant<Traits<T, 2, 4, 4>>(h32, 64, len, 0, ceiling, tag);
      variant<Traits<T, 8, 4, 2>>(h32, 64, len, 0, ceiling, tag);
      variant<Traits<T, 2, 8, 2>>(h32, 64, len, 0, ceiling, tag);
      variant<Traits<T, 4, 2, 2>>(h32, 64, len, 0, ceiling, tag);
    }
    variant<Traits<T, 0, 0, -1>>(one, 32, 8192, 0, ceiling, "32x8K");
    variant<Traits<T, 8, 8, 3>>(one, 32, 8192, 0, ceiling, "32x8K");
    variant<Traits<T, 4, 8, 4>>(one, 32, 8192, 0, ceiling, "32x8K");
    variant<Traits<T, 4, 4, 2>>(one, 32, 8192, 0, ceiling, "32x8K");
  }

  // Each traits variant in turn at one point, in the order given.
  template <class... Trs>
  void each_variant(DecodeShape s, int seqs, int len, int page, double ceiling, const char* tag) {
    (variant<Trs>(s, seqs, len, page, ceiling, tag), ...);
  }

  // Head dim 96 (Phi-3-mini: 32 q / 32 KV heads, FP16) on the kernel of 128, the row's tail
  // masked, where the planner keeps the standard tiling (1 x 32K, 16 x 4K): its one 128-token tile
  // in flight holds three quarters of the bytes it holds at d 128. The library's tiling (8 warps,
  // unroll 8, 2 stages) against 3 and 4 stages (one block an SM, two or three tiles in flight).
  template <class T>
  void masked_head_dim(double ceiling) {
    const DecodeShape phi3{32, 32, 96};
    for (int page : {0, 16})
      for (const auto& [seqs, len, tag] : {std::tuple{1, 32768, "1x32K-d96"}, std::tuple{16, 4096, "16x4K-d96"}})
        each_variant<Traits<T, 0, 0, -1>, Traits<T, 8, 8, 3>, Traits<T, 4, 8, 4>, Traits<T, 2, 8, 4>>(
            phi3, seqs, len, page, ceiling, tag);
  }

  // GQA group 2 (Gemma-3-27B: 32 q / 16 KV heads, d 128, BF16): the standard tiling (8 warps, one
  // 128-token tile in flight, one block an SM; at many short sequences each block's first tile is a
  // round trip nothing else on its SM hides) against 4 warps of 32-token tiles at 2 and 3 stages
  // (several blocks an SM), the deep tiling's shape (8 warps, 64-token tiles, 4 stages) and 3
  // stages of the standard tiles, at the models preset's batches; then split counts at one sequence
  // of 1K tokens (the local layers' window of 1,024). It chose group 2's short tiling
  // (docs/decisions/short-tiling-at-group-2.md).
  template <class T, int U, int W, int S>
  using Group2Traits = device::FlashDecodeTraits<T, 128, 2, U, W, S>;

  template <class T>
  void group2_tilings(double ceiling) {
    const DecodeShape gemma3{32, 16, 128};
    for (int page : {0, 16})
      for (const auto& [seqs, len, tag] : {std::tuple{128, 512, "128x512"}, std::tuple{64, 1024, "64x1K"},
                                           std::tuple{16, 4096, "16x4K"}, std::tuple{1, 32768, "1x32K"}})
        each_variant<Group2Traits<T, 0, 0, -1>, Group2Traits<T, 4, 4, 2>, Group2Traits<T, 4, 4, 3>,
                     Group2Traits<T, 4, 8, 4>, Group2Traits<T, 8, 8, 3>>(gemma3, seqs, len, page, ceiling, tag);
    for (int page : {0, 16})
      for (int splits : {0, 4, 8, 16}) variant<Group2Traits<T, 0, 0, -1>>(gemma3, 1, 1024, page, ceiling, "1x1K", {.splits = splits});
  }

  // Group 1, many sequences of 512 and 1,024 tokens (4 and 8 standard tiles): the standard tiling
  // against the short one (4 warps, 32-token tiles, 2 stages: what a wide bus plans for Phi-3-mini's
  // masked d 96 there; MHA at d 128 plans the standard one) and its shape at 3 and 4 stages.
  template <class T>
  void group1_short_stages(double ceiling) {
    for (const DecodeShape& s : {DecodeShape{32, 32, 96}, DecodeShape{32, 32, 128}})
      for (int page : {0, 16})
        for (const auto& [seqs, len, tag] : {std::tuple{128, 512, "128x512"}, std::tuple{64, 1024, "64x1K"}})
          each_variant<Traits<T, 0, 0, -1>, Traits<T, 4, 4, 2>, Traits<T, 4, 4, 3>, Traits<T, 4, 4, 4>>(
              s, seqs, len, page, ceiling, tag);
  }

  // Requested split counts around one wave, default tiling.
  template <class T>
  void split_counts(DecodeShape s, int seqs, int len, int page, double ceiling, const char* tag, std::vector<int> counts) {
    for (int splits : counts) variant<Traits<T, 0, 0, -1>>(s, seqs, len, page, ceiling, tag, {.splits = splits});
  }
};

__global__ void empty_kernel() {}

}  // namespace
}  // namespace decode_bench

int main(int argc, char** argv) {
  using namespace decode_bench;
  try {
    g_tuning = tuning_policy_from_environment();
  } catch (const TuningPolicyError& e) {
    std::fprintf(stderr, "decode-probe: %s\n", e.what());
    return 2;
  }
  std::vector<std::string_view> sections(argv + 1, argv + argc);
  const auto wants = [&](std::string_view name) {
    return sections.empty() ? name != "tiling2m" && name != "locality" && name != "short" && name != "masked" &&
                                  name != "group2" && name != "group1-stages"
                            : std::find(sections.begin(), sections.end(), name) != sections.end();
  };
  int sms = 0;
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  Probe probe;
  const DecodeShape one{1, 1, 128}, h32{32, 32, 128};
  if (sections.size() == 1 && sections[0] == "ncu") {
    // One launch of each kernel to profile: ncu -k regex:"flash_decode_split|merge_partials".
    probe.merges<__half>(one, 1, 2097152, 0, 1, "2M", true);
    probe.merges<__half>(h32, 1, 65536, 0, 1, "32x64K", true);
    probe.merges<__half>(one, 1, 262144, 16, 1, "256Kpg", true);
    return 0;
  }
  if (sections.size() == 1 && sections[0] == "ncu-paged") {
    // Paged against contiguous at 32 x 64K, one launch each of the default kernel (shuffled pages).
    for (int page : {1, 16, 0}) probe.variant<Probe::Traits<__half, 0, 0, -1>>(h32, 1, 65536, page, 1, "32x64Kpg", {.once = true});
    return 0;
  }
  if (sections.size() == 1 && sections[0] == "ncu-locality") {
    // Shuffled page 1 over the pool against the same pages within 2 MiB windows, in logical order,
    // and contiguous: one launch each of the default kernel at 32 x 64K.
    using Default = Probe::Traits<__half, 0, 0, -1>;
    for (int window : {0, 256, 1}) probe.variant<Default>(h32, 1, 65536, 1, 1, "32x64Kpg", {.once = true, .shuffle_window = window});
    probe.variant<Default>(h32, 1, 65536, 0, 1, "32x64K", {.once = true});
    return 0;
  }
  const double ceiling = probe.read_ceiling_gbps(sms, wants("ceiling"));
  std::printf("DRAM read ceiling (probe): %.1f GB/s\n", ceiling);
  std::printf("empty kernel, cold: %.2f us, hot: %.2f us\n",
              probe.median_us([](cudaStream_t st) { empty_kernel<<<1, 32, 0, st>>>(); }),
              probe.median_us([](cudaStream_t st) { empty_kernel<<<1, 32, 0, st>>>(); }, false));
  if (wants("merge")) {
    probe.merges<__half>(one, 1, 2097152, 0, ceiling, "2M");
    probe.merges<float>(one, 1, 2097152, 0, ceiling, "2M");
    probe.merges<__half>(h32, 1, 65536, 0, ceiling, "32x64K");
    for (int page : {1, 16, 256}) probe.merges<__half>(one, 1, 262144, page, ceiling, "256Kpg");
    for (int page : {1, 512}) probe.merges<__half>(h32, 1, 65536, page, ceiling, "32x64Kpg");
  }
  if (wants("splits")) {
    probe.split_counts<__half>(one, 1, 2097152, 0, ceiling, "2M", {132, 192, 256, 264, 396, 528});
    probe.split_counts<__half>(h32, 1, 65536, 0, ceiling, "32x64K", {4, 8, 9, 16});
  }
  if (wants("locality")) {
    probe.locality<__half>(h32, 1, 65536, ceiling, "32x64Kpg", true);
    for (int page : {0, 16})
      for (int heads : {1, 8}) probe.variant<Probe::Traits<__half, 0, 0, -1>>(h32, 64, 1024, page, ceiling, "64x1K", {.heads_per_block = heads});
  }
  if (wants("short")) probe.short_tilings<__half>(ceiling);
  if (wants("masked")) probe.masked_head_dim<__half>(ceiling);
  if (wants("group2")) probe.group2_tilings<__nv_bfloat16>(ceiling);
  if (wants("group1-stages")) probe.group1_short_stages<__half>(ceiling);
  if (wants("tiling2m")) probe.tilings<__half>(one, 1, 2097152, 0, ceiling, "2M");
  if (wants("tiling")) {
    probe.tilings<__half>(one, 1, 2097152, 0, ceiling, "2M");
    probe.tilings<float>(one, 1, 2097152, 0, ceiling, "2M");
    probe.tilings<__half>(h32, 1, 65536, 0, ceiling, "32x64K");
    for (int page : {1, 16, 512}) probe.tilings<__half>(h32, 1, 65536, page, ceiling, "32x64Kpg");
    probe.tilings<__half>(h32, 64, 1024, 0, ceiling, "64x1K");
    probe.tilings<__half>(h32, 64, 1024, 16, ceiling, "64x1Kpg");
  }
  return 0;
}
