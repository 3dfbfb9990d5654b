#include "sweeps/point_pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <new>

#include "harness/cuda_check.hpp"
#include "harness/nvtx.hpp"
#include "harness/read_floor.hpp"
#include "harness/results_schema.hpp"
#include "harness/verify.hpp"
#include "kernels/mla/mla_point_model.hpp"
#include "kernels/traffic_model.hpp"
#include "kernels/variant_traffic_model.hpp"
#include "sweeps/io_dtype.hpp"
#include "sweeps/layer_step.hpp"
#include "sweeps/mla_bound.hpp"
#include "sweeps/phase_timer.hpp"
#include "sweeps/shared_prefix_bound.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The steps' workspace, timed and summed, so that plan_us is the backend's own host time (the
// harness's allocations and their poisoning left out) and the point records what it asked for.
class CountingWorkspace final : public Workspace {
 public:
  explicit CountingWorkspace(Workspace& inner) : inner_(inner) {}
  void* allocate(std::size_t bytes) override {
    const auto t0 = Clock::now();
    void* p = inner_.allocate(bytes);
    seconds_ += seconds_since(t0);
    bytes_ += bytes;
    return p;
  }
  cudaStream_t stream() const override { return inner_.stream(); }
  double seconds() const { return seconds_; }
  std::size_t bytes() const { return bytes_; }

 private:
  Workspace& inner_;
  double seconds_ = 0;
  std::size_t bytes_ = 0;
};

// The point's roofline bound (sweeps/shared_prefix_bound.hpp) from its model and prefix levels.
// With a window, the prefix rows' tokens are those inside each sequence's window.
json bound_json(const TrafficModel& model, const SharedPrefixLayout& layout, const AttentionVariant& variant,
                const DecodeShape& shape, DType kv_dtype, const json& ceilings, TimingMode mode) {
  return shared_prefix_bound(model.k_bytes + model.v_bytes, shared_prefix_row_tokens(layout, variant), shape.heads_q,
                             shape.head_dim, kv_dtype, ceilings, mode);
}

}  // namespace

TuningPolicy planning_policy(const RunContext& ctx) {
  TuningPolicy policy = ctx.tuning;
  double gbps = 0;
  if (const auto dram = ctx.ceilings.find("dram_read"); dram != ctx.ceilings.end() && dram->is_object())
    if (const auto value = dram->find("value"); value != dram->end() && value->is_number()) gbps = value->get<double>();
  policy.measured_dram_read_bytes_per_s = std::isfinite(gbps) && gbps > 0 ? gbps * 1e9 : 0.0;
  return policy;
}

BackendTrafficModel minimum_traffic_model(const AttentionProblem& p) {
  BackendTrafficModel m;
  if (p.mla) {
    std::vector<std::int32_t> pages_per_seq;
    for (std::size_t b = 0; p.layout == KvLayoutKind::paged && b + 1 < p.host_indptr.size(); ++b)
      pages_per_seq.push_back(p.host_indptr[b + 1] - p.host_indptr[b]);
    m.model = mla_point_traffic_model(*p.mla, p.kv_dtype, p.host_seq_lens, pages_per_seq);
    m.basis = "mla_latent_once";
    return m;
  }
  if (p.prefix) {
    m.model = shared_prefix_traffic_model(p.shape, p.kv_dtype, *p.prefix, true, 1, p.variant);
    m.basis = "shared_prefix_unique_bytes";
  } else {
    std::vector<std::int32_t> pages_per_seq;
    for (std::size_t b = 0; p.layout == KvLayoutKind::paged && b + 1 < p.host_indptr.size(); ++b)
      pages_per_seq.push_back(p.host_indptr[b + 1] - p.host_indptr[b]);
    m.model = decode_traffic_model(DecodeKernel::flash_decode, p.shape, p.kv_dtype, p.host_seq_lens, pages_per_seq, 1);
    m.basis = "decode_min_bytes";
  }
  // The attention variants read the window's tokens only and q_len query rows a sequence (a
  // shared-prefix batch: counted so above).
  if (!p.variant.plain() && !p.prefix) {
    m.model = variant_traffic_model(p.shape, p.kv_dtype, p.host_seq_lens,
                                    p.layout == KvLayoutKind::paged ? p.paged.page_size : 0, p.variant);
    m.basis = "decode_variant_min_bytes";
  }
  m.model.extra_bytes = 0;
  return m;
}

