#pragma once
// One sweep over several GPUs of one host (`decode-bench sweep --devices 0,1,... | all`).
//
// Why threads, not child processes: the workers share one plan, one queue, one sidecar, one
// progress display and one interrupt flag, which is a mutex and an atomic in one process but
// a protocol between processes. CUDA keeps the current device per thread and a context per
// device, so a worker that binds its device once sees only its own GPU; a sticky error poisons
// only that device's context, so only that worker stops.
//
//   pending = plan points not already recorded (--resume), longest estimated first
//   worker d (one thread per device): bind device, measure its ceilings, then
//     loop: take the next pending point (atomic index) -> measure_point on device d ->
//           stamp "device": d -> append to the sidecar + progress line (under one mutex)
//     until the queue is empty, Ctrl-C, or a sticky CUDA error on d (that point is recorded;
//     the other workers go on and take the rest)
//   document: points in plan order; "device"/"ceilings" = the first device's (the single-GPU
//   meaning); "devices" = [{index, info, ceilings, points, stop_reason?}] for every device.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sweeps/driver.hpp"
#include "sweeps/plan.hpp"
#include "sweeps/point_runner.hpp"

namespace decode_bench::sweeps {

struct DeviceWorker {
  int device = 0;                           // CUDA index, recorded on every point it measures
  DriverHooks hooks;                        // that device's info, ceilings and free memory
  const RunnerRegistry* runners = nullptr;  // this worker's own (runners keep per-device state)
  std::function<void()> bind_thread;        // first call in the worker thread (cudaSetDevice)
};

// "--devices" text: "all" (0 .. device_count-1) or a comma list of distinct indices below
// device_count. Throws ConfigErrors naming --devices.
std::vector<int> parse_device_list(const std::string& text, int device_count);

// The scheduling estimate: bytes the point touches on the device (sweeps/memory_estimate.hpp),
// plus a fixed per-point cost; cpu_reference points (host-only, slow) count as 100x the bytes
// their GPU run would move. Only the order and the ETA depend on it.
double estimated_point_cost(const Point& point);

// Throws ConfigErrors for no workers, duplicate devices, or an unusable --resume (another GPU
// model on any worker unless options.allow_mixed_devices); std::runtime_error for I/O failures.
SweepOutcome run_sweep_on_devices(const Plan& plan, const std::vector<DeviceWorker>& workers,
                                  const SweepOptions& options);

}  // namespace decode_bench::sweeps
