#include "harness/counters/cupti_status.hpp"

#include <cupti_result.h>

namespace decode_bench::counters {

std::string hint_for_cupti_result(int cupti_result) {
  switch (static_cast<CUptiResult>(cupti_result)) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return "GPU performance counters are restricted to admin users: run as root, or load the "
             "nvidia driver with NVreg_RestrictProfilingToAdminUsers=0 "
             "(https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
      return "another profiler holds the GPU counters (Nsight Compute/Systems, DCGM profiling, "
             "another CUPTI client): stop it, or run decode-bench without counters";
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return "counters are not available on a MIG instance: run on a full GPU (MIG disabled)";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
      return "this vGPU does not expose counters: enable profiling for the vGPU or use bare metal";
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
      return "counters are disabled in confidential-computing mode";
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
      return "counters are not supported for this GPU under WSL";
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return "list the metrics this GPU supports with `ncu --query-metrics`";
    default:
      return "";
  }
}

std::string describe_cupti_result(int cupti_result, std::string_view call) {
  const auto code = static_cast<CUptiResult>(cupti_result);
  const char* name = nullptr;
  const char* message = nullptr;
  if (cuptiGetResultString(code, &name) != CUPTI_SUCCESS || !name) name = "unknown CUPTI result";
  std::string out = std::string(call) + " failed: ";
  if (cuptiGetErrorMessage(code, &message) == CUPTI_SUCCESS && message && *message)
    out += std::string(message) + " (" + name + ")";
  else
    out += name;
  const std::string hint = hint_for_cupti_result(cupti_result);
  if (!hint.empty()) out += ". Fix: " + hint;
  return out;
}

void throw_if_cupti_failed(int cupti_result, std::string_view call) {
  if (cupti_result != CUPTI_SUCCESS) throw CounterError(describe_cupti_result(cupti_result, call));
}

}  // namespace decode_bench::counters
