#include "sweeps/point_runner.hpp"

#include <stdexcept>

#include "sweeps/memory_estimate.hpp"

namespace decode_bench::sweeps {

PointRunner::~PointRunner() = default;

std::optional<std::string> PointRunner::cannot_run(const Point&) const { return std::nullopt; }

std::uint64_t PointRunner::device_bytes_needed(const Point& point) const {
  return estimate_device_bytes(point.parameters);
}

RunnerRegistry& RunnerRegistry::global() {
  static RunnerRegistry registry;
  return registry;
}

void RunnerRegistry::add(std::unique_ptr<PointRunner> runner) {
  if (find(runner->name())) throw std::invalid_argument("a runner for kernel '" + runner->name() + "' is already registered");
  runners_.push_back(std::move(runner));
}

PointRunner* RunnerRegistry::find(std::string_view kernel) const {
  for (const auto& r : runners_)
    if (r->name() == kernel) return r.get();
  return nullptr;
}

std::vector<std::string> RunnerRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& r : runners_) out.push_back(r->name());
  return out;
}

}  // namespace decode_bench::sweeps
