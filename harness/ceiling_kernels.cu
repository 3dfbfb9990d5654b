// Ceiling kernels. Each does one kind of work as fast as the hardware allows and folds what it
// read into a checksum that is stored only if it equals a magic value, so the compiler cannot
// drop the work and the store never happens (buffers are zero-filled).
//   read_kernel      DRAM read (whole buffer, once) and L2 read (a working set, many passes, .cg)
//   copy_kernel      DRAM copy: bytes read + bytes written
//   shared_kernel    shared memory reads, conflict-free 16-byte vectors
//   fp32_fma_kernel  independent FMA chains          2 FLOP per fmaf
//   fp16_fma_kernel  independent half2 FMA chains    4 FLOP per __hfma2
//   mma_kernel       mma.sync m16n8k16 f16 -> f32    2*16*8*16 FLOP per warp instruction
//   wgmma kernels    wgmma m64n256 f16 / bf16 / e4m3 -> f32, sm_90a (harness/ceiling_wgmma.*)
#include "harness/ceiling_kernels.hpp"

#include <algorithm>

#include <cuda_fp16.h>

#include "harness/ceiling_wgmma.hpp"
#include "harness/cuda_check.hpp"

namespace decode_bench {
namespace {

constexpr unsigned kNeverChecksum = 0x9e3779b9u;
constexpr float kNeverSum = -1.2345e-7f;

__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
__device__ __forceinline__ unsigned fold(uint2 v) { return v.x ^ v.y; }

// kBypassL1: ld.global.cg, so the L2 ceiling is not served by L1 (each SM's slice of a 1/4-L2
// working set would fit in its L1 and be re-read from there on every pass).
template <bool kBypassL1, typename Vec>
__device__ __forceinline__ Vec load(const Vec* p) {
  if constexpr (kBypassL1) return __ldcg(p);
  else return *p;
}

// in: (n_vec) vectors, read `passes` times in grid-stride order, kUnroll loads in flight per thread.
template <typename Vec, int kUnroll, bool kBypassL1>
__global__ void read_kernel(const Vec* __restrict__ in, std::size_t n_vec, int passes, unsigned* sink) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (int pass = 0; pass < passes; ++pass) {
    std::size_t i = first;
    for (; i + (kUnroll - 1) * stride < n_vec; i += kUnroll * stride) {
      Vec v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = load<kBypassL1>(in + i + u * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc ^= fold(v[u]);
    }
    for (; i < n_vec; i += stride) acc ^= fold(load<kBypassL1>(in + i));
  }
  if (acc == kNeverChecksum) *sink = acc;
}

// in, out: (n_vec) vectors each.
template <typename Vec, int kUnroll>
__global__ void copy_kernel(const Vec* __restrict__ in, Vec* __restrict__ out, std::size_t n_vec) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n_vec; i += kUnroll * stride) {
    Vec v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = in[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) out[i + u * stride] = v[u];
  }
  for (; i < n_vec; i += stride) out[i] = in[i];
}

// Shared memory: tile (kSharedVecs) uint4 per block = 16 KiB. A warp reads 32 consecutive uint4
// (512 B, the minimum of 4 wavefronts), at an offset that moves every step so no load repeats
// an address the compiler could reuse.
constexpr int kSharedVecs = 1024;
constexpr int kSharedLoadsPerStep = 8;

__global__ void shared_kernel(int steps, unsigned* sink) {
  __shared__ uint4 tile[kSharedVecs];
  for (int i = threadIdx.x; i < kSharedVecs; i += blockDim.x) tile[i] = make_uint4(i, 3 * i, 5 * i, 7 * i);
  __syncthreads();
  unsigned acc = 0;
  int offset = threadIdx.x;
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int u = 0; u < kSharedLoadsPerStep; ++u) acc ^= fold(tile[(offset + u * 128) & (kSharedVecs - 1)]);
    offset += 32;
  }
  if (acc == kNeverChecksum) *sink = acc;
}

constexpr int kFmaPerStep = 16;  // per chain, unrolled, so loop overhead is a few % of issue slots

