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

#include "harness/l2_flush.hpp"

namespace decode_bench::counters {

struct SelftestCase {
  std::string name;
  std::string kernel_name;                   // the __global__ name, for `ncu -k`
  std::map<std::string, double> expected;    // metric -> closed-form value
  std::map<std::string, double> tolerance;   // metric -> allowed relative error
  std::function<cudaError_t(cudaStream_t)> launch;
};

// Device buffers for the cases (two of `bytes` each) and the harness's L2 flusher.
class SelftestWorkload {
 public:
  SelftestWorkload(int device, std::size_t bytes);  // throws CudaError
  ~SelftestWorkload();
  SelftestWorkload(const SelftestWorkload&) = delete;
  SelftestWorkload& operator=(const SelftestWorkload&) = delete;

  std::vector<SelftestCase> cases() const;
  // The harness's read flush (harness/l2_flush.hpp), so the counters see the cache state the
  // sweeps time: no byte of the cases' data in L2 and no dirty line left to write back. (A
  // cudaMemset flush left up to an L2 of dirty lines, which showed up as DRAM writes of the read
  // kernel that ncu, flushing by itself, did not count.)
  void flush_l2(cudaStream_t stream) const;  // throws CudaError
  std::size_t bytes() const { return bytes_; }

 private:
  std::size_t bytes_ = 0;
  int sm_count_ = 0;
  void* src_ = nullptr;
  void* dst_ = nullptr;
  float* sink_ = nullptr;
  std::unique_ptr<L2Flusher> flusher_;
};

}  // namespace decode_bench::counters
