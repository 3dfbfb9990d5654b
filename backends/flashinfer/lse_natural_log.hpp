#pragma once
// FlashInfer writes the log-sum-exp in base 2; decode-bench records the natural log. One small
// kernel of ours scales it in place (times ln 2), stream-ordered after FlashInfer's launch and
// capturable with it.
#include <cstdint>

#include <cuda_runtime.h>

namespace decode_bench::flashinfer_launch {

// lse[i] *= ln 2 for i < count, on stream; nothing for count 0.
cudaError_t lse_log2_to_natural(float* lse, std::int64_t count, cudaStream_t stream);

}  // namespace decode_bench::flashinfer_launch