template <int kChains>
__global__ void fp32_fma_kernel(int steps, float m, float a, unsigned* sink) {
  float x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = 1e-3f * threadIdx.x + c;
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int k = 0; k < kFmaPerStep; ++k) {
#pragma unroll
      for (int c = 0; c < kChains; ++c) x[c] = fmaf(x[c], m, a);
    }
  }
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += x[c];
  if (sum == kNeverSum) *sink = 1;
}

template <int kChains>
__global__ void fp16_fma_kernel(int steps, float m, float a, unsigned* sink) {
  const __half2 m2 = __float2half2_rn(m), a2 = __float2half2_rn(a);
  __half2 x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = __float2half2_rn(1e-3f * (threadIdx.x & 31) + c);
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int k = 0; k < kFmaPerStep; ++k) {
#pragma unroll
      for (int c = 0; c < kChains; ++c) x[c] = __hfma2(x[c], m2, a2);
    }
  }
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += __low2float(x[c]) + __high2float(x[c]);
  if (sum == kNeverSum) *sink = 1;
}

// Tensor cores through mma.sync (what a hand-written decode kernel uses; wgmma on Hopper goes
// higher, so this is the mma.sync ceiling, not the datasheet peak). kChains independent
// accumulators per warp hide the instruction latency.
constexpr int kMmaPerStep = 4;

template <int kChains>
__global__ void mma_kernel(int steps, unsigned a_bits, unsigned* sink) {
  const unsigned a0 = a_bits, a1 = a_bits ^ (threadIdx.x & 1), a2 = a_bits, a3 = a_bits;
  const unsigned b0 = a_bits, b1 = a_bits;
  float acc[kChains][4] = {};
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int k = 0; k < kMmaPerStep; ++k) {
#pragma unroll
      for (int c = 0; c < kChains; ++c) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
            : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      }
    }
  }
  float sum = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  if (sum == kNeverSum) *sink = 1;
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_spin_kernel(long long cycles, unsigned long long* elapsed) {
  const unsigned long long t0 = global_timer_ns();
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  const unsigned long long t1 = global_timer_ns();
  if (elapsed) {
    elapsed[0] = static_cast<unsigned long long>(now - start);
    elapsed[1] = t1 - t0;
  }
}

// ---- variants ---------------------------------------------------------------------------------

template <typename Kernel>
int blocks_per_sm(Kernel kernel, int threads) {
  int blocks = 0;
  DB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  return blocks > 0 ? blocks : 1;
}

struct Grid {
  int blocks, threads;
};

// `waves` full-occupancy waves of `threads`-thread blocks.
template <typename Kernel>
Grid full_grid(Kernel kernel, int threads, int sm_count, int waves) {
  return {blocks_per_sm(kernel, threads) * sm_count * waves, threads};
}

template <typename Vec, int kUnroll, bool kBypassL1>
CeilingVariant read_variant(const std::string& ceiling, const CeilingWorkspace& ws, std::size_t bytes, int passes,
                            int sm_count, int threads, int waves) {
  auto* kernel = read_kernel<Vec, kUnroll, kBypassL1>;
  const Grid g = full_grid(kernel, threads, sm_count, waves);
  const auto* in = static_cast<const Vec*>(ws.buffer);
  const std::size_t n_vec = bytes / sizeof(Vec);
  unsigned* sink = ws.sink;
  return {ceiling,
          kBypassL1 ? "read_kernel<ld.global.cg>" : "read_kernel",
          {{"vector_bytes", sizeof(Vec)}, {"unroll", kUnroll}, {"blocks", g.blocks}, {"threads", g.threads},
           {"waves", waves}, {"bytes", static_cast<long long>(bytes)}, {"passes", passes}},
          static_cast<double>(bytes) * passes,
          [=](cudaStream_t s) {
            kernel<<<g.blocks, g.threads, 0, s>>>(in, n_vec, passes, sink);
            return cudaGetLastError();
          },
          ""};
}

// DRAM read: the whole buffer, once.
template <typename Vec, int kUnroll>
CeilingVariant dram_read_variant(const CeilingWorkspace& ws, int sm_count, int threads, int waves) {
  return read_variant<Vec, kUnroll, false>("dram_read", ws, ws.buffer_bytes, 1, sm_count, threads, waves);
}

