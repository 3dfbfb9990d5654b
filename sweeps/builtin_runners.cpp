#include "sweeps/builtin_runners.hpp"

#include <cuda_runtime.h>

#include "harness/cuda_check.hpp"

namespace decode_bench::sweeps {

void register_builtin_runners(RunnerRegistry& registry) {
  // The lead registers the kernel runners here, e.g.
  //   registry.add(std::make_unique<FlashDecodeRunner>());
  (void)registry;
}

DriverHooks gpu_driver_hooks(int device) {
  DriverHooks hooks;
  hooks.device_info = [device] {
    cudaDeviceProp prop{};
    DB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    int sm_clock = 0, mem_clock = 0, driver = 0, runtime = 0;
    DB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_clock, cudaDevAttrClockRate, device));
    DB_CUDA_CHECK(cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, device));
    DB_CUDA_CHECK(cudaDriverGetVersion(&driver));
    DB_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    return nlohmann::json{{"name", prop.name},
                          {"index", device},
                          {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
                          {"sm_count", prop.multiProcessorCount},
                          {"l2_bytes", prop.l2CacheSize},
                          {"memory_bytes", prop.totalGlobalMem},
                          {"sm_clock_khz", sm_clock},
                          {"memory_clock_khz", mem_clock},
                          {"driver_version", driver},
                          {"runtime_version", runtime}};
  };
  hooks.ceilings = [] { return nlohmann::json::object(); };
  hooks.free_device_bytes = [device]() -> std::optional<std::uint64_t> {
    std::size_t free = 0, total = 0;
    if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free, &total) != cudaSuccess) {
      cudaGetLastError();
      return std::nullopt;
    }
    return free;
  };
  return hooks;
}

}  // namespace decode_bench::sweeps
