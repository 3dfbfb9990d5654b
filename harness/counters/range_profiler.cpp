// The CUPTI Range Profiler driven for one launch at a time. Order of calls (CUPTI 13 docs,
// "Range Profiling API"): host side once (chip name, counter availability, config image);
// per profile(): enable on the context, counter-data image, set config, Start/[Push]/launch/
// [Pop]/Stop until every pass is submitted, decode, evaluate each range, disable.
#include "harness/counters/range_profiler.hpp"

#include <cstdint>
#include <mutex>

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "harness/counters/cupti_status.hpp"
#include "harness/cuda_check.hpp"
#include "harness/device_query.hpp"

namespace decode_bench::counters {
namespace {

using nlohmann::json;

// CUPTI parameter structs: zeroed, with structSize set (CUPTI checks it for compatibility).
template <typename Params>
Params cupti_params(std::size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}

// The driver API is reached through the runtime's entry-point query, so the library does not
// link libcuda.so and host-only machines can still load every test binary.
using CuCtxGetCurrentFn = CUresult (*)(CUcontext*);
using CuDeviceGetFn = CUresult (*)(CUdevice*, int);

template <typename Fn>
Fn driver_entry_point(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  const cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &status);
  if (err != cudaSuccess || status != cudaDriverEntryPointSuccess || !fn)
    throw CounterError(std::string("cannot resolve driver entry point ") + symbol);
  return reinterpret_cast<Fn>(fn);
}

void initialize_cupti_profiler_once() {
  static std::once_flag once;
  static CUptiResult result = CUPTI_SUCCESS;
  std::call_once(once, [] {
    auto p = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    result = cuptiProfilerInitialize(&p);
  });
  throw_if_cupti_failed(result, "cuptiProfilerInitialize");
}

std::string support_level_problem(const CUpti_Profiler_DeviceSupported_Params& p) {
  auto bad = [](CUpti_Profiler_Support_Level l) { return l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED; };
  if (bad(p.architecture)) return "the GPU architecture is not supported by the CUPTI range profiler";
  if (bad(p.vGpu)) return "this vGPU does not expose counters (enable profiling for the vGPU or use bare metal)";
  if (bad(p.confidentialCompute)) return "counters are disabled in confidential-computing mode";
  if (bad(p.cmp)) return "counters are not supported on CMP (crypto-mining) GPUs";
  if (bad(p.sli)) return "counters are not supported with SLI enabled";
  if (bad(p.wsl)) return "counters are not supported for this GPU under WSL";
  return "CUPTI reports the device as not supported for range profiling (MIG instances are not supported)";
}

}  // namespace

struct RangeProfiler::Impl {
  int device = 0;
  CUcontext context = nullptr;
  RangeProfilerOptions options;
  std::string chip;
  std::vector<std::string> metrics;
  std::vector<const char*> metric_ptrs;  // into `metrics`
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<std::uint8_t> config_image;
  std::size_t passes = 0;

  ~Impl() {
    if (host) {
      auto p = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      p.pHostObject = host;
      cuptiProfilerHostDeinitialize(&p);
    }
  }

  std::size_t max_ranges() const {
    return options.range_mode == RangeMode::per_kernel ? options.max_kernels_per_launch : 1;
  }

  // Which metric the host API rejects, for a message naming it.
  std::string first_unknown_metric() const {
    for (const auto& m : metrics) {
      auto p = cupti_params<CUpti_Profiler_Host_GetMetricProperties_Params>(CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE);
      p.pHostObject = host;
      p.pMetricName = m.c_str();
      if (cuptiProfilerHostGetMetricProperties(&p) != CUPTI_SUCCESS) return m;
    }
    return "";
  }