// L2 read: the working set, passed over until about 1 GiB of L2 traffic per launch, so launch
// overhead is noise.
template <typename Vec, int kUnroll>
CeilingVariant l2_read_variant(const CeilingWorkspace& ws, int sm_count, int threads, int waves) {
  const std::size_t l2 = ws.l2_working_set_bytes;
  const int passes = static_cast<int>(std::max<std::size_t>(1, (std::size_t(1) << 30) / std::max<std::size_t>(l2, 1)));
  return read_variant<Vec, kUnroll, true>("l2_read", ws, l2, passes, sm_count, threads, waves);
}

template <typename Vec, int kUnroll>
CeilingVariant copy_variant(const CeilingWorkspace& ws, int sm_count, int threads, int waves) {
  auto* kernel = copy_kernel<Vec, kUnroll>;
  const Grid g = full_grid(kernel, threads, sm_count, waves);
  const auto* in = static_cast<const Vec*>(ws.buffer);
  auto* out = static_cast<Vec*>(ws.copy_destination);
  const std::size_t n_vec = ws.buffer_bytes / sizeof(Vec);
  return {"dram_copy",
          "copy_kernel",
          {{"vector_bytes", sizeof(Vec)}, {"unroll", kUnroll}, {"blocks", g.blocks}, {"threads", g.threads},
           {"waves", waves}, {"bytes_each_way", static_cast<long long>(ws.buffer_bytes)}},
          2.0 * static_cast<double>(ws.buffer_bytes),  // read + write
          [=](cudaStream_t s) {
            kernel<<<g.blocks, g.threads, 0, s>>>(in, out, n_vec);
            return cudaGetLastError();
          },
          ""};
}

CeilingVariant shared_variant(const CeilingWorkspace& ws, int sm_count, int threads, int waves) {
  const Grid g = full_grid(shared_kernel, threads, sm_count, waves);
  const int steps = 4096;
  unsigned* sink = ws.sink;
  return {"l1_shared",
          "shared_kernel",
          {{"vector_bytes", 16}, {"loads_per_step", kSharedLoadsPerStep}, {"steps", steps}, {"blocks", g.blocks},
           {"threads", g.threads}},
          double(g.blocks) * g.threads * steps * kSharedLoadsPerStep * sizeof(uint4),
          [=](cudaStream_t s) {
            shared_kernel<<<g.blocks, g.threads, 0, s>>>(steps, sink);
            return cudaGetLastError();
          },
          ""};
}

// steps chosen so one launch does about 2^35 FLOP (~0.5 ms at 60 TFLOP/s).
int steps_for(double flops_per_step) { return static_cast<int>(std::max(1.0, 3.4e10 / flops_per_step)); }

// FP32 FMA chains (2 FLOP per fmaf) or half2 chains (4 FLOP per __hfma2). The half2 kernel runs
// at about twice the FLOP rate, so it gets half the steps per FLOP: both last about as long.
template <bool kHalf2, int kChains>
CeilingVariant fma_variant(const CeilingWorkspace& ws, int sm_count, int threads, int waves) {
  auto* kernel = kHalf2 ? fp16_fma_kernel<kChains> : fp32_fma_kernel<kChains>;
  const Grid g = full_grid(kernel, threads, sm_count, waves);
  constexpr double kFlopsPerFma = kHalf2 ? 4.0 : 2.0;
  const double flops_per_step = kFlopsPerFma * kChains * kFmaPerStep * g.blocks * g.threads;
  const int steps = steps_for(flops_per_step / (kFlopsPerFma / 2));
  unsigned* sink = ws.sink;
  return {kHalf2 ? "fp16_fma" : "fp32_fma", kHalf2 ? "fp16_fma_kernel (half2)" : "fp32_fma_kernel",
          {{"chains", kChains}, {"fma_per_step", kFmaPerStep}, {"steps", steps}, {"blocks", g.blocks},
           {"threads", g.threads}},
          flops_per_step * steps,
          [=](cudaStream_t s) {
            kernel<<<g.blocks, g.threads, 0, s>>>(steps, 0.999f, 1e-3f, sink);
            return cudaGetLastError();
          },
          ""};
}

