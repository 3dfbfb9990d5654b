#include "sweeps/layer_step.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "harness/cuda_check.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/phase_timer.hpp"

namespace decode_bench::sweeps {

using nlohmann::json;

// PointSteps' layer hooks: steps that build one layer only (their layers_unsupported says so, and
// the pipeline asks first) never reach these.
std::vector<AttentionProblem> PointSteps::build_layers(const AttentionProblem&, int) {
  throw std::logic_error("build_layers: these point steps build one layer only");
}
LaunchFn PointSteps::capture_step(const std::vector<LaunchFn>&) {
  throw std::logic_error("capture_step: these point steps build one layer only");
}
void PointSteps::checked_step(const LaunchFn&, LseBase) {
  throw std::logic_error("checked_step: these point steps build one layer only");
}
CheckedVerification PointSteps::verify_layer(int) {
  throw std::logic_error("verify_layer: these point steps build one layer only");
}

std::optional<std::string> layers_request_unsupported(int layers, bool end_to_end) {
  if (layers > 1 && end_to_end)
    return "layers " + std::to_string(layers) +
           " with end_to_end: the E2E copies are of one layer's K/V; use end_to_end false or layers 1";
  return std::nullopt;
}

json measure_layers(Backend& backend, const AttentionProblem& problem, PointSteps& steps, const MeasureRequest& request,
                    const TimingOptions& options, double single_launch_us, double plan_us, RunContext& ctx) {
  using Clock = std::chrono::steady_clock;
  const int count = request.layers;
  const auto failed = [](std::string_view status, const std::string& reason) {
    return json{{"status", std::string(status)}, {"reason", reason}};
  };

  // The steps record their own pool_build and data_fill phases, as build() does.
  const std::vector<AttentionProblem> layers = steps.build_layers(problem, count);
  if (static_cast<int>(layers.size()) != count - 1)
    throw std::logic_error("build_layers returned " + std::to_string(layers.size()) + " layers, not " +
                           std::to_string(count - 1));

  // One plan (made before, for layer 0); each further layer only points it at its own data.
  std::vector<LaunchFn> launches{[&backend](cudaStream_t s) { return backend.run(s); }};
  const auto t0 = Clock::now();
  for (int l = 1; l < count; ++l) {
    auto launch = backend.layer_launch(layers[static_cast<std::size_t>(l - 1)]);
    if (!launch) return failed(kStatusError, "backend " + backend.name() + " gave no launch for layer " + std::to_string(l));
    launches.push_back(std::move(launch));
  }
  const double bind_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  const LaunchFn step = steps.capture_step(launches);

  json per_layer = json::array();
  bool passed = true;
  std::string first_failure;
  {
    PhaseTimer phase(ctx.phases, kPhaseVerification);
    steps.checked_step(step, backend.lse_base());
  }
  for (int l = 0; l < count; ++l) {
    CheckedVerification v = steps.verify_layer(l);
    if (problem.io_dtype != DType::fp32)
      judge_at(v.result, verification_tolerance(problem.kv_dtype, problem.io_dtype, problem.variant));
    json entry = v.result.to_json();
    entry.update(v.details);
    per_layer.push_back(std::move(entry));
    if (!v.result.passed && passed) {
      passed = false;
      first_failure = "layer " + std::to_string(l) + " of the graph's step: " + v.result.summary();
    }
  }
  json verification = {{"passed", passed}};
  // The rule, tolerance and method are the point's, not a layer's: written once when every layer
  // has the same (a 32-layer step otherwise repeats the rule's sentence 32 times).
  for (const char* key : {"rule", "tolerance", "method"}) {
    const bool same = std::all_of(per_layer.begin(), per_layer.end(), [&](const json& e) {
      return e.contains(key) && e[key] == per_layer.front()[key];
    });
    if (!same || per_layer.empty()) continue;
    verification[key] = per_layer.front()[key];
    for (json& e : per_layer) e.erase(key);
  }
  verification["per_layer"] = std::move(per_layer);
  json block = {{"count", count}, {"verification", std::move(verification)}};
  if (!passed) {
    json out = failed(kStatusVerificationFailed, first_failure);
    out["layers"] = block;
    return out;
  }

  // The step is one graph launch already: timed with events around it, never nested in a graph.
  TimingOptions step_options = options;
  step_options.graph_threshold_us = 0;
  TimingResult timing;
  {
    PhaseTimer phase(ctx.phases, kPhaseTiming);
    timing = steps.time(step, step_options, false);
  }
  if (!timing.ok()) {
    if (timing.sticky_error) throw CudaError(static_cast<cudaError_t>(timing.cuda_error), request.id + ": " + timing.error);
    json out = failed(kStatusError, "layers step: " + timing.error);
    out["layers"] = block;
    return out;
  }
  const double step_us = timing.stats.median;
  ctx.measured_seconds +=
      step_us * 1e-6 * timing.samples_us.size() * std::max<long long>(1, timing.iterations_per_repetition);
  block["step_us"] = step_us;
  block["per_layer_us"] = step_us / count;
  block["single_launch_us"] = single_launch_us;
  block["per_layer_over_single"] = single_launch_us > 0 ? step_us / count / single_launch_us : 0.0;
  block["plan_us"] = plan_us;
  block["bind_us"] = bind_us;
  block["method"] = options.mode == TimingMode::cold
                        ? "one CUDA graph of the L launches on one stream; L2 flushed before each replay, not between layers"
                        : "one CUDA graph of the L launches on one stream; replays back to back (hot)";
  block["timing"] = timing.to_json();
  json out = {{"status", std::string(kStatusOk)}};
  out["layers"] = std::move(block);
  return out;
}

}  // namespace decode_bench::sweeps
