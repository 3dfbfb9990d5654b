// Build: part of decode_harness. The kernels are written so their instruction and byte counts
// have closed forms: no reductions (the sums are only compared against a sentinel), loop trip
// counts from arguments, results written only when a sentinel matches (never), so nothing is
// optimised away and nothing extra is counted.
#include "harness/counters/counter_selftest.hpp"

#include <cuda_fp16.h>

#include "harness/cuda_check.hpp"

namespace decode_bench::counters {
namespace {

constexpr int kThreads = 256;
constexpr float kSentinel = -12345.678f;  // never produced by the inputs (zeros)

// src: (n4) float4. 4 FADD per float4 -> N/4 FADD in total; reads N bytes once.
__global__ void selftest_stream_read(const float4* __restrict__ src, std::size_t n4, float* __restrict__ sink) {
  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
    const float4 v = src[i];
    acc.x += v.x;
    acc.y += v.y;
    acc.z += v.z;
    acc.w += v.w;
  }
  if (acc.x == kSentinel || acc.y == kSentinel || acc.z == kSentinel || acc.w == kSentinel)
    sink[blockIdx.x] = acc.x;
}

// src, dst: (n4) float4. Reads N bytes, writes N bytes, no arithmetic.
__global__ void selftest_copy(const float4* __restrict__ src, std::size_t n4, float4* __restrict__ dst) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride)
    dst[i] = src[i];
}

// 4 independent FFMA chains per iteration: threads * iters * 4 FFMA, no memory traffic.
__global__ void selftest_ffma_loop(int iters, float a, float b, float* __restrict__ sink) {
  float x0 = threadIdx.x, x1 = x0 + 1.f, x2 = x0 + 2.f, x3 = x0 + 3.f;
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    x0 = fmaf(x0, a, b);
    x1 = fmaf(x1, a, b);
    x2 = fmaf(x2, a, b);
    x3 = fmaf(x3, a, b);
  }
  if (x0 == kSentinel || x1 == kSentinel || x2 == kSentinel || x3 == kSentinel) sink[blockIdx.x] = x0;
}

// 4 independent HFMA2 chains per iteration: threads * iters * 4 HFMA2 instructions (8 lanes of
// FMA per iteration per thread).
__global__ void selftest_hfma2_loop(int iters, float a, float b, float* __restrict__ sink) {
  const __half2 ha = __float2half2_rn(a), hb = __float2half2_rn(b);
  __half2 x0 = __float2half2_rn(static_cast<float>(threadIdx.x) * 1e-3f);
  __half2 x1 = __hadd2(x0, hb), x2 = __hadd2(x1, hb), x3 = __hadd2(x2, hb);
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
    x0 = __hfma2(x0, ha, hb);
    x1 = __hfma2(x1, ha, hb);
    x2 = __hfma2(x2, ha, hb);
    x3 = __hfma2(x3, ha, hb);
  }
  const float s = __low2float(x0) + __low2float(x1) + __low2float(x2) + __low2float(x3);
  if (s == kSentinel) sink[blockIdx.x] = s;
}

}  // namespace

SelftestWorkload::SelftestWorkload(int device, std::size_t bytes) : bytes_(bytes / 16 * 16) {
  DB_CUDA_CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  DB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  sm_count_ = prop.multiProcessorCount;
  flusher_ = std::make_unique<L2Flusher>(device);  // first: it throws with the reason on an unusable device
  DB_CUDA_CHECK(cudaMalloc(&src_, bytes_));
  DB_CUDA_CHECK(cudaMalloc(&dst_, bytes_));
  DB_CUDA_CHECK(cudaMalloc(&sink_, 1 << 20));
  DB_CUDA_CHECK(cudaMemset(src_, 0, bytes_));
  DB_CUDA_CHECK(cudaMemset(dst_, 0, bytes_));
  DB_CUDA_CHECK(cudaDeviceSynchronize());
}

SelftestWorkload::~SelftestWorkload() {
  cudaFree(src_);
  cudaFree(dst_);
  cudaFree(sink_);
}

void SelftestWorkload::flush_l2(cudaStream_t stream) const { DB_CUDA_CHECK(flusher_->flush(stream)); }

std::vector<SelftestCase> SelftestWorkload::cases() const {
  const std::size_t n4 = bytes_ / sizeof(float4);
  const int blocks = sm_count_ * 4;
  const auto* src = static_cast<const float4*>(src_);
  auto* dst = static_cast<float4*>(dst_);
  float* sink = sink_;
  const double n = static_cast<double>(bytes_);
  constexpr int kIters = 4096;
  const double loop_threads = static_cast<double>(blocks) * kThreads;
  const double loop_inst = loop_threads * kIters * 4;

  std::vector<SelftestCase> out;
  out.push_back({"stream_read", "selftest_stream_read",
                 {{"dram__bytes_read.sum", n}, {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", n / 4}},
                 {{"dram__bytes_read.sum", 0.02}, {"sm__sass_thread_inst_executed_op_fadd_pred_on.sum", 0.0}},
                 [=](cudaStream_t s) {
                   selftest_stream_read<<<blocks, kThreads, 0, s>>>(src, n4, sink);
                   return cudaGetLastError();
                 }});
  // The write tolerance is loose: up to one L2 of dirty lines may still sit in L2 at kernel end.
  out.push_back({"copy", "selftest_copy",
                 {{"dram__bytes_read.sum", n}, {"dram__bytes_write.sum", n}},
                 {{"dram__bytes_read.sum", 0.02}, {"dram__bytes_write.sum", 0.10}},
                 [=](cudaStream_t s) {
                   selftest_copy<<<blocks, kThreads, 0, s>>>(src, n4, dst);
                   return cudaGetLastError();
                 }});
  out.push_back({"ffma_loop", "selftest_ffma_loop",
                 {{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", loop_inst}},
                 {{"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 0.0}},
                 [=](cudaStream_t s) {
                   selftest_ffma_loop<<<blocks, kThreads, 0, s>>>(kIters, 0.999f, 1e-3f, sink);
                   return cudaGetLastError();
                 }});
  out.push_back({"hfma2_loop", "selftest_hfma2_loop",
                 {{"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", loop_inst}},
                 {{"sm__sass_thread_inst_executed_op_hfma_pred_on.sum", 0.0}},
                 [=](cudaStream_t s) {
                   selftest_hfma2_loop<<<blocks, kThreads, 0, s>>>(kIters, 0.999f, 1e-3f, sink);
                   return cudaGetLastError();
                 }});
  return out;
}

}  // namespace decode_bench::counters