  void build_host_config(const std::vector<std::uint8_t>& availability) {
    auto init = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    init.pCounterAvailabilityImage = availability.data();
    throw_if_cupti_failed(cuptiProfilerHostInitialize(&init), "cuptiProfilerHostInitialize");
    host = init.pHostObject;

    auto add = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = host;
    add.ppMetricNames = metric_ptrs.data();
    add.numMetrics = metric_ptrs.size();
    if (const CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) {
      const std::string bad = first_unknown_metric();
      throw CounterError(describe_cupti_result(r, "cuptiProfilerHostConfigAddMetrics") +
                         (bad.empty() ? "" : " (metric '" + bad + "' is not known on chip " + chip + ")"));
    }

    auto size = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = host;
    throw_if_cupti_failed(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    config_image.resize(size.configImageSize);

    auto image = cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
    image.pHostObject = host;
    image.configImageSize = config_image.size();
    image.pConfigImage = config_image.data();
    throw_if_cupti_failed(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");

    auto np = cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    np.configImageSize = config_image.size();
    np.pConfigImage = config_image.data();
    throw_if_cupti_failed(cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
    passes = np.numOfPasses;
  }
};

namespace {

// Enables the range profiler on the context for one profile() call; disables it on every exit.
class EnabledProfiler {
 public:
  explicit EnabledProfiler(CUcontext ctx) {
    auto p = cupti_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
    p.ctx = ctx;
    throw_if_cupti_failed(cuptiRangeProfilerEnable(&p), "cuptiRangeProfilerEnable");
    object_ = p.pRangeProfilerObject;
  }
  ~EnabledProfiler() {
    auto p = cupti_params<CUpti_RangeProfiler_Disable_Params>(CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object_;
    cuptiRangeProfilerDisable(&p);
  }
  EnabledProfiler(const EnabledProfiler&) = delete;
  EnabledProfiler& operator=(const EnabledProfiler&) = delete;
  CUpti_RangeProfiler_Object* get() const { return object_; }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

std::vector<std::uint8_t> counter_availability(CUcontext ctx) {
  auto p = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  p.ctx = ctx;
  throw_if_cupti_failed(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  std::vector<std::uint8_t> image(p.counterAvailabilityImageSize);
  p.pCounterAvailabilityImage = image.data();
  throw_if_cupti_failed(cuptiProfilerGetCounterAvailability(&p), "cuptiProfilerGetCounterAvailability");
  return image;
}

}  // namespace

RangeProfiler::RangeProfiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RangeProfiler::RangeProfiler(RangeProfiler&&) noexcept = default;
RangeProfiler& RangeProfiler::operator=(RangeProfiler&&) noexcept = default;
RangeProfiler::~RangeProfiler() = default;

const std::vector<std::string>& RangeProfiler::metrics() const { return impl_->metrics; }
std::size_t RangeProfiler::passes() const { return impl_->passes; }
const std::string& RangeProfiler::chip() const { return impl_->chip; }

// CUPTI's profiler keeps process-wide state; sessions on several GPUs from several threads (sweep
// --devices) take turns rather than rely on it being reentrant.
namespace {
std::mutex& cupti_session_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

std::variant<RangeProfiler, std::string> RangeProfiler::create(int device, std::vector<std::string> metrics,
                                                               RangeProfilerOptions options) {
  const std::lock_guard turn(cupti_session_mutex());
  const std::string prefix = "hardware counters unavailable: ";
  if (const auto reason = device_unavailable_reason(device)) return prefix + *reason;
  if (metrics.empty()) return prefix + "no metrics requested";
  if (options.max_kernels_per_launch == 0) return prefix + "max_kernels_per_launch must be > 0";
  try {
    auto impl = std::make_unique<Impl>();
    impl->device = device;
    impl->options = options;
    impl->metrics = std::move(metrics);
    for (const auto& m : impl->metrics) impl->metric_ptrs.push_back(m.c_str());

    DB_CUDA_CHECK(cudaSetDevice(device));
    DB_CUDA_CHECK(cudaFree(nullptr));  // creates the primary context
    DB_CUDA_CHECK(cudaDeviceSynchronize());
    if (driver_entry_point<CuCtxGetCurrentFn>("cuCtxGetCurrent")(&impl->context) != CUDA_SUCCESS || !impl->context)
      return prefix + "no current CUDA context after cudaFree(0)";
    CUdevice cu_device{};
    if (driver_entry_point<CuDeviceGetFn>("cuDeviceGet")(&cu_device, device) != CUDA_SUCCESS)
      return prefix + "cuDeviceGet failed for device " + std::to_string(device);

    initialize_cupti_profiler_once();

    auto supported = cupti_params<CUpti_Profiler_DeviceSupported_Params>(CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    supported.cuDevice = cu_device;
    supported.api = CUPTI_PROFILER_RANGE_PROFILING;
    throw_if_cupti_failed(cuptiProfilerDeviceSupported(&supported), "cuptiProfilerDeviceSupported");
    if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return prefix + support_level_problem(supported);

    auto chip = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<std::size_t>(device);
    throw_if_cupti_failed(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName");
    impl->chip = chip.pChipName;

    // Availability is read before any range profiler is enabled: CUPTI refuses it during a session.
    impl->build_host_config(counter_availability(impl->context));

    // Privilege problems and other profilers surface here rather than in the first profile().
    { EnabledProfiler probe(impl->context); }

    return RangeProfiler(std::move(impl));
  } catch (const std::exception& e) {
    return prefix + e.what();
  }
}

json RangeProfiler::profile(const std::function<cudaError_t(cudaStream_t)>& launch, cudaStream_t stream,
                            const std::function<void(cudaStream_t)>& before_pass) {
  const std::lock_guard turn(cupti_session_mutex());
  Impl& s = *impl_;
  DB_CUDA_CHECK(cudaSetDevice(s.device));
  DB_CUDA_CHECK(cudaDeviceSynchronize());
  EnabledProfiler enabled(s.context);
  const std::size_t max_ranges = s.max_ranges();
  const bool per_kernel = s.options.range_mode == RangeMode::per_kernel;

  auto size = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = enabled.get();
  size.pMetricNames = s.metric_ptrs.data();
  size.numMetrics = s.metric_ptrs.size();
  size.maxNumOfRanges = max_ranges;
  size.maxNumRangeTreeNodes = static_cast<std::uint32_t>(max_ranges);
  throw_if_cupti_failed(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
  std::vector<std::uint8_t> counter_data(size.counterDataSize);

  auto init = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = enabled.get();
  init.counterDataSize = counter_data.size();
  init.pCounterData = counter_data.data();
  throw_if_cupti_failed(cuptiRangeProfilerCounterDataImageInitialize(&init),
                        "cuptiRangeProfilerCounterDataImageInitialize");

  auto config = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  config.pRangeProfilerObject = enabled.get();
  config.configSize = s.config_image.size();
  config.pConfig = s.config_image.data();
  config.counterDataImageSize = counter_data.size();
  config.pCounterDataImage = counter_data.data();
  config.range = per_kernel ? CUPTI_AutoRange : CUPTI_UserRange;
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = max_ranges;
  config.numNestingLevels = 1;
  config.minNestingLevel = 1;
  config.passIndex = 0;
  config.targetNestingLevel = 1;
  throw_if_cupti_failed(cuptiRangeProfilerSetConfig(&config), "cuptiRangeProfilerSetConfig");

  // One iteration per hardware pass. The flush runs before Start, outside the session, so in
  // auto range mode it is not itself profiled.
  constexpr std::size_t kMaxPasses = 256;  // a metric set needing more is a bug, not a workload
  std::size_t pass = 0;
  bool all_submitted = false;
  while (!all_submitted) {
    if (pass == kMaxPasses) throw CounterError("range profiler did not finish after " + std::to_string(pass) + " passes");
    before_pass(stream);
    DB_CUDA_CHECK(cudaStreamSynchronize(stream));
    auto start = cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = enabled.get();
    throw_if_cupti_failed(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    if (!per_kernel) {
      auto push = cupti_params<CUpti_RangeProfiler_PushRange_Params>(CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE);
      push.pRangeProfilerObject = enabled.get();
      push.pRangeName = "launch";
      throw_if_cupti_failed(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
    }
    DB_CUDA_CHECK(launch(stream));
    DB_CUDA_CHECK(cudaStreamSynchronize(stream));
    if (!per_kernel) {
      auto pop = cupti_params<CUpti_RangeProfiler_PopRange_Params>(CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE);
      pop.pRangeProfilerObject = enabled.get();
      throw_if_cupti_failed(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
    }
    auto stop = cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = enabled.get();
    throw_if_cupti_failed(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
    all_submitted = stop.isAllPassSubmitted != 0;
    ++pass;
  }

  auto decode = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = enabled.get();
  throw_if_cupti_failed(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  if (decode.numOfRangeDropped > 0)
    throw CounterError(std::to_string(decode.numOfRangeDropped) + " range(s) dropped: the launch ran more than " +
                       std::to_string(max_ranges) + " kernels (raise RangeProfilerOptions::max_kernels_per_launch)");

  auto info = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = counter_data.data();
  info.counterDataImageSize = counter_data.size();
  throw_if_cupti_failed(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges == 0) throw CounterError("the profiled launch ran no kernel (0 ranges collected)");

  std::vector<std::map<std::string, double>> ranges;
  std::vector<double> values(s.metric_ptrs.size());
  for (std::size_t r = 0; r < info.numTotalRanges; ++r) {
    auto eval = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = s.host;
    eval.pCounterDataImage = counter_data.data();
    eval.counterDataImageSize = counter_data.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = s.metric_ptrs.data();
    eval.numMetrics = s.metric_ptrs.size();
    eval.pMetricValues = values.data();
    throw_if_cupti_failed(cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");
    std::map<std::string, double> range;
    for (std::size_t m = 0; m < s.metrics.size(); ++m) range[s.metrics[m]] = values[m];
    ranges.push_back(std::move(range));
  }

  json raw = json::object();
  for (const auto& [name, value] : combine_kernel_ranges(ranges)) raw[name] = value;
  return {{"raw", std::move(raw)},
          {"passes", pass},
          {"ranges", info.numTotalRanges},
          {"range_mode", per_kernel ? "per_kernel" : "whole_launch"},
          {"chip", s.chip}};
}

}  // namespace decode_bench::counters
