#include "sweeps/pipeline_runner.hpp"

#include <string>

#include "backends/registry.hpp"
#include "harness/results_schema.hpp"
#include "sweeps/point_problem.hpp"

namespace decode_bench::sweeps {
namespace {

using nlohmann::json;

class PipelineRunner final : public PointRunner {
 public:
  PipelineRunner(KernelKind kernel, std::vector<std::unique_ptr<Backend>> backends, StepsFactory steps)
      : kernel_(kernel), backends_(std::move(backends)), steps_(std::move(steps)) {}

  std::string name() const override { return std::string(kernel_name(kernel_)); }

  // The point's own reasons first (they rule out every backend), then the backend's.
  std::optional<std::string> cannot_run(const Point& point) const override {
    if (auto why = request_unsupported(kernel_, point.parameters)) return why;
    const Backend* backend = find(backend_of(point.parameters));
    if (!backend) return unknown_backend(point);
    const AttentionProblem described = describe_point(kernel_, point.parameters);
    if (auto why = backend->supports(described)) return why;
    if (point.parameters.value("layers", 1) > 1) return backend->layers_unsupported(described);
    return std::nullopt;
  }

  json run(const Point& point, RunContext& ctx) override {
    if (auto why = request_unsupported(kernel_, point.parameters))
      return {{"status", std::string(kStatusSkipped)}, {"reason", *why}};
    Backend* backend = find(backend_of(point.parameters));
    if (!backend) return {{"status", std::string(kStatusSkipped)}, {"reason", unknown_backend(point)}};
    AttentionProblem problem = describe_point(kernel_, point.parameters);
    const std::unique_ptr<PointSteps> steps = steps_(problem, point, ctx);
    return run_point_pipeline(*backend, std::move(problem), *steps, measure_request(point), ctx);
  }

 private:
  Backend* find(const std::string& name) const {
    for (const auto& b : backends_)
      if (b->name() == name) return b.get();
    return nullptr;
  }
  std::string unknown_backend(const Point& point) const {
    std::string names;
    for (const auto& b : backends_) names += (names.empty() ? "" : ", ") + b->name();
    return "backend '" + backend_of(point.parameters) + "' is not registered in this build (registered: " + names + ")";
  }

  KernelKind kernel_;
  std::vector<std::unique_ptr<Backend>> backends_;  // this runner's own instances (runners are per device)
  StepsFactory steps_;
};

}  // namespace

std::unique_ptr<PointRunner> make_pipeline_runner(KernelKind kernel, std::vector<std::unique_ptr<Backend>> backends,
                                                  StepsFactory steps) {
  return std::make_unique<PipelineRunner>(kernel, std::move(backends), std::move(steps));
}

std::unique_ptr<PointRunner> make_kernel_runner(KernelKind kernel) {
  std::vector<std::unique_ptr<Backend>> backends;
  for (const BackendEntry& entry : registered_backends()) backends.push_back(entry.make());
  return make_pipeline_runner(kernel, std::move(backends), gpu_steps_factory());
}

}  // namespace decode_bench::sweeps
