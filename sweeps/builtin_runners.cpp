#include "sweeps/builtin_runners.hpp"

#include <cuda_runtime.h>

#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/gpu_state.hpp"
#include "sweeps/capacity_runner.hpp"
#include "sweeps/decode_runner.hpp"
#include "sweeps/shared_prefix_runner.hpp"

namespace decode_bench::sweeps {

void register_builtin_runners(RunnerRegistry& registry) {
  registry.add(make_cpu_reference_runner());
  registry.add(make_gpu_decode_runner("baseline"));
  registry.add(make_gpu_decode_runner("flash_decode"));
  // Batched decode is the same split-K kernel over many sequences (grid z = sequence); the name
  // exists so presets can label FlashInfer/vLLM-style batch experiments.
  // With prefix_len > 0 it runs over the forked pages of a shared-prefix batch (the prefix read
  // once per sequence), against which shared_prefix's speedup is measured on the same pool state.
  registry.add(make_batch_decode_runner(make_gpu_decode_runner("batch_decode")));
  // Composable shared-prefix decode: prefix phase (row attention) + suffix phase (batch decode) + merge.
  registry.add(make_shared_prefix_runner());
  // Sequences per memory budget (Figure 5): the exact host simulation, plus real arenas on a GPU.
  registry.add(make_capacity_runner());
}

DriverHooks gpu_driver_hooks(int device) {
  DriverHooks hooks;
  hooks.device_info = [device] { return to_json(query_device_info(device)); };
  // Measured once per run, before any point, so every percentage in the file is against the
  // same machine's own ceiling.
  hooks.ceilings = [device] { return measure_ceilings(device, {}); };
  hooks.gpu_state = [device] { return gpu_state_snapshot(device); };
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
