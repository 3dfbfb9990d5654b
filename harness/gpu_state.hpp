#pragma once
// The GPU's operating state at one moment: current SM and memory clocks, temperature, power and
// throttle reasons, and the kernel driver's version. A sweep records one snapshot at its start
// and one at its end (meta.gpu_state), so a slow run can be told apart from a hot or throttled
// GPU after the fact.
//
// Source: NVML, opened at run time with dlopen("libnvidia-ml.so.1") rather than linked
// (CUDA::nvml), so the binary and the host tests still load on machines without a driver (CI).
// Without NVML: cudaDeviceGetAttribute's clock rates, which are the device's peak clocks, not the
// current ones, and no temperature; `source` says which ("nvml" | "cuda_attribute").
#include <nlohmann/json.hpp>

namespace decode_bench {

// {source, time (UTC), sm_clock_mhz, memory_clock_mhz, temperature_c?, power_w?,
//  throttle_reasons?, driver_version?} for CUDA device `device`. Never throws: a failed query
// leaves its field out and adds `error`.
nlohmann::json gpu_state_snapshot(int device);

}  // namespace decode_bench
