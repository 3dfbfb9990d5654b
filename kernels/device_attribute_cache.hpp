#pragma once
// Device attributes a plan reads, queried from the driver once per (device, attribute) and then
// served from a table. A serving loop plans every step, and some attributes (the memory clock
// rate the shared-prefix share rule divides by) are driver round trips rather than table reads;
// none of these change while a process runs.
#include <cuda_runtime.h>

namespace decode_bench {

// As cudaDeviceGetAttribute; a failed query is returned and not cached.
cudaError_t cached_device_attribute(int* value, cudaDeviceAttr attr, int device);

// Whether a second kernel may be launched as a programmatic dependent on `device` (compute
// capability 9.0 and later: kernels/dependent_launch.cuh); false where the query fails.
inline bool dependent_launch_available(int device) {
  int major = 0;
  return cached_device_attribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess && major >= 9;
}

}  // namespace decode_bench
