#pragma once
// What `decode-bench sweep` plugs into the driver on a real GPU: the kernel
// runners and the harness's device/ceilings measurements; the driver itself never needs them.
#include "sweeps/driver.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

// Registers one runner per kernel of the kernel table (harness/kernel_kind.hpp): cpu_reference,
// baseline, flash_decode, batch_decode, shared_prefix, capacity.
void register_builtin_runners(RunnerRegistry& registry);

// device_info from the CUDA runtime (the results schema's device block), free memory from
// cudaMemGetInfo, ceilings empty until the ceilings harness is wired in.
DriverHooks gpu_driver_hooks(int device);

}  // namespace decode_bench::sweeps
