#pragma once
// Device attributes a plan reads, queried from the driver once per (device, attribute) and then
// served from a table. A serving loop plans every step, and some attributes (the memory clock
// rate the shared-prefix share rule divides by) are driver round trips rather than table reads;
// none of these change while a process runs.
#include <cuda_runtime.h>

namespace decode_bench {

// As cudaDeviceGetAttribute; a failed query is returned and not cached.
cudaError_t cached_device_attribute(int* value, cudaDeviceAttr attr, int device);

// The DRAM bandwidth the device's memory clock and bus width give (double data rate), bytes/s:
// 2 x clock x bus width / 8. An estimate from the spec sheet's arithmetic, not a measurement (the
// harness's dram_read ceiling is one); the planner's rules that depend on the bus read this one, so
// that a plan does not depend on what a run measured.
cudaError_t clock_dram_bytes_per_s(int device, double* bytes_per_s);

// Whether the bus by the clock (clock_dram_bytes_per_s) gives each SM at least kWideBusPerSm
// bytes/s. An H200's does (4.81 TB/s over 132 SMs: 36.5 GB/s), an H100's does not (3.35 TB/s:
// 25.4 GB/s). Some blocks keep a fixed number of bytes in flight: one an SM streams the SM's share
// of the narrower bus but not of the wider one, so rules that count blocks an SM or bytes in
// flight ask this. The threshold lies between the two GPUs measured; no GPU between them was.
inline constexpr double kWideBusPerSm = 30e9;
inline bool wide_bus_per_sm(double clock_dram_bytes_per_s, int sms) {
  return sms > 0 && clock_dram_bytes_per_s / sms >= kWideBusPerSm;
}

// Whether a second kernel may be launched as a programmatic dependent on `device` (compute
// capability 9.0 and later: kernels/dependent_launch.cuh); false where the query fails.
inline bool dependent_launch_available(int device) {
  int major = 0;
  return cached_device_attribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
}

}  // namespace decode_bench
