// Timing probe of row attention (docs/history/kernel-notes.md, "Row attention"): grouped decode at
// 32 q / 8 KV heads, d = 128, on both decode paths (CUDA-core flash-decode vs the tensor-core row
// kernel; points of at most 128 tokens also on the short-sequence kernel, docs/kernels/short_decode.md), contiguous and paged (page 16, pages in order), FP16 / BF16 / FP8, and the shared-prefix
// phase (one item per KV head, N rows each, 32 KV heads, prefix P), FP16 and FP8 E4M3. FP8 data are
// finite bytes with unit scales (the scale changes no work). Cold L2 (the harness's read flush before each
// launch), CUDA events, median. Prints one line per point; correctness is the GPU tests' job.
// Scaling points (FP16 contiguous, 32/8 and MHA 32/32 at several token counts, and a plain streaming
// read of the same byte counts) separate a kernel's per-launch cost from its streaming rate: time =
// fixed + bytes / rate, fitted over sizes.
//   decode-row-probe [repetitions [filter]]
//   DECODE_ROW_PROBE_SPLITS=n pins the decode splits (DecodeOptions::splits) of every decode point.
//   DECODE_ROW_PROBE_FLUSH_CARVEOUT=p sets the flush kernel's preferred shared-memory carveout.
//   The planner's knobs (DECODE_BENCH_ROW_*, ...: kernels/tuning_policy.hpp) apply to every plan,
//   parsed once at start; a bad value ends the probe with exit 2.
// repetitions 0: one launch per point, untimed (for ncu); filter: run only the points whose label
// contains it (labels: "decode fp16 1x65536 contiguous cuda_core", "decode fp16 mha 1x8192 contiguous
// cuda_core" for 32 / 32 heads, "prefix fp16 N 64 P 1024 paged16", "read 268435456").
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/device_buffer.hpp"
#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"
#include "kernels/decode_launch.hpp"
#include "kernels/tuning_policy.hpp"

