// Stage 2 of the 3-kernel baseline (kernels/baseline.cuh): the serial softmax. Not a template,
// so it lives in one translation unit rather than in every instantiation file.
#include "kernels/baseline.cuh"

namespace decode_bench::device {
namespace {

// Tree reduction over one block; op is max or sum. Returns the result to every thread.
template <class Op>
__device__ float block_reduce(float x, float* scratch, Op op) {
  scratch[threadIdx.x] = x;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) scratch[threadIdx.x] = op(scratch[threadIdx.x], scratch[threadIdx.x + stride]);
    __syncthreads();
  }
  const float r = scratch[0];
  __syncthreads();
  return r;
}

}  // namespace

__global__ void __launch_bounds__(kBaselineSoftmaxThreads) baseline_softmax_kernel(const BaselineArgs args) {
  __shared__ float scratch[kBaselineSoftmaxThreads];
  const std::int64_t head_index = static_cast<std::int64_t>(blockIdx.y) * args.heads_q + blockIdx.x;
  const std::int64_t len = args.lens[blockIdx.y];
  float* s = args.scores + head_index * args.max_len;
  float m = -INFINITY;
  for (std::int64_t t = threadIdx.x; t < len; t += blockDim.x) m = fmaxf(m, s[t]);
  m = block_reduce(m, scratch, [](float a, float b) { return fmaxf(a, b); });
  float sum = 0.f;
  for (std::int64_t t = threadIdx.x; t < len; t += blockDim.x) sum += expf(s[t] - m);
  sum = block_reduce(sum, scratch, [](float a, float b) { return a + b; });
  const float inv = 1.f / sum;
  for (std::int64_t t = threadIdx.x; t < len; t += blockDim.x) s[t] = expf(s[t] - m) * inv;
  if (threadIdx.x == 0) args.lse[head_index] = len > 0 ? m + logf(sum) : -INFINITY;
}

}  // namespace decode_bench::device