template <int kChains>
CeilingVariant mma_variant(const CeilingWorkspace& ws, int sm_count, int threads, int waves) {
  auto* kernel = mma_kernel<kChains>;
  const Grid g = full_grid(kernel, threads, sm_count, waves);
  const double warps = double(g.blocks) * (g.threads / 32);
  const double flops_per_step = 2.0 * 16 * 8 * 16 * kMmaPerStep * kChains * warps;
  const int steps = steps_for(flops_per_step / 10);  // ~10x the FP32 rate: same duration
  unsigned* sink = ws.sink;
  return {"fp16_tensor", "mma_kernel (mma.sync.m16n8k16.f32.f16.f16.f32)",
          {{"chains", kChains}, {"mma_per_step", kMmaPerStep}, {"steps", steps}, {"blocks", g.blocks},
           {"threads", g.threads}},
          flops_per_step * steps,
          [=](cudaStream_t s) {
            kernel<<<g.blocks, g.threads, 0, s>>>(steps, 0x14191419u /* half2(1e-3, 1e-3) */, sink);
            return cudaGetLastError();
          },
          ""};
}

// Warpgroup MMA (sm_90a): the ceiling's kernel for blocks of kWG warpgroups, refused with the
// reason when this build or the device cannot run it (its config then names only the block size).
struct WgmmaCeilingName {
  WgmmaCeilingInput input;
  const char* ceiling;
  const char* kernel;
};
constexpr WgmmaCeilingName kWgmmaNames[] = {
    {WgmmaCeilingInput::f16, "fp16_tensor_wgmma", "wgmma_kernel (wgmma.mma_async.m64n256k16.f32.f16.f16, A and B in shared memory)"},
    {WgmmaCeilingInput::bf16, "bf16_tensor_wgmma", "wgmma_kernel (wgmma.mma_async.m64n256k16.f32.bf16.bf16, A and B in shared memory)"},
    {WgmmaCeilingInput::e4m3, "fp8_e4m3_tensor_wgmma", "wgmma_kernel (wgmma.mma_async.m64n256k32.f32.e4m3.e4m3, A and B in shared memory)"},
};

template <int kInput, int kWG>
CeilingVariant wgmma_variant(const CeilingWorkspace& ws, int sm_count, int, int waves) {
  const WgmmaCeilingName& n = kWgmmaNames[kInput];
  CeilingVariant v{n.ceiling, n.kernel, {{"warpgroups", kWG}, {"threads", 128 * kWG}}, 0, {}, {}};
  int device = 0, major = 0, minor = 0;
  DB_CUDA_CHECK(cudaGetDevice(&device));
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  DB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  const WgmmaCeilingKernel k = wgmma_ceiling_kernel(n.input, kWG);
  if (const std::string why = wgmma_ceiling_refusal(major, minor); !why.empty()) {
    v.refused = why + " (this device: " + std::to_string(major) + "." + std::to_string(minor) + ")";
    return v;
  }
  if (k.kernel == nullptr) {
    v.refused = "no kernel for " + std::to_string(kWG) + " warpgroups";
    return v;
  }
  int per_sm = 0;
  DB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k.kernel, k.threads, 0));
  const int blocks = std::max(per_sm, 1) * sm_count * waves;
  const double flops_per_step = k.flops_per_instruction * k.instructions_per_step * kWG * double(blocks);
  const int steps = steps_for(flops_per_step / 20);  // ~20x the FP32 rate: about the mma.sync kernel's duration
  v.config = {{"warpgroups", kWG}, {"instructions_per_step", k.instructions_per_step}, {"steps", steps},
              {"blocks", blocks}, {"threads", k.threads}};
  v.work_per_launch = flops_per_step * steps;
  unsigned* sink = ws.sink;
  const void* kernel = k.kernel;
  const int threads = k.threads;
  v.launch = [=](cudaStream_t s) {
    int steps_arg = steps;
    unsigned bits = 0x14191419u;  // FP16 / BF16 pairs and E4M3 bytes, all small and finite
    unsigned* sink_arg = sink;
    void* args[] = {&steps_arg, &bits, &sink_arg};
    return cudaLaunchKernel(kernel, dim3(blocks), dim3(threads), args, 0, s);
  };
  return v;
}