namespace decode_bench {
namespace {

// Values in [-1, 1) from a hash of the index (no host copy of hundreds of MB).
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
template <class T>
void fill(DeviceBuffer<T>& b, unsigned salt) {
  fill_kernel<<<1024, 256>>>(b.get(), b.size(), salt);
  DB_CUDA_CHECK(cudaGetLastError());
}
// n values of the storage type `dtype` in a byte buffer.
void fill_as(DeviceBuffer<std::uint8_t>& b, std::size_t n, DType dtype, unsigned salt) {
  switch (dtype) {
    case DType::fp16: fill_kernel<<<1024, 256>>>(reinterpret_cast<__half*>(b.get()), n, salt); break;
    case DType::bf16: fill_kernel<<<1024, 256>>>(reinterpret_cast<__nv_bfloat16*>(b.get()), n, salt); break;
    case DType::fp8_e4m3: fill_kernel<<<1024, 256>>>(reinterpret_cast<__nv_fp8_e4m3*>(b.get()), n, salt); break;
    case DType::fp8_e5m2: fill_kernel<<<1024, 256>>>(reinterpret_cast<__nv_fp8_e5m2*>(b.get()), n, salt); break;
    case DType::fp32: fill_kernel<<<1024, 256>>>(reinterpret_cast<float*>(b.get()), n, salt); break;
  }
  DB_CUDA_CHECK(cudaGetLastError());
}

// Calls f with a null pointer of the storage type of dtype (fp32 is not probed).
template <class F>
void with_storage(DType dtype, F&& f) {
  switch (dtype) {
    case DType::fp16: return f(static_cast<__half*>(nullptr));
    case DType::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
    case DType::fp8_e4m3: return f(static_cast<__nv_fp8_e4m3*>(nullptr));
    case DType::fp8_e5m2: return f(static_cast<__nv_fp8_e5m2*>(nullptr));
    case DType::fp32: break;
  }
}

int g_reps = 15;
const char* g_filter = "";
L2Flusher* g_flusher = nullptr;
TuningPolicy g_tuning;  // the planner's knobs (kernels/tuning_policy.hpp), parsed in main

bool selected(const std::string& label) { return label.find(g_filter) != std::string::npos; }

double median_us(const std::function<cudaError_t(cudaStream_t)>& launch) {
  if (g_reps == 0) {  // one untimed launch (a profiler's target)
    DB_CUDA_CHECK(launch(nullptr));
    DB_CUDA_CHECK(cudaDeviceSynchronize());
    return 0;
  }
  TimingOptions options;
  options.mode = TimingMode::cold;
  options.repetitions = g_reps;
  options.graph_threshold_us = 0;
  const TimingResult r = time_launches("row-probe", launch, options, *g_flusher, nullptr);
  if (!r.ok()) {
    std::fprintf(stderr, "timing failed: %s\n", r.error.c_str());
    std::exit(1);
  }
  return r.stats.median;
}

// The streaming read of the harness's DRAM ceiling (16-byte loads, 4 in flight per thread, one
// wave of 4 x 512-thread blocks per SM), timed cold like the decode points.
__global__ void read_kernel(const uint4* __restrict__ p, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = p[i], b = p[i + stride], c = p[i + 2 * stride], d = p[i + 3 * stride];
    acc ^= a.x ^ b.y ^ c.z ^ d.w;
  }
  for (; i < n; i += stride) acc ^= p[i].x;
  if (acc == 0x9e3779b9u) *sink = acc;
}

void read_point(std::size_t bytes) {
  if (!selected("read " + std::to_string(bytes))) return;
  DeviceBuffer<std::uint8_t> buf(bytes);
  DB_CUDA_CHECK(cudaMemset(buf.get(), 1, bytes));
  DeviceBuffer<unsigned> sink(1);
  int sms = 0;
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const double us = median_us([&](cudaStream_t st) {
    read_kernel<<<4 * sms, 512, 0, st>>>(reinterpret_cast<const uint4*>(buf.get()), bytes / 16, sink.get());
    return cudaGetLastError();
  });
  std::printf("read %zu bytes: %8.1f us  %6.0f GB/s\n", bytes, us, bytes / us / 1e3);
}

void decode_point(int seqs, int len, bool paged, DType dtype, int heads_kv = 8) {
  const DecodeShape shape{32, heads_kv, 128};
  const std::string heads_label = heads_kv == 32 ? " mha " : " ";
  const std::size_t elems = static_cast<std::size_t>(seqs) * shape.heads_kv * len * shape.head_dim;
  DeviceBuffer<std::uint8_t> k(elems * dtype_bytes(dtype)), v(elems * dtype_bytes(dtype));
  fill_as(k, elems, dtype, 1);
  fill_as(v, elems, dtype, 2);
  DeviceBuffer<float> q(static_cast<std::size_t>(seqs) * 32 * 128), o(q.size()), lse(static_cast<std::size_t>(seqs) * 32);
  fill(q, 3);
  DeviceBuffer<std::int32_t> lens(std::vector<std::int32_t>(seqs, len));
  const int page = 16, pages_per_seq = len / page;
  std::vector<std::int32_t> pages(static_cast<std::size_t>(seqs) * pages_per_seq), indptr(seqs + 1);
  std::iota(pages.begin(), pages.end(), 0);
  for (int s = 0; s <= seqs; ++s) indptr[s] = s * pages_per_seq;
  DeviceBuffer<std::int32_t> d_pages(pages), d_indptr(indptr);
  const DecodeProblem p{shape, dtype, seqs, len, lens.get(), q.get(), o.get(), lse.get()};
  const double bytes = 2.0 * elems * dtype_bytes(dtype);
  for (DecodePath path : {DecodePath::cuda_core, DecodePath::tensor_core, DecodePath::short_seq}) {
    if (path == DecodePath::short_seq && len > kShortMaxLen) continue;  // beyond what that kernel stages
    if (!selected("decode " + std::string(dtype_name(dtype)) + heads_label + std::to_string(seqs) + "x" + std::to_string(len) +
                  (paged ? " paged16 " : " contiguous ") + std::string(decode_path_name(path))))
      continue;
    const auto run = [&](auto kv) {
      using KV = decltype(kv);
      DecodePlan plan;
      DecodeOptions options;
      options.path = path;
      options.tuning = g_tuning;
      if (const char* pinned = std::getenv("DECODE_ROW_PROBE_SPLITS")) options.splits = std::atoi(pinned);
      if (plan_decode<KV>(DecodeKernel::flash_decode, p, options, &plan) != cudaSuccess) {
        std::printf("decode %s %dx%d %s %s: plan refused\n", std::string(dtype_name(dtype)).c_str(), seqs, len,
                    paged ? "paged16" : "contiguous", std::string(decode_path_name(path)).c_str());
        return;
      }
      DeviceBuffer<std::uint8_t> ws(std::max<std::size_t>(plan.workspace_bytes, 1));
      DB_CUDA_CHECK(init_decode_workspace(plan, ws.get(), nullptr));
      const double us = median_us([&](cudaStream_t st) { return run_decode<KV>(kv, p, plan, ws.get(), st); });
      std::printf("decode %s 32/%d d128 %dx%d %-10s %-11s splits %4d bps %d: %8.1f us  %6.0f GB/s\n",
                  std::string(dtype_name(dtype)).c_str(), heads_kv, seqs, len, paged ? "paged16" : "contiguous",
                  std::string(decode_path_name(plan.path)).c_str(), plan.num_splits, plan.blocks_per_sm, us,
                  bytes / us / 1e3);
    };
    const auto go = [&](auto* tag) {
      using T = std::remove_pointer_t<decltype(tag)>;
      const T* kp = reinterpret_cast<const T*>(k.get());
      const T* vp = reinterpret_cast<const T*>(v.get());
      if (paged)
        run(PagedKV<T>{kp, vp, d_pages.get(), d_indptr.get(), page, shape.heads_kv, shape.head_dim});
      else
        run(ContiguousKV<T>::make(kp, vp, shape.heads_kv, len, shape.head_dim));
    };
    with_storage(dtype, go);
  }
}

// Shared-prefix phase: 32 KV heads (MHA), N sequences share a P-token prefix stored once (slot 0):
// one item per KV head with N rows (row_q gathers head h of every sequence).
void prefix_point(int n, int prefix, int page, DType dtype) {
  const DecodeShape shape{32, 32, 128};
  const std::size_t elems = static_cast<std::size_t>(shape.heads_kv) * prefix * shape.head_dim;
  DeviceBuffer<std::uint8_t> k(elems * dtype_bytes(dtype)), v(elems * dtype_bytes(dtype));
  fill_as(k, elems, dtype, 4);
  fill_as(v, elems, dtype, 5);
  DeviceBuffer<float> q(static_cast<std::size_t>(n) * 32 * 128), o(q.size()), lse(static_cast<std::size_t>(n) * 32);
  fill(q, 6);
  std::vector<RowAttentionItem> items(32);
  std::vector<std::int32_t> row_q(static_cast<std::size_t>(n) * 32);
  for (int h = 0; h < 32; ++h) {
    items[h] = {0, h, h * n, (h + 1) * n, 0, prefix};
    for (int s = 0; s < n; ++s) row_q[static_cast<std::size_t>(h) * n + s] = s * 32 + h;
  }
  DeviceBuffer<RowAttentionItem> d_items(items);
  DeviceBuffer<std::int32_t> d_row_q(row_q);
  std::vector<std::int32_t> pages(prefix / page);
  std::iota(pages.begin(), pages.end(), 0);
  DeviceBuffer<std::int32_t> d_pages(pages), d_indptr(std::vector<std::int32_t>{0, prefix / page});
  RowAttentionProblem p;
  p.shape = shape;
  p.kv_dtype = dtype;
  p.num_items = 32;
  p.items = d_items.get();
  p.num_rows = n * 32;
  p.row_q = d_row_q.get();
  p.max_item_tokens = prefix;
  p.max_item_rows = n;
  p.q = q.get();
  p.o = o.get();
  p.lse = lse.get();
  const auto run = [&](auto kv, const char* layout) {
    if (!selected("prefix " + std::string(dtype_name(dtype)) + " N " + std::to_string(n) + " P " +
                  std::to_string(prefix) + " " + layout))
      return;
    using KV = decltype(kv);
    RowAttentionPlan plan;
    DB_CUDA_CHECK(plan_row_attention<KV>(p, {.tuning = g_tuning}, &plan));
    DeviceBuffer<std::uint8_t> ws(std::max<std::size_t>(plan.workspace_bytes, 1));
    DB_CUDA_CHECK(init_row_attention_workspace(plan, ws.get(), nullptr));
    const double us = median_us([&](cudaStream_t st) { return run_row_attention<KV>(kv, p, plan, ws.get(), st); });
    const double flops = 4.0 * prefix * 128.0 * n * 32;
    std::printf("prefix %s 32/32 d128 N %4d P %5d %-10s %-6s splits %3d rows/block %d: %8.1f us  %6.1f TFLOP/s  %6.0f GB/s\n",
                std::string(dtype_name(dtype)).c_str(), n, prefix, layout,
                plan.wgmma ? "wgmma" : plan.wide ? "wide" : "narrow", plan.splits, plan.rows_per_block, us,
                flops / us / 1e6, 2.0 * elems * dtype_bytes(dtype) / us / 1e3);
  };
  with_storage(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const T* kp = reinterpret_cast<const T*>(k.get());
    const T* vp = reinterpret_cast<const T*>(v.get());
    run(ContiguousKV<T>::make(kp, vp, 32, prefix, 128), "contiguous");
    run(PagedKV<T>{kp, vp, d_pages.get(), d_indptr.get(), page, 32, 128}, "paged16");
  });
}

}  // namespace
}  // namespace decode_bench

