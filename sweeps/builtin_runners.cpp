#include "sweeps/builtin_runners.hpp"

#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

#include "harness/ceilings.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/device_memory.hpp"
#include "harness/gpu_state.hpp"
#include "harness/kernel_kind.hpp"
#include "sweeps/capacity_runner.hpp"
#include "sweeps/cpu_reference_runner.hpp"
#include "sweeps/pipeline_runner.hpp"
#include "sweeps/trace_runner.hpp"

namespace decode_bench::sweeps {

namespace {

// The runner of each kernel of the kernel table (harness/kernel_kind.hpp): the table lists the
// kernel axis's values, this switch gives each its runner, so the two cannot drift apart.
std::unique_ptr<PointRunner> make_builtin_runner(KernelKind kernel) {
  switch (kernel) {
    case KernelKind::cpu_reference: return make_cpu_reference_runner();
    // The GPU kernels, through the measurement pipeline and the backend each point names. Batched
    // decode is the same split-K kernel as flash_decode over many sequences; the name exists so
    // presets can label FlashInfer/vLLM-style batch experiments. With prefix_len > 0 it runs over
    // the forked pages of a shared-prefix batch (the prefix read once per sequence), against which
    // shared_prefix's speedup is measured on the same pool state.
    case KernelKind::baseline:
    case KernelKind::flash_decode:
    case KernelKind::batch_decode:
    case KernelKind::shared_prefix: return make_kernel_runner(kernel);
    // Sequences per memory budget (Figure 5): the exact host simulation, plus real arenas on a GPU.
    case KernelKind::capacity: return make_capacity_runner();
    // Continuous batching over a serving trace (sweeps/trace_runner.hpp).
    case KernelKind::trace: return make_trace_runner();
  }
  throw std::logic_error("no runner for kernel " + std::string(kernel_name(kernel)));
}

}  // namespace

void register_builtin_runners(RunnerRegistry& registry) {
  for (const KernelInfo& k : kernel_kinds()) registry.add(make_builtin_runner(k.kind));
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
    // The harness's pool keeps freed memory for the next point (harness/device_memory.hpp); between
    // points none of it is in use. An over-estimate only costs the point a try: a failed allocation
    // skips it with the reason.
    return free + device_pool_reserved_bytes(device);
  };
  return hooks;
}

}  // namespace decode_bench::sweeps
