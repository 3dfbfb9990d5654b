#pragma once
// The kernels behind the measured ceilings, as a list of variants to time. Each variant says
// which ceiling it measures, what it is, how much work one launch does (bytes or FLOPs) and how
// to launch it; harness/ceilings.cpp times them all and keeps the best per ceiling.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

namespace decode_bench {

// Device memory the variants work in; owned by the caller.
struct CeilingWorkspace {
  const void* buffer = nullptr;  // zero-filled, buffer_bytes long (a multiple of 64 KiB)
  void* copy_destination = nullptr;  // the second half of the same allocation (buffer_bytes)
  std::size_t buffer_bytes = 0;  // DRAM read size; the copy moves this many bytes in and out
  std::size_t l2_working_set_bytes = 0;  // L2 read working set (a fraction of L2)
  unsigned* sink = nullptr;      // written only when a kernel's checksum hits a magic value
};

struct CeilingVariant {
  std::string ceiling;  // a name of kCeilingNames (harness/ceilings.hpp)
  std::string kernel;   // kernel name
  std::vector<std::pair<std::string, long long>> config;  // vector_bytes, unroll, blocks, threads, ...
  double work_per_launch = 0;  // bytes (bandwidth ceilings) or FLOPs (compute ceilings)
  std::function<cudaError_t(cudaStream_t)> launch;
  // Non-empty: this build or device cannot run the variant (the warpgroup-MMA ceilings off sm_90a),
  // and why; it is listed, not timed, and recorded as failed with this reason.
  std::string refused;
};

// quick: one or two variants per ceiling instead of the full set. The current device's compute
// capability decides which variants are refused. Throws CudaError when the occupancy or device
// query fails.
std::vector<CeilingVariant> make_ceiling_variants(const CeilingWorkspace& workspace, int sm_count, bool quick);

// One thread spinning for `cycles` SM clock cycles. When `elapsed` is not null it receives
// {clock64 cycles spun, %globaltimer nanoseconds elapsed} (device memory, 2 values).
cudaError_t launch_clock_spin(long long cycles, unsigned long long* elapsed, cudaStream_t stream);

// The SM clock while a kernel runs, from a ~10 ms spin: cycles counted by clock64 over the
// nanoseconds counted by %globaltimer. Throws CudaError on failure.
double measure_sm_clock_khz(cudaStream_t stream);

}  // namespace decode_bench