int main(int argc, char** argv) {
  using namespace decode_bench;
  try {
    g_tuning = tuning_policy_from_environment();
  } catch (const TuningPolicyError& e) {
    std::fprintf(stderr, "decode-row-probe: %s\n", e.what());
    return 2;
  }
  if (argc > 1) g_reps = std::atoi(argv[1]);
  if (argc > 2) g_filter = argv[2];
  L2Flusher flusher(0);
  if (const char* carveout = std::getenv("DECODE_ROW_PROBE_FLUSH_CARVEOUT")) DB_CUDA_CHECK(flusher.prefer_carveout(std::atoi(carveout)));
  g_flusher = &flusher;
  for (DType dtype : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2})
    for (bool paged : {false, true}) {
      decode_point(1, 65536, paged, dtype);
      decode_point(16, 4096, paged, dtype);
      decode_point(64, 1024, paged, dtype);
      decode_point(128, 512, paged, dtype);  // the models preset's largest batch: 1,024 items
      decode_point(64, 32, paged, dtype);  // short sequences: one 32-token tile per item
      decode_point(16, 128, paged, dtype);  // the short-sequence kernel's long stage: 128 blocks
      decode_point(32, 128, paged, dtype);  // 256 blocks: the long stage at two an SM
      decode_point(64, 128, paged, dtype);  // 512 blocks
    }
  for (DType dtype : {DType::fp16, DType::fp8_e4m3})
    for (int n : {64, 256})
      for (int prefix : {1024, 8192, 32768}) prefix_point(n, prefix, 16, dtype);
  // Scaling: 64 MiB .. 1 GiB of K + V (FP16, d 128).
  for (int f : {1, 2, 4, 8, 16}) {
    read_point((std::size_t{64} << 20) * f);
    decode_point(1, 16384 * f, false, DType::fp16);       // 32 / 8: 64 MiB per 16K tokens
    decode_point(16, 1024 * f, false, DType::fp16);
    decode_point(64, 256 * f, false, DType::fp16);
    decode_point(1, 4096 * f, false, DType::fp16, 32);    // 32 / 32: 64 MiB per 4K tokens
  }
  return 0;
}