// Every variant in timing order: kernel instance (template parameters: vector type and unroll, or
// independent chains), block size, full-occupancy waves of blocks, and whether --quick keeps it
// (one or two per ceiling). The quick rows come first, so a quick run is a prefix of a full one.
struct VariantSpec {
  CeilingVariant (*make)(const CeilingWorkspace& ws, int sm_count, int threads, int waves);
  int threads;
  int waves;
  bool quick;
};

constexpr VariantSpec kVariants[] = {
    // make                          threads waves quick
    {dram_read_variant<uint4, 4>,    512,    1,    true},
    {dram_read_variant<uint4, 1>,    512,    1,    true},
    {copy_variant<uint4, 4>,         512,    1,    true},
    {copy_variant<uint4, 1>,         512,    1,    true},
    {l2_read_variant<uint4, 4>,      512,    1,    true},
    {l2_read_variant<uint4, 1>,      512,    1,    true},
    {shared_variant,                 256,    1,    true},
    {fma_variant<false, 8>,          256,    1,    true},
    {fma_variant<true, 8>,           256,    1,    true},
    {mma_variant<4>,                 128,    1,    true},
    {wgmma_variant<0, 1>,            128,    1,    true},
    {wgmma_variant<1, 1>,            128,    1,    true},
    {wgmma_variant<2, 1>,            128,    1,    true},
    {dram_read_variant<uint4, 4>,    256,    4,    false},
    {dram_read_variant<uint2, 4>,    512,    1,    false},
    {dram_read_variant<uint2, 1>,    1024,   1,    false},
    {dram_read_variant<uint4, 1>,    1024,   8,    false},
    {copy_variant<uint4, 4>,         256,    4,    false},
    {copy_variant<uint2, 4>,         512,    1,    false},
    {copy_variant<uint4, 1>,         1024,   8,    false},
    {l2_read_variant<uint2, 4>,      512,    1,    false},
    {l2_read_variant<uint4, 4>,      1024,   1,    false},
    {shared_variant,                 1024,   1,    false},
    {fma_variant<false, 4>,          256,    1,    false},
    {fma_variant<false, 8>,          1024,   1,    false},
    {fma_variant<true, 4>,           256,    1,    false},
    {fma_variant<true, 8>,           1024,   1,    false},
    {mma_variant<2>,                 256,    1,    false},
    {mma_variant<4>,                 256,    1,    false},
    {wgmma_variant<0, 2>,            256,    1,    false},
    {wgmma_variant<1, 2>,            256,    1,    false},
    {wgmma_variant<2, 2>,            256,    1,    false},
};

}  // namespace

std::vector<CeilingVariant> make_ceiling_variants(const CeilingWorkspace& ws, int sm_count, bool quick) {
  std::vector<CeilingVariant> v;
  for (const VariantSpec& spec : kVariants)
    if (spec.quick || !quick) v.push_back(spec.make(ws, sm_count, spec.threads, spec.waves));
  return v;
}

cudaError_t launch_clock_spin(long long cycles, unsigned long long* elapsed, cudaStream_t stream) {
  clock_spin_kernel<<<1, 1, 0, stream>>>(cycles, elapsed);
  return cudaGetLastError();
}

double measure_sm_clock_khz(cudaStream_t stream) {
  unsigned long long* elapsed = nullptr;
  DB_CUDA_CHECK(cudaMalloc(&elapsed, 2 * sizeof(unsigned long long)));
  unsigned long long host[2] = {};
  cudaError_t err = launch_clock_spin(2'000'000, elapsed, stream);  // warm-up: let the clock ramp
  if (err == cudaSuccess) err = launch_clock_spin(20'000'000, elapsed, stream);  // ~10 ms at 2 GHz
  if (err == cudaSuccess) err = cudaMemcpyAsync(host, elapsed, sizeof host, cudaMemcpyDeviceToHost, stream);
  if (err == cudaSuccess) err = cudaStreamSynchronize(stream);
  cudaFree(elapsed);
  DB_CUDA_CHECK(err);
  return host[1] > 0 ? 1e6 * static_cast<double>(host[0]) / static_cast<double>(host[1]) : 0.0;
}

}  // namespace decode_bench
