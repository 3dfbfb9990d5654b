#pragma once
// The seed paper's end-to-end timing of a contiguous decode: every sample uploads the batch's K
// and V slabs and q, runs the decode and downloads o and lse. Host sides are page-locked and filled
// before timing (the K/V images are the device slabs' own bytes, so the uploads rewrite what the
// pool holds).
#include <functional>
#include <string>

#include <cuda_runtime.h>

#include "harness/device_buffer.hpp"
#include "harness/l2_flush.hpp"
#include "harness/timing.hpp"
#include "kernels/kv_accessor.hpp"

namespace decode_bench::sweeps {

template <class T>
TimingResult time_end_to_end(const std::string& name, const ContiguousKV<T>& kv, int batch,
                             const std::function<cudaError_t(cudaStream_t)>& launch, const DeviceBuffer<float>& q,
                             const DeviceBuffer<float>& o, const DeviceBuffer<float>& lse, const TimingOptions& topt,
                             L2Flusher& flusher, cudaStream_t stream);

}  // namespace decode_bench::sweeps
