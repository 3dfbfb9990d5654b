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
#include <string>

#include <nlohmann/json.hpp>

namespace decode_bench {

// {source, time (UTC), sm_clock_mhz, memory_clock_mhz, temperature_c?, power_w?,
//  throttle_reasons?, driver_version?} for CUDA device `device`. Never throws: a failed query
// leaves its field out and adds `error`.
nlohmann::json gpu_state_snapshot(int device);

// What in a snapshot's throttle_reasons makes its timings incomparable with an unthrottled run,
// as words with the mask ("hardware slowdown, hardware power brake (NVML throttle reasons 0x88)"),
// or "" when none of those bits is set or the snapshot has no mask. Counted: hardware slowdown
// (0x8), software thermal (0x20), hardware thermal (0x40), hardware power brake (0x80); not the
// idle, application-clock, power-cap and sync-boost bits, which a healthy GPU under load shows. An
// H100 in hardware slowdown and power brake (0x88) ran the whole h100 preset at half its DRAM
// bandwidth with nothing else amiss (2026-11-23).
std::string gpu_slowdown_reason(const nlohmann::json& snapshot);

}  // namespace decode_bench