json run_point_pipeline(Backend& backend, AttentionProblem problem, PointSteps& steps, const MeasureRequest& request,
                        RunContext& ctx) {
  json result;
  result["backend"] = {{"name", backend.name()}, {"version", backend.version()}};
  const auto finish = [&](std::string_view status, const std::string& reason) {
    result["status"] = std::string(status);
    result["reason"] = reason;
    return result;
  };

  if (auto why = backend.supports(problem)) return finish(kStatusSkipped, *why);
  problem.tuning = planning_policy(ctx);
  problem.io_dtype = backend.io_dtype(problem);
  problem.denominator_sums_rounded_weights = backend.denominator_sums_rounded_weights();
  if (auto why = io_dtype_unsupported(problem.io_dtype)) return finish(kStatusSkipped, "backend " + backend.name() + " " + *why);
  if (problem.io_dtype != DType::fp32 && request.end_to_end)
    return finish(kStatusSkipped, "end_to_end copies q and o in fp32; backend " + backend.name() + " reads and writes " +
                                      std::string(dtype_name(problem.io_dtype)));
  if (request.layers > 1) {
    if (auto why = layers_request_unsupported(request.layers, request.end_to_end)) return finish(kStatusSkipped, *why);
    if (auto why = steps.layers_unsupported()) return finish(kStatusSkipped, "layers " + std::to_string(request.layers) + ": " + *why);
    if (auto why = backend.layers_unsupported(problem)) return finish(kStatusSkipped, *why);
  }
  result["backend"]["io_dtype"] = std::string(dtype_name(problem.io_dtype));
  if (problem.io_dtype != DType::fp32) result["backend"]["io_conversion"] = "host, outside timing";
  if (backend.lse_base() != LseBase::natural)
    result["backend"]["lse_conversion"] = "base " + std::string(lse_base_name(backend.lse_base())) +
                                          " to natural, host, outside timing";

  {
    NvtxRange range("build " + request.id);
    steps.build(problem);
  }
  if (json pool = steps.pool_record(); !pool.is_null()) result["pool"] = std::move(pool);

  // 1. Plan and verify: poisoned outputs, the plan, one launch, every output against the reference.
  const LaunchFn launch = [&backend](cudaStream_t s) { return backend.run(s); };
  CheckedVerification verification;
  {
    NvtxRange range("verify " + request.id);
    {
      PhaseTimer phase(ctx.phases, kPhaseVerification);
      steps.poison_outputs();
    }
    CountingWorkspace workspace(steps.workspace());
    const auto t0 = Clock::now();
    try {
      backend.plan(problem, workspace);
    } catch (const CudaError&) {
      throw;  // the driver's rules: out of memory -> skipped, sticky -> the sweep stops
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      return finish(kStatusError, "backend " + backend.name() + " plan: " + e.what());
    }
    result["backend"]["plan_us"] = std::max(0.0, seconds_since(t0) - workspace.seconds()) * 1e6;
    result["backend"]["workspace_bytes"] = workspace.bytes();
    {
      PhaseTimer phase(ctx.phases, kPhaseVerification);
      steps.checked_launch(launch, backend.lse_base());
    }
    verification = steps.verify();
    // o rounded to a 16-bit io dtype: that type's rule at least (harness/verify.hpp). The MLA
    // verifier applies it itself, with its ratios scaled to it (sweeps/mla_verify.hpp).
    if (problem.io_dtype != DType::fp32 && !problem.mla)
      judge_at(verification.result, verification_tolerance(problem.kv_dtype, problem.io_dtype, problem.variant));
  }
  const BackendTrafficModel model = backend.traffic_model(problem).value_or(minimum_traffic_model(problem));
  result["verification"] = verification.result.to_json();
  result["verification"].update(verification.details);
  result["model"] = model.model.to_json(model.basis.c_str());
  result["plan"] = backend.plan_json();
  if (problem.mla) {
    result["model"]["latent_bytes"] = model.model.k_bytes;  // k_bytes: the latent rows (key and value)
    result["bound"] = mla_bound(model.model.minimum_bytes(), model.model.flops, problem.kv_dtype, ctx.ceilings);
  }
  if (problem.prefix) result["bound"] = bound_json(model.model, *problem.prefix, problem.variant, problem.shape, problem.kv_dtype, ctx.ceilings,
                                                      request.timing);
  if (!verification.result.passed) return finish(kStatusVerificationFailed, verification.result.summary());

  // 2. Time: the launch alone, or (end_to_end) with the host copies around it.
  TimingOptions options = ctx.timing;  // the run's timing flags (--repetitions, --max-cv, ...)
  options.mode = request.timing;
  TimingResult timing;
  {
    PhaseTimer phase(ctx.phases, kPhaseTiming);
    timing = steps.time(launch, options, request.end_to_end);
  }
  if (!timing.ok()) {
    if (timing.sticky_error) throw CudaError(static_cast<cudaError_t>(timing.cuda_error), request.id + ": " + timing.error);
    return finish(kStatusError, timing.error);
  }
  if (auto why = steps.capture_block_timeline(launch)) result["block_timeline_error"] = *why;
  const double median = timing.stats.median;
  result["status"] = std::string(kStatusOk);
  result["timing"] = timing.to_json();
  ctx.measured_seconds +=
      median * 1e-6 * timing.samples_us.size() * std::max<long long>(1, timing.iterations_per_repetition);
  result["achieved"] = achieved_rates(model.model.minimum_bytes(), model.model.flops, median, ctx.ceilings, options.mode);
  if (problem.mla)
    add_mla_bound_ratios(result["bound"], result["achieved"], median);
  else if (result.contains("bound"))
    add_bound_ratios(result["bound"], median);

  // 2b. A decode step of L layers under the same plan, beside the single launch.
  if (request.layers > 1) {
    json step = measure_layers(backend, problem, steps, request, options, median,
                               result["backend"]["plan_us"].get<double>(), ctx);
    if (step.contains("layers")) result["layers"] = step["layers"];
    if (step["status"] != kStatusOk) return finish(step["status"].get<std::string>(), step["reason"].get<std::string>());
  }

  // 3. Count: a separate profiled pass (never the timed one), on one stream, L2 flushed before
  // each replay; the E2E copies are not a kernel to count.
  if (!request.end_to_end && request.counters) {
    PhaseTimer phase(ctx.phases, kPhaseCounters);
    result["counters"] =
        steps.counters([&backend](cudaStream_t s) { return backend.run_serial(s); }, result["model"], options.mode);
  }
  return result;
}

}  // namespace decode_bench::sweeps
