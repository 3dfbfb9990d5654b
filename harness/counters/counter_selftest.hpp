#pragma once
// Known kernels with closed-form counter values, to check the range profiler against the
// hardware and against Nsight Compute (`decode-bench profile-selftest`, tests/test_counters_gpu.cpp):
//   stream_read: float4 grid-stride read of N bytes    dram__bytes_read ~= N, fadd == N/4
//   copy:        float4 copy of N bytes                 dram read ~= N, dram write ~= N
//   ffma_loop:   threads x iters x 4 independent FFMA   ffma == threads*iters*4, no DRAM traffic
//   hfma2_loop:  threads x iters x 4 independent HFMA2  hfma == threads*iters*4 (instructions;
//                                                       2 lanes each: the FP16 convention check)
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

namespace decode_bench::counters {

struct SelftestCase {
  std::string name;
  std::string kernel_name;                   // the __global__ name, for `ncu -k`
  std::map<std::string, double> expected;    // metric -> closed-form value
  std::map<std::string, double> tolerance;   // metric -> allowed relative error
  std::function<cudaError_t(cudaStream_t)> launch;
};

// Device buffers for the cases (two of `bytes` each, plus an L2-flush buffer of twice the L2).
class SelftestWorkload {
 public:
  SelftestWorkload(int device, std::size_t bytes);  // throws CudaError
  ~SelftestWorkload();
  SelftestWorkload(const SelftestWorkload&) = delete;
  SelftestWorkload& operator=(const SelftestWorkload&) = delete;

  std::vector<SelftestCase> cases() const;
  // Overwrites the flush buffer so no byte of the cases' data stays in L2.
  void flush_l2(cudaStream_t stream) const;  // throws CudaError
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
  std::size_t flush_bytes_ = 0;
  int sm_count_ = 0;
  void* src_ = nullptr;
  void* dst_ = nullptr;
  void* flush_ = nullptr;
  float* sink_ = nullptr;
};

}  // namespace decode_bench::counters
